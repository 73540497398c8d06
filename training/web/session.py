"""One game at the web table (:class:`GameSession`): the game, its seats, what each seat has heard.

A session is one of three modes: ``play`` (a person at one seat, agents at the others),
``watch`` (agents at every seat, every hand shown, played or stepped on request) and ``replay``
(a record's actions in turn, like watch). Its moves come from the person (:meth:`GameSession.play`)
or, off the request path, from the agents (:meth:`GameSession.prepare_move`, whose thinking runs
without the session's lock, here or in an agent process, then :meth:`GameSession.finish_move`). Everything is deterministic
from the session's secret seed and its actions, so :meth:`GameSession.to_json` keeps only those
(and the settings) and :meth:`GameSession.from_json` plays them again after a restart.

Two of its parts are bases of their own: the people at its seats (tokens, names, who is here:
:class:`~training.web.seats.TableSeats`) and the agents' moves (:class:`~training.web.agent_moves.AgentMoves`).
"""

from __future__ import annotations

import math
import random
import threading
import time
import zlib
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import orjson

from agents.base import Agent
from five_hundred_env.actions import ActionTable, action_card, action_to_str, is_card_action, parse_action
from five_hundred_env.cards import is_joker
from five_hundred_env.engine import Deal, Game, Phase
from five_hundred_env.observation import ObservationEncoder
from five_hundred_env.records import record_of, replay_start
from five_hundred_env.render import explain_illegal, win_reason
from five_hundred_env.rules import Rules
from training.table.terminal import announcement
from training.web.agent_moves import AgentMoves
from training.web.errors import GameError, conflict
from training.web.menu import AgentMenu
from training.web.seats import TableSeats, new_token, token_digest
from training.web.thinkers import GameSetup
from training.web.view import PublicTable, SeatViews, action_words, card_json, card_words, deal_result, result_words

MODES = ("play", "watch", "replay")
LENGTHS = ("game", "deal")
SESSION_FORMAT = "five-hundred-web-game/2"
MAX_PACE = 5.0
"""The longest pause between the agents' moves, in seconds."""
MAX_SEED = 2**63
LOG_LINES = 60
"""How many of the latest log lines a view carries."""
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


