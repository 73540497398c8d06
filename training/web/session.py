"""One game at the web table (:class:`GameSession`): the game, its seats, what each seat has heard.

A session is one of three modes: ``play`` (a person at one seat, agents at the others),
``watch`` (agents at every seat, every hand shown, played or stepped on request) and ``replay``
(a record's actions in turn, like watch). Its moves come from the person (:meth:`GameSession.play`)
or, off the request path, from the agents (:meth:`GameSession.prepare_move`, whose thinking runs
without the session's lock, here or in an agent process, then :meth:`GameSession.finish_move`). Everything is deterministic
from the session's secret seed and its actions, so :meth:`GameSession.to_json` keeps only those
(and the settings) and :meth:`GameSession.from_json` plays them again after a restart.
"""

from __future__ import annotations

import random
import threading
import time
import zlib
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import orjson

from agents.base import Agent
from agents.registry import agent_factory
from five_hundred_env.actions import ActionTable, action_card, action_to_str, is_card_action, parse_action
from five_hundred_env.engine import Deal, Game, Phase
from five_hundred_env.observation import ObservationEncoder
from five_hundred_env.records import record_of, replay_start
from five_hundred_env.render import explain_illegal, trick_result, win_reason
from five_hundred_env.rules import Rules
from training.table.terminal import announcement, deal_summary
from training.web.thinkers import GameSetup
from training.web.view import PublicTable, SeatViews, card_json

MODES = ("play", "watch", "replay")
LENGTHS = ("game", "deal")
SESSION_FORMAT = "five-hundred-web-game/1"
LOG_LINES = 60
"""How many of the latest log lines a view carries."""
MAX_HINT_AGENTS = 4
"""How many hint agents (one per spec asked for) a game keeps."""
TRICK_PAUSE, DEAL_PAUSE = 2.0, 4.0
"""The pause after a finished trick and after a finished deal, in units of the session's pace."""
CRC_PIECE = 5 * 1024
"""The longest buffer ``zlib.crc32`` reads holding the interpreter's lock (CPython 3.11-3.13)."""


def crc32_holding_lock(data: bytes) -> int:
    """``zlib.crc32(data)``, computed 5 KiB at a time: on a longer buffer zlib lets go of the
    interpreter's lock, and the event loop building a view then waits for a worker thread to give
    it back (up to the switch interval, 5 ms) — the views of a deal's last tricks are that long."""
    view, crc = memoryview(data), 0
    for start in range(0, len(data), CRC_PIECE):
        crc = zlib.crc32(view[start:start + CRC_PIECE], crc)
    return crc


class GameError(Exception):
    """A request the game refuses, with the HTTP status that says why (the game is unchanged)."""

    status = 400

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        if status is not None:
            self.status = status


def conflict(message: str) -> GameError:
    """A request that does not fit the game's state now (409): out of turn, the game over …"""
    return GameError(message, 409)


class Exchange:
    """The agents' moves from a game's copy elsewhere (:meth:`GameSession.prepare_move`): the moves
    made since the last exchange, or, for a copy not yet made (or one that went astray), the game's
    setup and all its ``count`` moves; at most ``most`` of the agents' moves come back. Called, it
    asks on the calling thread (``session.agents_elsewhere``); :meth:`ask` asks from the event loop."""

    def __init__(self, session: GameSession, setup: GameSetup, base: int | None, count: int, most: int) -> None:
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


