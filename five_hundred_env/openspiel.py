"""Five Hundred as an OpenSpiel game (``pip install five-hundred-env[openspiel]``).

    from five_hundred_env.openspiel import load_game
    game = load_game("australian", slam_bonus=False)      # a pyspiel.Game
    state = game.new_initial_state()                       # chance nodes deal the cards

One OpenSpiel game plays one deal over the same engine as the PettingZoo environment:

* **Chance nodes** deal it: first the dealer (uniform over the seats), then every card one at a
  time, uniform over the cards not yet dealt — seat 0's hand, then seat 1's, …, then the kitty
  (the dealing pattern of §3 does not change the distribution; the two-handed dead hand is what
  is left undealt). Chance outcomes are the universal card ids 0–65 (the dealer's outcome is the
  seat number).
* **Player actions** are the environment's compact action ids (:class:`ActionTable`, the same
  ``Discrete`` space as the AEC environment), sorted.
* **Returns** are each player's side's zero-sum result in points (``Deal.zero_sum_result``), so
  the game is zero-sum for every preset.
* **Observations**: ``observation_tensor`` is the environment's observation vector (float32) of
  that player; ``information_state_string`` is the player's perfect-recall history: its dealt hand,
  then every action as that player saw it (another player's discard as ``discard``, its
  ``NO_NOMINATION`` not at all — both hidden by the rules — and the kitty when the player took it).
  ``information_state_tensor`` is the same vector as ``observation_tensor``: the
  ``five_hundred_v1`` observation recalls the whole deal (the auction, every trick in order, the
  joker leads' suits), so it serves as the information state; the one thing it does not keep is
  the order of the contractor's own kitty discards, which changes nothing in the game.

Every rule option is a game parameter; one left out keeps the preset's own value (switches are
0/1, ``both_jokers_min_bid`` 0 means off).

**Checked moves and players**: every chance outcome (a dealer outside the seats, a card outside
the pack or dealt already), every action id (out of range, or illegal) and anything else given as
one (``-1``, ``True``, ``3.0``) is a ``ValueError`` naming it, and the state stays as it was; so is
a player outside the seats given to the methods that take one (``legal_actions(9)``,
``information_state_string(7)``, ``observation_tensor(-3)``, ``player_return``, …), where
OpenSpiel's C++ layer would stop with its CHECK text or answer ``[]``.

**Plain-text states**: ``state.serialize()`` and ``game.deserialize_state(text)`` use the
project's own form — a header, the rules as JSON, the actions so far — and replay the actions
with every check above; nothing in the text is ever unpickled. (OpenSpiel's generic
``pyspiel.serialize_game_and_state``/``deserialize_game_and_state``, and pickling a state, keep
OpenSpiel's format for Python games, which holds a pickle: never give them text you did not write.)

**Resampling**: ``state.resample_from_infostate(player, sampler)`` draws a state uniformly among
those ``player`` cannot tell from this one, with the exact information-set sampler of
:mod:`five_hundred_env.sampling`, so OpenSpiel's IS-MCTS (``open_spiel.python.algorithms.ismcts``)
plays the game (docs/integrations.md).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import numbers
import random
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from five_hundred_env.actions import NO_NOMINATION, ActionTable, action_to_str
from five_hundred_env.cards import NUM_CARD_IDS, card_to_str, mask_to_cards
from five_hundred_env.engine import Deal, Phase
from five_hundred_env.observation import ObservationEncoder
from five_hundred_env.rules import BOOL_OPTIONS, FIXED_BY_PRESET, OPTION_CHOICES, Rules, make_rules
from five_hundred_env.sampling import InfoSet, WorldSampler

try:
    import pyspiel
except ImportError as e:  # pragma: no cover - depends on the install
    raise ImportError("five_hundred_env.openspiel needs OpenSpiel: pip install 'five-hundred-env[openspiel]'") from e

SHORT_NAME = "python_five_hundred"
MAX_UTILITY = 700.0
"""A bound on any side's zero-sum result of one deal (a lost 10NT against 100 defence points is −620)."""
STATE_FORMAT = "five_hundred_env.openspiel state v1"
"""The first line of a state's plain-text form (:meth:`FiveHundredState.serialize`)."""
_ACTION_WORD = re.compile(r"\d{1,3}")