class GameSession(TableSeats, AgentMoves):
    """A game at the web table. ``agents`` gives each seat's agent spec, ``None`` for a person's
    seat (``play`` mode: one person or more; ``watch``: none); each spec must be one of ``menu``'s
    (:class:`~training.web.menu.AgentMenu`). ``creator`` is the person's seat that may give an
    empty seat to an agent and end the game (default: the first person's); ``tokens`` maps each
    person's seat to the digest of its secret token (:func:`~training.web.seats.token_digest`).
    ``length`` is ``"game"`` (to 500) or ``"deal"``; ``seed`` draws the deals and seeds the agents
    (keep it secret: it decides the cards); ``pace`` is the seconds between the agents' moves.
    ``record``: the record a ``replay`` session plays. ``first_deal`` sets the first deal instead
    of shuffling it (tests). Anything out of place is a :class:`~training.web.errors.GameError`
    naming it."""

    def __init__(self, game_id: str, rules: Rules, *, mode: str = "play", agents: Sequence[str | None] = (),
                 creator: int | None = None, tokens: Mapping[int, str] | None = None, length: str = "game",
                 seed: int = 0, pace: float = 0.0, record: dict[str, Any] | None = None, first_deal: Deal | None = None,
                 menu: AgentMenu | None = None) -> None:
        n = rules.num_players
        if mode not in MODES:
            raise GameError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
        if length not in LENGTHS:
            raise GameError(f"length must be 'game' (to {rules.target}) or 'deal', got {length!r}")
        if isinstance(pace, bool) or not isinstance(pace, (int, float)) or not 0 <= pace <= MAX_PACE:
            raise GameError(f"pace must be 0 to {MAX_PACE:g} seconds between the agents' moves, got {pace!r}")
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < MAX_SEED:
            raise GameError(f"seed must be a whole number from 0 to 2**63, got {seed!r}")
        self.menu = AgentMenu() if menu is None else menu
        self.id, self.rules, self.mode, self.length, self.seed, self.pace = game_id, rules, mode, length, seed, float(pace)
        self.record = record
        self.first_deal = first_deal
        self.script: list[int] = []
        if mode == "replay":
            if record is None:
                raise GameError("a replay needs a record")
            self.game, played = replay_start(record)
            self.script = [a for deal in played for a in deal.history]
            self.specs: list[str | None] = ["record"] * n
        else:
            self.specs = self._checked_specs(list(agents), mode)
            max_deals = 1 if length == "deal" else None
            self.game = (Game(rules, first_deal=first_deal, rng=random.Random(seed), max_deals=max_deals)
                         if first_deal is not None else Game(rules, seed=seed, max_deals=max_deals))
        self.people = [s for s in range(n) if self.specs[s] is None]
        """The seats of the people, in order (none in watch mode and replays)."""
        if self.people and (creator if creator is not None else self.people[0]) not in self.people:
            raise GameError(f"the creator's seat must be one of the people's, {self.people}, got {creator!r}")
        self.creator = (self.people[0] if creator is None else creator) if self.people else None
        self.tokens = self._checked_tokens({seat: token_digest(new_token()) for seat in self.people}
                                           if tokens is None else tokens)
        self.given_names: dict[int, str] = {}
        """The names the people gave themselves (the others are player_N: people are anonymous otherwise)."""
        self.history: list[list[dict[str, Any]]] = [[{"from_move": 0, "agent": spec}] for spec in self.specs]
        """Who sat at each seat from which move on: ``{"from_move", "agent": spec}``, ``None`` for a person."""
        self.names = [f"player_{s}" for s in range(n)]
        self.encoder = ObservationEncoder(rules)
        self._rules_text = rules.describe()
        self.table = ActionTable(rules)
        self.views = SeatViews(rules)
        self.public = PublicTable(names=list(self.names), agents=list(self.specs),
                                  presence=["awaited" if spec is None else None for spec in self.specs],
                                  scores=list(self.game.scores), deal_number=1)
        self.events: list[dict[str, Any]] = []
        self._heard: dict[int | None, deque[str]] = {viewer: deque(maxlen=LOG_LINES) for viewer in self.viewers()}
        """The latest log lines as each viewer heard them (a spectator hears everything), kept as the
        events come rather than sought among them for every view."""
        self.actions: list[int] = []
        self.revision = 0
        """Counts every change (actions, pause, play, errors, who is here): what a waiting client watches."""
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
        self.kept = False
        """Whether the finished game was kept (``serve --keep-games``)."""
        self.lock = threading.RLock()
        self._hint_lock = threading.Lock()
        self._agents: dict[int, Agent] = {}
        self._hint_agents: dict[str, Agent] = {}
        self._view_cache: dict[int | None, tuple[int, int, bytes]] = {}
        self._seen: dict[int, float] = {}
        self._polls: dict[int, int] = {}
        self.created = self.last_active = time.time()
        self._news(f"deal 1: {self.names[self.game.deal.dealer]} deals")

    def _checked_specs(self, specs: list[Any], mode: str) -> list[str | None]:
        n = self.rules.num_players
        if len(specs) != n:
            raise GameError(f"give each of the {n} seats of {self.rules.preset} a person or an agent, got {len(specs)}")
        if mode == "play" and None not in specs:
            raise GameError("a game to play needs a person at one seat at least (watch agents with mode watch)")
        if mode == "watch" and None in specs:
            raise GameError("a watched game has an agent at every seat")
        try:
            return [None if spec is None else self.menu.check(spec, self.rules) for spec in specs]
        except ValueError as e:
            raise GameError(str(e)) from None

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
            return game.to_act not in self.people
        if self.mode == "replay" and len(self.actions) >= len(self.script):
            return False
        return not self.paused or self.steps > 0

    def moving_on(self) -> bool:
        """Whether, in play mode, an agent's move is due at once (no pause before it: pace 0, or
        after a move a person did not see): the view now is a passing one, soon replaced."""
        with self.lock:
            return self.mode == "play" and self.agent_to_move() and self.delay() == 0

    def delay(self) -> float:
        """Seconds to wait before the next agent move, so that a person can follow: one pace, more
        after a trick or a deal, none after a move another person did not see (that would show it)."""
        if self.steps > 0:
            return 0.0
        ended = set()
        for event in reversed(self.events):
            if event["kind"] == "action":
                if not ended and event["public"] is None and any(p != event["seat"] for p in self.people):
                    return 0.0
                break
            ended.add(event["ends"])
        return self.pace * (DEAL_PAUSE if "deal" in ended else TRICK_PAUSE if "trick" in ended else 1.0)

    # -- moves -----------------------------------------------------------------------------------
    def play(self, seat: int | None, text: Any) -> None:
        """The move of the person at ``seat``, written in the §1 notation; anything but a legal
        move of theirs, in turn, is a :class:`~training.web.errors.GameError` naming the problem,
        and changes nothing."""
        with self.lock:
            if self.mode != "play":
                raise conflict(f"nobody plays at this table: it is a {self.mode} (use play, pause or step)")
            self._check_running()
            game = self.game
            if game.to_act != seat:
                raise conflict(f"it is not your turn: {self.public.names[game.to_act]} is to act")
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
                raise conflict("play, pause and step are for watching agents and replays; this table has players")
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

    # -- what happened ---------------------------------------------------------------------------
    def _news(self, text: str, ends: str | None = None) -> None:
        self.events.append({"kind": "news", "text": text, "ends": ends})
        for heard in self._heard.values():
            heard.append(text)

    def _action_event(self, seat: int, text: str, public: str | None) -> None:
        """Keep a move: its words, and what the others heard of it (``public``; ``None``: nothing)."""
        self.events.append({"kind": "action", "seat": seat, "text": text, "public": public})
        for viewer, heard in self._heard.items():
            if viewer is None or seat == viewer or public is not None:
                heard.append(f"{self.names[seat]}: {text if viewer is None or seat == viewer else public}")

    def _apply(self, action: int) -> None:
        game, rules, public, names = self.game, self.rules, self.public, self.names
        deal, seat, phase = game.deal, game.to_act, game.deal.phase
        tricks, exposed = len(deal.tricks), deal.exposed
        game.apply_action(action)
        self.actions.append(action)
        self.last_active = time.time()
        words = action_words(action, rules.two_jokers, names)
        heard = announcement(phase, action, words)
        self._action_event(seat, f"calls {words}" if phase == Phase.CALL else words, heard)
        if phase == Phase.BIDDING:
            public.auction.append({"seat": seat, "bid": action_to_str(action, rules)})
        elif phase == Phase.DISCARD:
            public.discarded += 1
        if phase == Phase.PLAY and is_card_action(action) and action_card(action) == deal.called_card:
            self._news(f"{names[seat]} played the called card: the partner of {names[deal.contractor]}")
        if len(deal.tricks) > tricks:
            _leader, _led, cards, winner = deal.tricks[-1]
            card = next(c for s, c in cards if s == winner)
            reason = win_reason(deal, card)
            # "the joker, the highest trump" says which card it is: said once
            why = reason.removeprefix("the joker") if is_joker(card) else f", {reason}"
            text = f"trick {len(deal.tricks)} won by {names[winner]} with {card_words(card, rules.two_jokers)}{why}"
            entry = {"cards": [{"seat": s, "card": card_json(c, deal.ctx, rules.two_jokers)} for s, c in cards],
                     "winner": winner, "reason": reason, "text": text}
            public.tricks.append(entry)
            self._news(text, ends="trick")
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
        result = deal_result(deal, game.scores, names)
        public.previous = {"result": result, "last_trick": public.tricks[-1] if public.tricks else None}
        public.scores = list(game.scores)
        self._news(result_words(result, self.rules, names), ends="deal")
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

    def view(self, viewer: int | None = None) -> dict[str, Any]:
        """What the page is sent: the view of the person at ``viewer`` (play mode, from their
        observation) or the spectator's (``None``: every hand), with the session's settings (a fresh copy)."""
        return orjson.loads(self.view_json(viewer)[1])

    def view_json(self, viewer: int | None = None) -> tuple[int, bytes]:
        """The ``revision`` of ``viewer``'s view and the view as JSON, built once per change of the game."""
        with self.lock:
            if viewer not in self._heard:
                raise GameError("that seat is not a person's", 403)
            cached = self._view_cache.get(viewer)
            if cached is None or cached[0] != self.revision:
                # orjson (C): a tenth of the json module's time for a view, which every request sends.
                text = orjson.dumps(self._build_view(viewer))
                # The revision is a digest of what the viewer sees: it changes exactly when the view
                # does (a count of moves would show the turns the viewer may not see).
                revision = crc32_holding_lock(text)
                cached = self._view_cache[viewer] = (self.revision, revision, b'%s,"revision":%d}' % (text[:-1], revision))
            return cached[1:]

    def _build_view(self, viewer: int | None) -> dict[str, Any]:
        with self.lock:
            game = self.game
            deal = game.deal
            if viewer is None:
                view = self.views.spectator_view(deal, max(game.to_act, 0), self.public)
            else:
                legal = deal.legal_actions() if game.to_act == viewer else None
                view = self.views.player_view(viewer, deal, legal, self.public)
            view.update(id=self.id, mode=self.mode, length=self.length, preset=self.rules.preset,
                        rules=self._rules_text, target=self.rules.target, sides=self.rules.num_sides,
                        log=list(self._heard[viewer]), paused=self.paused, error=self.error,
                        creator=viewer is not None and viewer == self.creator,
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
        """Everything needed to rebuild the session: its settings, seed and actions, and what it
        keeps of the people (their tokens' digests, never the tokens; the names they gave)."""
        with self.lock:
            data: dict[str, Any] = {
                "format": SESSION_FORMAT, "id": self.id, "mode": self.mode, "rules": self.rules.to_dict(),
                "agents": self.specs if self.mode != "replay" else [], "creator": self.creator,
                "tokens": {str(seat): digest for seat, digest in self.tokens.items()},
                "names": {str(seat): name for seat, name in self.given_names.items()}, "history": self.history,
                "joined": sorted(self._seen),
                "length": self.length, "seed": self.seed, "pace": self.pace, "paused": self.paused,
                "actions": self.actions, "created": self.created, "last_active": self.last_active,
                "record": self.record, "error": self.error, "kept": self.kept,
            }
            if self.first_deal is not None:
                first = Deal(self.rules, self.first_deal.dealt, self.first_deal.kitty, self.first_deal.dealer)
                data["first_deal"] = record_of(first)
            return data

    @classmethod
    def from_json(cls, data: Any, menu: AgentMenu | None = None) -> GameSession:
        """The session :meth:`to_json` saved, checked as a request is (its agents among ``menu``'s,
        its pace, seats and tokens), its actions played again; anything else is a ``ValueError``."""
        if not isinstance(data, dict) or data.get("format") != SESSION_FORMAT:
            raise ValueError(f"not a saved web game (expected format {SESSION_FORMAT!r})")
        try:
            first = data.get("first_deal")
            agents = data["agents"]
            mode = data["mode"]
            session = cls(data["id"], Rules.from_dict(data["rules"]), mode=mode,
                          agents=agents if mode != "replay" else (), creator=data["creator"],
                          tokens={int(seat): digest for seat, digest in data["tokens"].items()}, length=data["length"],
                          seed=data["seed"], pace=data["pace"], record=data.get("record"), menu=menu,
                          first_deal=None if first is None else replay_start(first)[0].deal)
            history = data["history"]
            if not _valid_history(history, session) or len(history) != session.rules.num_players:
                raise ValueError("its seats' history does not fit the game")
            for number, action in enumerate(data["actions"]):
                if isinstance(action, bool) or action not in session.game.legal_actions():
                    raise ValueError(f"its move {number} ({action!r}) is not legal there")
                session._apply(action)
            for seat, name in data["names"].items():
                session.give_name(int(seat), name)
            for seat in data["joined"]:
                if seat not in session.people:
                    raise ValueError(f"its joined seat {seat!r} is not a person's")
                session._seen[seat] = -math.inf  # came before the restart: away until heard from again
            session.check_presence()
            session.history = history
            error = data["error"]
            if error is not None and not isinstance(error, str):
                raise ValueError(f"its error is not a message: {error!r}")
            times = [data["created"], data["last_active"]]
            if not all(isinstance(t, (int, float)) and not isinstance(t, bool) and math.isfinite(t) for t in times):
                raise ValueError("its times are not numbers")
        except (KeyError, TypeError, AttributeError, GameError) as e:
            raise ValueError(f"a malformed saved web game: {e}") from None
        session.paused, session.error, session.kept = bool(data["paused"]), error, bool(data.get("kept"))
        session.created, session.last_active = times
        return session


def _valid_history(history: Any, session: GameSession) -> bool:
    """Whether a saved seats' history is a list per seat of ``{"from_move", "agent"}`` ending with the seat's occupant now."""
    if not isinstance(history, list):
        return False
    for seat, entries in enumerate(history):
        if not isinstance(entries, list) or not entries or not all(
                isinstance(e, dict) and set(e) == {"from_move", "agent"} and isinstance(e["from_move"], int)
                and (e["agent"] is None or isinstance(e["agent"], str)) for e in entries):
            return False
        if seat < len(session.specs) and entries[-1]["agent"] != session.specs[seat]:
            return False
    return True


__all__ = ["LENGTHS", "MAX_PACE", "MODES", "SESSION_FORMAT", "GameSession"]
