"""How the agents move at a web table (:class:`AgentMoves`, a part of
:class:`~training.web.session.GameSession`): a move is prepared under the session's lock, thought
without it (here, or by the game's copy in an agent process: :class:`Exchange`), then applied if
the game has not changed meanwhile; and what an agent would play for a person (a hint)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from agents.base import Agent
from five_hundred_env.actions import action_to_str
from training.web.errors import GameError, conflict
from training.web.thinkers import GameSetup

MAX_HINT_AGENTS = 4
"""How many hint agents (one per spec asked for) a game keeps."""


class Exchange:
    """The agents' moves from a game's copy elsewhere (:meth:`AgentMoves.prepare_move`): the moves
    made since the last exchange, or, for a copy not yet made (or one that went astray), the game's
    setup and all its ``count`` moves; at most ``most`` of the agents' moves come back. Called, it
    asks on the calling thread (``session.agents_elsewhere``); :meth:`ask` asks from the event loop."""

    def __init__(self, session: AgentMoves, setup: GameSetup, base: int | None, count: int, most: int) -> None:
        self.session, self.setup, self.base, self.count, self.most = session, setup, base, count, most
        self.since = session.actions[base or 0:count]

    def __call__(self) -> list[int]:
        elsewhere = self.session.agents_elsewhere
        assert elsewhere is not None
        game_id = self.session.id
        moves = None if self.base is None else elsewhere(game_id, None, self.base, self.since, self.most)
        if moves is None:  # no copy there at that move yet
            moves = elsewhere(game_id, self.setup, 0, self.session.actions[:self.count], self.most)
        return self._done(moves)

    async def ask(self, elsewhere: Callable[[str, GameSetup | None, int, list[int], int],
                                            Awaitable[list[int] | None]]) -> list[int]:
        """The moves, asked of ``elsewhere`` (:meth:`~training.web.thinkers.AgentProcesses.ask`) on the event loop."""
        game_id = self.session.id
        moves = None if self.base is None else await elsewhere(game_id, None, self.base, self.since, self.most)
        if moves is None:
            moves = await elsewhere(game_id, self.setup, 0, self.session.actions[:self.count], self.most)
        return self._done(moves)

    def _done(self, moves: list[int] | None) -> list[int]:
        assert moves is not None
        with self.session.lock:
            self.session._told = self.count + len(moves)
        return moves


class AgentMoves:
    """The agents' moves of a :class:`~training.web.session.GameSession` (a base of it, working on
    its game, its agents and its lock)."""

    def prepare_move(self) -> tuple[int, Callable[[], list[int]]] | None:
        """If an agent (or the record) is to move now: the revision it moves at and a function that
        thinks of its move, to be called without the lock: the moves (universal action ids) to
        apply in turn with :meth:`finish_move` (one, or with the agents elsewhere all those due at
        once: a round of the table at pace 0; that function is then an :class:`Exchange`, which the
        event loop may :meth:`~Exchange.ask` instead); else ``None``."""
        with self.lock:
            if not self.agent_to_move():
                return None
            if self.mode == "replay":
                action = self.script[len(self.actions)]
                return self.revision, lambda: [action]
            if self.agents_elsewhere is not None:
                return self.revision, self._think_elsewhere(len(self.actions))
            seat = self.game.to_act
            observation = self.encoder.encode_turn(self.game.deal, self.table, self.game.scores)
            agent = self._agent(seat)
            return self.revision, lambda: [self.table.universal[int(agent.act(observation))]]

    def _think_elsewhere(self, count: int) -> Exchange:
        """(Under the lock.) The exchange with the game's copy elsewhere once told of the game's
        ``count`` moves."""
        most = self.rules.num_players if self.pace == 0 and self.steps == 0 else 1
        setup = GameSetup(self.rules, self.seed, self.game.max_deals, self.first_deal, tuple(self.specs))
        return Exchange(self, setup, self._told, count, most)

    def finish_move(self, revision: int, actions: Sequence[int]) -> bool:
        """Apply the moves from :meth:`prepare_move` in turn, each unless the game changed
        meanwhile (or an agent should no longer move: paused, stopped); returns whether all were."""
        with self.lock:
            for action in actions:
                if revision != self.revision or not self.agent_to_move():
                    self._told = None  # the copy elsewhere played on: it is made anew at the next exchange
                    return False
                if action not in self.game.legal_actions():
                    self.fail(f"{self.names[self.game.to_act]}'s agent chose an illegal action "
                              f"{action_to_str(action, self.rules)}")
                    return False
                self.steps = max(0, self.steps - 1)
                self._apply(action)
                revision = self.revision
            return True

    def fail(self, message: str) -> None:
        """An agent failed: the game stops here with the message shown (nothing is lost)."""
        with self.lock:
            self.error = message
            self._changed()

    def _agent(self, seat: int) -> Agent:
        agent = self._agents.get(seat)
        if agent is None:
            spec = self.specs[seat]
            assert spec is not None
            agent = self._agents[seat] = self.menu.build(spec, self.rules, (self.seed + seat) % 2**32)
        return agent

    def hint(self, seat: int | None, spec: str) -> dict[str, str]:
        """What the agent ``spec`` (one of the menu's) would play for the person at ``seat`` now:
        ``{"agent", "action"}``."""
        try:
            spec = self.menu.check(spec, self.rules)
        except ValueError as e:
            raise GameError(str(e)) from None
        with self.lock:
            if self.mode != "play":
                raise conflict("a hint is for a person at the table")
            self._check_running()
            if self.game.to_act != seat:
                raise conflict(f"it is not your turn: {self.public.names[self.game.to_act]} is to act")
            observation = self.encoder.encode_turn(self.game.deal, self.table, self.game.scores)
        with self._hint_lock:  # one hint at a time: an agent object thinks for one caller
            agent = self._hint_agents.get(spec)
            if agent is None:
                if len(self._hint_agents) >= MAX_HINT_AGENTS:  # the oldest goes: a page cannot pile up agents
                    del self._hint_agents[next(iter(self._hint_agents))]
                agent = self._hint_agents[spec] = self.menu.build(spec, self.rules, self.seed % 2**32)
            action = int(agent.act(observation))
        return {"agent": spec, "action": self.table.to_str(action)}


__all__ = ["MAX_HINT_AGENTS", "AgentMoves", "Exchange"]