# OpenSpiel fills every parameter a caller leaves out with its default, so an option's default
# must mean "the preset's own value" (not the australian one): "" for the named choices, 0 for the
# numbers (no option may be 0), -1 for the switches (0 off, 1 on) and for both_jokers_min_bid
# (0 off). Options are passed only where they differ from the preset.
_OPTION_FIELDS = [f for f in dataclasses.fields(Rules) if f.name not in ("preset", *FIXED_BY_PRESET)]
_PRESET_VALUE: dict[str, Any] = {
    f.name: "" if f.name in OPTION_CHOICES else -1 if f.name in BOOL_OPTIONS or f.name == "both_jokers_min_bid" else 0
    for f in _OPTION_FIELDS
}


def _to_parameter(name: str, value: Any) -> Any:
    if name in BOOL_OPTIONS:
        return int(value)
    return 0 if name == "both_jokers_min_bid" and value is None else value


def _from_parameter(name: str, value: Any) -> Any:
    if name in BOOL_OPTIONS:
        return bool(value)
    return None if name == "both_jokers_min_bid" and value == 0 else value


_GAME_TYPE = pyspiel.GameType(
    short_name=SHORT_NAME,
    long_name="Five Hundred (one deal)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=6,
    min_num_players=2,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification={"preset": "australian", **_PRESET_VALUE},
)


def rules_of(params: dict[str, Any]) -> Rules:
    """The rules a game's parameters name: the preset, with every option not left at its
    "the preset's value" default overridden."""
    options = {name: _from_parameter(name, value) for name, value in params.items()
               if name in _PRESET_VALUE and value != _PRESET_VALUE[name]}
    return make_rules(params.get("preset", "australian"), **options)


class FiveHundredGame(pyspiel.Game):
    """One deal of Five Hundred under the rules its parameters name."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        params = {"preset": "australian", **_PRESET_VALUE, **(params or {})}
        rules = rules_of(params)
        actions, _encoder = _tables(rules)
        info = pyspiel.GameInfo(
            num_distinct_actions=len(actions),
            max_chance_outcomes=NUM_CARD_IDS,
            num_players=rules.num_players,
            min_utility=-MAX_UTILITY,
            max_utility=MAX_UTILITY,
            utility_sum=0.0,
            # the dealer, every card, and at most (bids + discards + call + nomination + plays)
            max_game_length=1 + bin(rules.deck).count("1") + max(4, rules.num_players) * 28 + rules.kitty_size + 1
            + rules.has_partner_call + rules.num_players * rules.hand_size,
        )
        super().__init__(_GAME_TYPE, info, params)  # first: pybind11 objects take attributes only after it
        self.rules = rules
        self.actions, self.encoder = _tables(rules)

    def new_initial_state(self) -> FiveHundredState:
        return FiveHundredState(self)

    def deserialize_state(self, text: str) -> FiveHundredState:
        """The state of :meth:`FiveHundredState.serialize`'s plain text: the header, these rules, then
        the actions so far, replayed with every check of ``apply_action``. Anything else is a
        ``ValueError`` naming what is wrong; nothing in the text is ever unpickled or run."""
        if not isinstance(text, str):
            raise ValueError(f"a state's text must be a str, got {type(text).__name__}")
        lines = text.strip("\n").split("\n")
        if len(lines) != 3 or lines[0] != STATE_FORMAT:
            raise ValueError(f"not a state of this game: expected the 3 lines of {STATE_FORMAT!r} (header, rules, "
                             "actions), as state.serialize() writes them")
        if lines[1] != f"rules {_rules_text(self.rules)}":
            raise ValueError("the state was saved under other rules than this game's: load it with the game of its rules")
        words = lines[2].split(" ")
        if words[0] != "actions" or len(words) - 1 > self.max_game_length():
            raise ValueError(f"the third line must be 'actions' and at most {self.max_game_length()} action ids")
        state = self.new_initial_state()
        for number, word in enumerate(words[1:], 1):
            if not _ACTION_WORD.fullmatch(word):
                raise ValueError(f"action {number} of the state, {word[:20]!r}, is not an action id")
            try:
                state.apply_action(int(word))
            except ValueError as e:
                raise ValueError(f"action {number} of the state: {e}") from None
        return state

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> FiveHundredObserver:
        return FiveHundredObserver(self, iig_obs_type)


@functools.cache
def _tables(rules: Rules) -> tuple[ActionTable, ObservationEncoder]:
    """The action table and the encoder of a rules object, shared by every state (states keep
    only plain data: OpenSpiel clones them by deep copy)."""
    return ActionTable(rules), ObservationEncoder(rules)


def _whole(value: Any) -> bool:
    """An integer (Python's or numpy's), not a bool: what an action or a player may be."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