class GameSession:
    """A game at the web table. ``agents`` gives each seat's agent spec (``None`` for the person's
    seat ``seat`` in ``play`` mode); ``length`` is ``"game"`` (to 500) or ``"deal"``; ``seed``
    draws the deals and seeds the agents (keep it secret: it decides the cards); ``pace`` is the
    seconds between the agents' moves. ``record``: the record a ``replay`` session plays.
    ``first_deal`` sets the first deal instead of shuffling it (tests)."""

    def __init__(self, game_id: str, rules: Rules, *, mode: str = "play", seat: int | None = 0,
                 agents: Sequence[str | None] = (), length: str = "game", seed: int = 0, pace: float = 0.0,
                 record: dict[str, Any] | None = None, first_deal: Deal | None = None) -> None:
        n = rules.num_players
        if mode not in MODES:
            raise GameError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
        if length not in LENGTHS:
            raise GameError(f"length must be 'game' (to {rules.target}) or 'deal', got {length!r}")
        if mode == "play" and (not isinstance(seat, int) or not 0 <= seat < n):
            raise GameError(f"seat must be one of the seats 0..{n - 1} of {rules.preset}, got {seat!r}")
        self.id, self.rules, self.mode, self.length, self.seed, self.pace = game_id, rules, mode, length, seed, pace
        self.seat = seat if mode == "play" else None
        self.record = record
        self.first_deal = first_deal
        self.script: list[int] = []
        if mode == "replay":
            if record is None:
                raise GameError("a replay needs a record")
            self.game, played = replay_start(record)
            self.script = [a for deal in played for a in deal.history]
            self.specs: list[str | None] = [None] * n
        else:
            specs = list(agents)
            if len(specs) != n:
                raise GameError(f"give one agent per seat ({n} for {rules.preset}), got {len(specs)}")
            for s in range(n):
                if s == self.seat:
                    specs[s] = None
                elif not isinstance(specs[s], str) or not specs[s]:
                    raise GameError(f"seat {s} needs an agent spec (e.g. heuristic, pretrained, pimc:worlds=8)")
            self.specs = specs
            max_deals = 1 if length == "deal" else None
            self.game = (Game(rules, first_deal=first_deal, rng=random.Random(seed), max_deals=max_deals)
                         if first_deal is not None else Game(rules, seed=seed, max_deals=max_deals))
        self.names = [f"player_{s}" for s in range(n)]
        self.labels = [None if spec is None else agent_factory(spec).label for spec in self.specs]
        if mode == "replay":
            self.labels = ["record"] * n
        self.encoder = ObservationEncoder(rules)
        self._rules_text = rules.describe()
        self.table = ActionTable(rules)
        self.views = SeatViews(rules)
        self.public = PublicTable(names=self.names, agents=self.labels, scores=list(self.game.scores), deal_number=1)
        self.events: list[dict[str, Any]] = []
        self._heard: deque[str] = deque(maxlen=LOG_LINES)
        """The latest log lines as the viewer heard them (a spectator hears everything), kept as the
        events come rather than sought among them for every view."""
        self.actions: list[int] = []
        self.revision = 0
        """Counts every change (actions, pause, play, errors): what a waiting client watches."""
        self.on_change: Callable[[str], None] | None = None
        """Called with the game's id after every change (from whichever thread made it)."""
        self.paused = mode != "play"
        """Watched games and replays start paused: the page's Play or Step sets them going."""
        self.steps = 0
        self.error: str | None = None
        self.pending = False
        """Whether an agent's move is scheduled or being thought (at most one at a time)."""
        self.agents_elsewhere: Callable[[str, GameSetup | None, int, list[int], int], list[int] | None] | None = None
        """Where the agents think when not on this process's threads: the server's agent processes
        (:meth:`~training.web.thinkers.AgentProcesses.play`), which keep a copy of the game."""
        self._told: int | None = None
        """How many moves the game's copy elsewhere has (``None``: no copy yet, or one astray)."""
        self.closed = False
        self.lock = threading.RLock()
        self._hint_lock = threading.Lock()
        self._agents: dict[int, Agent] = {}
        self._hint_agents: dict[str, Agent] = {}
        self._view_cache: tuple[int, int, bytes] | None = None
        self.created = self.last_active = time.time()
        self._news(f"deal 1: {self.names[self.game.deal.dealer]} deals")

    # -- the state -------------------------------------------------------------------------------
    @property
    def finished(self) -> bool:
        """Whether nobody acts any more: the game is over, or it deals no more."""
        return self.game.is_over or self.game.dealing_stopped

    def agent_to_move(self) -> bool:
        """Whether an agent (or the replay's record) makes the next move now."""
        game = self.game
        if self.finished or self.error is not None or self.closed or game.to_act < 0:
            return False
        if self.mode == "play":
            return game.to_act != self.seat
        if self.mode == "replay" and len(self.actions) >= len(self.script):
            return False
        return not self.paused or self.steps > 0

    def moving_on(self) -> bool:
        """Whether, in play mode, an agent's move is due at once (no pause before it: pace 0, or
        after a move the person did not see): the view now is a passing one, soon replaced."""
        with self.lock:
            return self.mode == "play" and self.agent_to_move() and self.delay() == 0

    def delay(self) -> float:
        """Seconds to wait before the next agent move, so that a person can follow: one pace, more
        after a trick or a deal, none after a move the person did not see (that would show it)."""
        if self.steps > 0:
            return 0.0
        ended = set()
        for event in reversed(self.events):
            if event["kind"] == "action":
                if not ended and self.mode == "play" and event["public"] is None and event["seat"] != self.seat:
                    return 0.0
                break
            ended.add(event["ends"])
        return self.pace * (DEAL_PAUSE if "deal" in ended else TRICK_PAUSE if "trick" in ended else 1.0)

    # -- moves -----------------------------------------------------------------------------------
    def play(self, text: Any) -> None:
        """The person's move, written in the §1 notation; anything but a legal move of theirs, in
        turn, is a :class:`GameError` naming the problem, and changes nothing."""
        with self.lock:
            if self.mode != "play":
                raise conflict(f"nobody plays at this table: it is a {self.mode} (use play, pause or step)")
            self._check_running()
            game = self.game
            if game.to_act != self.seat:
                raise conflict(f"it is not your turn: {self.names[game.to_act]} is to act")
            if not isinstance(text, str):
                raise GameError(f"an action is a string such as PASS, 7H, Ah or JK:H, got {text!r}")
            try:
                action = parse_action(text, self.rules)
            except ValueError as e:
                raise GameError(str(e)) from None
            if action not in game.legal_actions():
                raise GameError(explain_illegal(game.deal, action))
            self._apply(action)

    def control(self, command: str) -> None:
        """``play``, ``pause`` or ``step`` (one move) a watched game or a replay."""
        with self.lock:
            if self.mode == "play":
                raise conflict("play, pause and step are for watching agents and replays; this table has a player")
            if command == "play":
                self.paused, self.steps = False, 0
            elif command == "pause":
                self.paused, self.steps = True, 0
            elif command == "step":
                self._check_running()
                self.paused, self.steps = True, 1
            else:
                raise GameError(f"unknown command {command!r}: use play, pause or step")
            self._changed()

    def _check_running(self) -> None:
        if self.game.is_over:
            raise conflict("the game is over")
        if self.finished:
            raise conflict("the game has ended: no more deals")
        if self.mode == "replay" and len(self.actions) >= len(self.script):
            raise conflict("the replay has reached the end of the record")

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
            return self.revision, lambda: [self.table.universal[int(self._agent(seat).act(observation))]]

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
            agent = self._agents[seat] = agent_factory(spec)(self.rules, (self.seed + seat) % 2**32)
        return agent

    def hint(self, spec: str) -> dict[str, str]:
        """What the agent ``spec`` would play for the person now: ``{"agent", "action"}``."""
        factory = agent_factory(spec)
        with self.lock:
            if self.mode != "play":
                raise conflict("a hint is for the person at the table")
            self._check_running()
            if self.game.to_act != self.seat:
                raise conflict(f"it is not your turn: {self.names[self.game.to_act]} is to act")
            observation = self.encoder.encode_turn(self.game.deal, self.table, self.game.scores)
        with self._hint_lock:  # one hint at a time: an agent object thinks for one caller
            agent = self._hint_agents.get(spec)
            if agent is None:
                if len(self._hint_agents) >= MAX_HINT_AGENTS:  # the oldest goes: a page cannot pile up agents
                    del self._hint_agents[next(iter(self._hint_agents))]
                agent = self._hint_agents[spec] = factory(self.rules, self.seed % 2**32)
            action = int(agent.act(observation))
        return {"agent": factory.label, "action": self.table.to_str(action)}

    # -- what happened ---------------------------------------------------------------------------
    def _news(self, text: str, ends: str | None = None) -> None:
        self.events.append({"kind": "news", "text": text, "ends": ends})
        self._heard.append(text)

    def _action_event(self, seat: int, text: str, public: str | None) -> None:
        """Keep a move: its text, and what the others heard of it (``public``; ``None``: nothing)."""
        self.events.append({"kind": "action", "seat": seat, "text": text, "public": public})
        viewer = self.seat
        if viewer is None or seat == viewer or public is not None:
            self._heard.append(f"{self.names[seat]}: {text if viewer is None or seat == viewer else public}")

    def _apply(self, action: int) -> None:
        game, rules, public, names = self.game, self.rules, self.public, self.names
        deal, seat, phase = game.deal, game.to_act, game.deal.phase
        tricks, exposed = len(deal.tricks), deal.exposed
        game.apply_action(action)
        self.actions.append(action)
        self.last_active = time.time()
        text = action_to_str(action, rules)
        self._action_event(seat, text, announcement(phase, action, text))
        if phase == Phase.BIDDING:
            public.auction.append({"seat": seat, "bid": text})
        elif phase == Phase.DISCARD:
            public.discarded += 1
        if phase == Phase.PLAY and is_card_action(action) and action_card(action) == deal.called_card:
            self._news(f"{names[seat]} played the called card: the partner of {names[deal.contractor]} (§10.5)")
        if len(deal.tricks) > tricks:
            _leader, _led, cards, winner = deal.tricks[-1]
            card = next(c for s, c in cards if s == winner)
            entry = {"cards": [{"seat": s, "card": card_json(c, deal.ctx, rules.two_jokers)} for s, c in cards],
                     "winner": winner, "reason": win_reason(deal, card), "text": trick_result(deal, len(deal.tricks) - 1, names)}
            public.tricks.append(entry)
            self._news(entry["text"], ends="trick")
        if deal.exposed and not exposed:
            self._news(f"{names[deal.contractor]} plays open misère: the hand is now face up")
        if deal.is_over:
            self._end_of_deal(deal)
        self._changed()

    def _changed(self) -> None:
        self.revision += 1
        if self.on_change is not None:
            self.on_change(self.id)

    def _end_of_deal(self, deal: Deal) -> None:
        game, public, names = self.game, self.public, self.names
        summary = deal_summary(deal, names, game.scores)
        public.previous = {"text": summary, "last_trick": public.tricks[-1] if public.tricks else None}
        public.scores = list(game.scores)
        self._news(summary, ends="deal")
        if game.is_over:
            public.over, public.winners = True, list(game.winners)
            self._news("game over; winners: " + ", ".join(names[s] for s in game.winning_seats()))
        elif game.dealing_stopped:
            public.stopped = True
            self._news("no more deals: " + ("the one deal is played" if self.length == "deal" else "the game stops here"))
        else:
            public.auction, public.tricks, public.discarded = [], [], 0
            public.deal_number = len(game.deals)
            self._news(f"deal {public.deal_number}: {names[game.deal.dealer]} deals")

    def view(self) -> dict[str, Any]:
        """What the page is sent: the person's view (play mode, from their observation) or the
        spectator's (every hand), with the session's settings (a fresh copy)."""
        return orjson.loads(self.view_json()[1])

    def view_json(self) -> tuple[int, bytes]:
        """The view's ``revision`` and the view as JSON, built once per change of the game."""
        with self.lock:
            if self._view_cache is None or self._view_cache[0] != self.revision:
                # orjson (C): a tenth of the json module's time for a view, which every request sends.
                text = orjson.dumps(self._build_view())
                # The revision is a digest of what the viewer sees: it changes exactly when the view
                # does (a count of moves would show the turns the viewer may not see).
                revision = crc32_holding_lock(text)
                self._view_cache = (self.revision, revision, b'%s,"revision":%d}' % (text[:-1], revision))
            return self._view_cache[1:]

    def _build_view(self) -> dict[str, Any]:
        with self.lock:
            game = self.game
            deal = game.deal
            viewer = self.seat
            if viewer is None:
                view = self.views.spectator_view(deal, max(game.to_act, 0), self.public)
            else:
                legal = deal.legal_actions() if game.to_act == viewer else None
                view = self.views.player_view(viewer, deal, legal, self.public)
            view.update(id=self.id, mode=self.mode, length=self.length, preset=self.rules.preset,
                        rules=self._rules_text, target=self.rules.target, sides=self.rules.num_sides,
                        log=list(self._heard), paused=self.paused, error=self.error,
                        replayed=len(self.actions) if self.mode == "replay" else None,
                        script=len(self.script) if self.mode == "replay" else None)
        return view

    def record_json(self) -> dict[str, Any]:
        """The game's record (docs: five_hundred_env.records), ``five-hundred replay`` reads it: a
        deal record for a one-deal game. It shows every hand, so a player gets it once the game is
        finished."""
        with self.lock:
            if self.mode == "play" and not self.finished:
                raise conflict("the record shows every hand: it can be downloaded once the game is finished")
            return record_of(self.game.deals[0] if self.length == "deal" else self.game)

    # -- kept on disk ----------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        """Everything needed to rebuild the session: its settings, seed and actions."""
        with self.lock:
            data: dict[str, Any] = {
                "format": SESSION_FORMAT, "id": self.id, "mode": self.mode, "rules": self.rules.to_dict(),
                "seat": self.seat, "agents": self.specs, "length": self.length, "seed": self.seed, "pace": self.pace,
                "paused": self.paused, "actions": self.actions, "created": self.created, "last_active": self.last_active,
                "record": self.record, "error": self.error,
            }
            if self.first_deal is not None:
                first = Deal(self.rules, self.first_deal.dealt, self.first_deal.kitty, self.first_deal.dealer)
                data["first_deal"] = record_of(first)
            return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GameSession:
        """The session :meth:`to_json` saved, its actions played again; a malformed file is a
        ``ValueError``."""
        if not isinstance(data, dict) or data.get("format") != SESSION_FORMAT:
            raise ValueError(f"not a saved web game (expected format {SESSION_FORMAT!r})")
        try:
            first = data.get("first_deal")
            session = cls(data["id"], Rules.from_dict(data["rules"]), mode=data["mode"], seat=data["seat"],
                          agents=data["agents"], length=data["length"], seed=data["seed"], pace=data["pace"],
                          record=data.get("record"), first_deal=None if first is None else replay_start(first)[0].deal)
            for number, action in enumerate(data["actions"]):
                if action not in session.game.legal_actions():
                    raise ValueError(f"its move {number} ({action!r}) is not legal there")
                session._apply(action)
        except (KeyError, TypeError, GameError) as e:
            raise ValueError(f"a malformed saved web game: {e}") from None
        session.paused, session.error = bool(data.get("paused")), data.get("error")
        session.created, session.last_active = data.get("created", session.created), data.get("last_active", session.last_active)
        return session


__all__ = ["LENGTHS", "MODES", "SESSION_FORMAT", "Exchange", "GameError", "GameSession", "conflict"]