_CHECKED_METHODS = {
    "_check_action": ("apply_action", "apply_action_with_legality_check", "child"),
    "_check_seat_or_chance": ("legal_actions", "legal_actions_mask", "action_to_string"),
    "_check_seat": ("information_state_string", "information_state_tensor", "observation_string",
                    "observation_tensor", "player_return", "player_reward", "string_to_action"),
}
"""The public methods of ``pyspiel.State`` whose first argument (an action or a player) each check refuses when bad."""
_PLAYER_AND_MORE = ("action_to_string", "string_to_action")
"""Of those, the methods whose player comes before another argument (their other form has none)."""


def _checked(name: str, check: Callable[[Any, Any, str], None], arity: int) -> Callable[..., Any]:
    """``pyspiel.State``'s method ``name`` with its first argument (a player or an action, when
    it is called with ``arity`` arguments) checked by ``check`` before OpenSpiel's C++ sees it."""
    method = getattr(pyspiel.State, name)

    def checked(self: FiveHundredState, *args: Any) -> Any:
        if len(args) == arity:
            check(self, args[0], name)
        return method(self, *args)

    checked.__name__ = checked.__qualname__ = name
    checked.__doc__ = f"OpenSpiel's ``{name}``, its player or action checked first (a bad one: a ``ValueError`` naming it)."
    return checked


def _checking_arguments(cls: type[FiveHundredState]) -> type[FiveHundredState]:
    """``cls`` with every method of :data:`_CHECKED_METHODS` checking its argument."""
    for check, names in _CHECKED_METHODS.items():
        for name in names:
            setattr(cls, name, _checked(name, getattr(cls, check), 2 if name in _PLAYER_AND_MORE else 1))
    return cls


@_checking_arguments
class FiveHundredState(pyspiel.State):
    """A deal being dealt (chance) or played; the engine's :class:`Deal` once dealt."""

    def __init__(self, game: FiveHundredGame) -> None:
        super().__init__(game)
        self.rules = game.rules
        self.dealer = -1
        self.dealt: list[int] = []
        self.deal: Deal | None = None

    # -- the OpenSpiel state API ---------------------------------------------------------------
    def current_player(self) -> int:
        if self.deal is None:
            return pyspiel.PlayerId.CHANCE
        if self.deal.is_over:
            return pyspiel.PlayerId.TERMINAL
        return self.deal.to_act

    def chance_outcomes(self) -> list[tuple[int, float]]:
        rules = self.rules
        if self.dealer < 0:
            return [(seat, 1.0 / rules.num_players) for seat in range(rules.num_players)]
        left = [c for c in mask_to_cards(rules.deck) if c not in self.dealt]
        return [(c, 1.0 / len(left)) for c in left]

    def _legal_actions(self, player: int) -> list[int]:
        if self.deal is None or player != self.deal.to_act:
            return []
        compact = _tables(self.rules)[0].compact
        return sorted(compact[u] for u in self.deal.legal_actions())

    def _apply_action(self, action: int) -> None:
        """Apply one move, each checked first (a bad one is a ``ValueError`` and changes nothing)."""
        self._check_action(action, "apply_action")
        rules = self.rules
        if self.deal is not None:
            table = _tables(rules)[0]
            self.deal.apply_action(table.universal[action])  # IllegalActionError (a ValueError): nothing applied
        elif self.dealer < 0:
            self.dealer = action
        else:
            self.dealt.append(action)
            # the hands, then the kitty; two_handed leaves its dead hand undealt (§10.3)
            if len(self.dealt) == rules.num_players * rules.hand_size + rules.kitty_size:
                size = rules.hand_size
                hands = [sum(1 << c for c in self.dealt[s * size:(s + 1) * size]) for s in range(rules.num_players)]
                kitty = sum(1 << c for c in self.dealt[rules.num_players * size:])
                self.deal = Deal(rules, hands, kitty, self.dealer)

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            if self.dealer < 0:
                return f"dealer {action}"
            return f"deal {card_to_str(action, self.rules.two_jokers)}"
        return _tables(self.rules)[0].to_str(action)

    def is_terminal(self) -> bool:
        return self.deal is not None and self.deal.is_over

    def returns(self) -> list[float]:
        rules = self.rules
        if not self.is_terminal():
            return [0.0] * rules.num_players
        assert self.deal is not None
        return [self.deal.zero_sum_result(rules.side_of(seat)) for seat in range(rules.num_players)]

    def serialize(self) -> str:
        """The state as plain text: :data:`STATE_FORMAT`, the rules (JSON), the actions so far
        (:meth:`FiveHundredGame.deserialize_state` reads it back)."""
        return "\n".join([STATE_FORMAT, f"rules {_rules_text(self.rules)}",
                          " ".join(["actions", *map(str, self.history())])])

    def resample_from_infostate(self, player_id: int, probability_sampler: Any) -> FiveHundredState:
        """A state drawn uniformly among those ``player_id`` cannot tell from this one (same
        ``information_state_string``), by the exact sampler of :mod:`five_hundred_env.sampling`;
        ``probability_sampler()`` (floats in [0, 1), as OpenSpiel passes) seeds the draw."""
        rules = self.rules
        if not 0 <= player_id < rules.num_players:
            raise ValueError(f"player must be 0..{rules.num_players - 1}, got {player_id}")
        if self.deal is None:
            raise ValueError("resample_from_infostate needs a dealt deal (this state is still dealing)")
        rng = random.Random(sum(int(float(probability_sampler()) * 2**52) << (52 * i) for i in range(2)))
        world = WorldSampler(InfoSet.from_deal(self.deal, player_id)).sample(rng)
        # The contractor saw every action (its own discards, in their order); any other player saw
        # the world's: the same record, with discards it could not see.
        history = self.deal.history if player_id == self.deal.contractor else world.history
        state = self.get_game().new_initial_state()
        for action in [world.dealer, *(c for hand in (*world.dealt, world.kitty) for c in mask_to_cards(hand))]:
            state.apply_action(action)
        compact = _tables(rules)[0].compact
        for action in history:
            state.apply_action(compact[action])
        return state

    def __str__(self) -> str:
        if self.deal is None:
            return f"dealing: dealer {self.dealer}, {len(self.dealt)} cards dealt"
        return self.deal.describe()

    # -- the checks of what callers pass -------------------------------------------------------
    # OpenSpiel's C++ layer checks some arguments before the Python methods above see them, and
    # stops on a bad one with its CHECK text (apply_action(-1), information_state_string(7)), or
    # answers as if nothing were wrong (legal_actions(9) is []): the public methods that take a
    # player or an action check it here first (_CHECKED_METHODS), naming it in a ValueError.
    def _check_action(self, action: Any, method: str) -> None:
        """Refuse what is not a move here: not a whole number, an action id out of range, a dealer
        outside the seats, a card outside the pack or dealt already."""
        rules = self.rules
        if not _whole(action):
            raise ValueError(f"{method}({action!r}): an action must be a whole number (an action id or a chance outcome)")
        if self.deal is not None:
            size = len(_tables(rules)[0])
            if not 0 <= action < size:
                raise ValueError(f"action {action} is not an action id of this game (0..{size - 1})")
        elif self.dealer < 0:
            if not 0 <= action < rules.num_players:
                raise ValueError(f"chance outcome {action}: the dealer must be a seat 0..{rules.num_players - 1}")
        elif not (0 <= action < NUM_CARD_IDS and rules.deck >> action & 1):
            raise ValueError(f"chance outcome {action}: not a card of the {rules.preset} pack")
        elif action in self.dealt:
            raise ValueError(f"chance outcome {action} ({card_to_str(action, rules.two_jokers)}): dealt already")

    def _check_seat(self, player: Any, method: str) -> None:
        """Refuse a player that is not a seat of the game."""
        if not (_whole(player) and 0 <= player < self.rules.num_players):
            raise ValueError(f"{method}({player!r}): the player must be a seat 0..{self.rules.num_players - 1} "
                             f"of this {self.rules.num_players}-player game")

    def _check_seat_or_chance(self, player: Any, method: str) -> None:
        """Refuse a player that is neither a seat nor the chance player."""
        if not (_whole(player) and (0 <= player < self.rules.num_players or player == pyspiel.PlayerId.CHANCE)):
            raise ValueError(f"{method}({player!r}): the player must be a seat 0..{self.rules.num_players - 1} of "
                             f"this {self.rules.num_players}-player game or the chance player "
                             f"({int(pyspiel.PlayerId.CHANCE)})")

    # -- what a player saw ---------------------------------------------------------------------
    def seen_history(self, player: int) -> str:
        """``player``'s perfect-recall information: its dealt hand, then each action as it saw it
        (others' discards face down, others' ``NO_NOMINATION`` unseen), the kitty when it took
        it, and an open-misère hand when it was exposed."""
        if self.deal is None:
            return f"seat {player}; dealing"
        rules = self.rules
        deal = self.deal
        words = [f"seat {player}; dealer {deal.dealer}; hand {_cards(deal.dealt[player], rules)}"]
        replay = Deal(rules, deal.dealt, deal.kitty, deal.dealer)
        for action in deal.history:
            seat, phase, exposed = replay.to_act, replay.phase, replay.exposed
            replay.apply_action(action)
            if seat != player and (phase == Phase.DISCARD or action == NO_NOMINATION):
                if phase == Phase.DISCARD:
                    words.append(f"{seat}:discard")
            else:
                words.append(f"{seat}:{action_to_str(action, rules)}")
            if phase == Phase.BIDDING and replay.phase == Phase.DISCARD and replay.contractor == player:
                words.append(f"kitty {_cards(deal.kitty, rules)}")
            if replay.exposed and not exposed:
                words.append(f"exposed {replay.contractor}: {_cards(replay.hands[replay.contractor], rules)}")
        return " ".join(words)


def _rules_text(rules: Rules) -> str:
    """The rules as one line of JSON (keys sorted): how a state's text names its rules."""
    return json.dumps(rules.to_dict(), sort_keys=True)


def _cards(mask: int, rules: Rules) -> str:
    return " ".join(card_to_str(c, rules.two_jokers) for c in mask_to_cards(mask))


class FiveHundredObserver:
    """OpenSpiel's PyObserver: the environment's observation vector, and the text views."""

    def __init__(self, game: FiveHundredGame, iig_obs_type: Any) -> None:
        self._perfect_recall = bool(iig_obs_type is not None and iig_obs_type.perfect_recall)
        self.tensor = np.zeros(game.encoder.size, np.float32)
        self.dict = {name: self.tensor[o:o + int(np.prod(shape))].reshape(shape)
                     for name, (o, shape) in game.encoder.layout.items()}

    def set_from(self, state: FiveHundredState, player: int) -> None:
        if state.deal is None:
            self.tensor.fill(0)
            return
        self.tensor[:] = _tables(state.rules)[1].encode(state.deal, player)

    def string_from(self, state: FiveHundredState, player: int) -> str:
        if self._perfect_recall:
            return state.seen_history(player)
        if state.deal is None:
            return state.seen_history(player)
        encoder = _tables(state.rules)[1]
        return encoder.describe(encoder.encode(state.deal, player))


def load_game(rules: str | Rules = "australian", **options: Any) -> pyspiel.Game:
    """The OpenSpiel game of one deal under a preset (or ``Rules``) with options overridden."""
    rules = make_rules(rules, **options)
    preset = make_rules(rules.preset)
    params = {f.name: _to_parameter(f.name, getattr(rules, f.name)) for f in _OPTION_FIELDS
              if getattr(rules, f.name) != getattr(preset, f.name)}
    return pyspiel.load_game(SHORT_NAME, {"preset": rules.preset, **params})


pyspiel.register_game(_GAME_TYPE, FiveHundredGame)
