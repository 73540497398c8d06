"""The rules object: the presets of docs/rules.md §2 and §10.2 and every rule option, validated.

``Rules`` plays the part of OpenSpiel's game parameters: an immutable value that fixes the
players, the deck and every option. Take a preset and override any option::

    rules = make_rules("australian", slam_bonus=False)
    rules = make_rules("french_46", misere="after_seven", both_jokers_min_bid=8)
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from five_hundred_env.cards import DECKS, JOKER2, NUM_CARD_IDS, NUM_CARDS

# The values each option may take (docs/rules.md §2).
OPTION_CHOICES: dict[str, tuple[Any, ...]] = {
    "bidding": ("until_passed", "single_round"),
    "misere": ("after_seven", "any_time", "none"),
    "open_misere": ("between_10D_10H", "highest", "none"),
    "open_misere_exposure": ("after_first_trick", "before_first_lead"),
    "joker_nomination": ("nt_and_misere", "misere_only", "none"),
    "joker_lead_suit": ("not_yet_led", "not_shown_void"),
    "defence_tricks": ("10_per_trick", "none", "only_when_lost"),
    "misere_defence": ("nothing", "10_per_declarer_trick"),
    "partner_call": ("none", "card", "seat"),
}
BOOL_OPTIONS = ("rebid_after_pass", "slam_bonus", "win_needs_contract")
PARTNER_CALL_PLAYERS = 5
"""The number of players whose game calls a partner for each deal (``five_handed``, §10.5)."""
FIXED_BY_PRESET = ("preset", "num_players", "kitty_size", "hand_size")


@dataclass(frozen=True)
class Rules:
    """Every parameter of a game of Five Hundred. Build one with :func:`make_rules`.

    ``preset`` fixes the players, deck, hand and kitty sizes and teams; every other field is a
    rule option of docs/rules.md §2 that may be overridden. The field defaults are the ``australian``
    preset, and the one place its options are written (:data:`PRESETS` builds on them).
    """

    preset: str = "australian"
    num_players: int = 4
    hand_size: int = 10
    kitty_size: int = 3
    bidding: str = "until_passed"
    rebid_after_pass: bool = False
    misere: str = "after_seven"
    misere_value: int = 250
    open_misere: str = "between_10D_10H"
    open_misere_exposure: str = "after_first_trick"
    joker_nomination: str = "nt_and_misere"
    joker_lead_suit: str = "not_yet_led"
    defence_tricks: str = "10_per_trick"
    misere_defence: str = "nothing"
    slam_bonus: bool = True
    win_needs_contract: bool = True
    both_jokers_min_bid: int | None = None
    target: int = 500
    losing_score: int = -500
    partner_call: str = "none"
    """``five_handed`` only (docs/rules.md §10.5): how the contractor of a trick contract calls a
    partner for the deal: ``card`` (whoever holds the card named), ``seat``, or ``none``."""

    def __post_init__(self) -> None:
        if self.preset not in DECKS:
            raise ValueError(f"unknown preset {self.preset!r}: choose one of {', '.join(PRESETS)}")
        base = PRESETS[self.preset]
        for name in FIXED_BY_PRESET[1:]:
            if getattr(self, name) != base[name]:
                raise ValueError(
                    f"option {name!r} is fixed by the preset {self.preset!r} "
                    f"(it is {base[name]!r}); choose another preset instead"
                )
        for name, choices in OPTION_CHOICES.items():
            value = getattr(self, name)
            if value not in choices:
                raise ValueError(f"option {name!r} must be one of {', '.join(choices)}; got {value!r}")
        for name in BOOL_OPTIONS:
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"option {name!r} must be true or false; got {getattr(self, name)!r}")
        if not _is_int(self.misere_value) or self.misere_value <= 0:
            raise ValueError(f"option 'misere_value' must be a positive whole number of points; got {self.misere_value!r}")
        if self.both_jokers_min_bid is not None:
            if not _is_int(self.both_jokers_min_bid) or not 6 <= self.both_jokers_min_bid <= 10:
                raise ValueError(
                    "option 'both_jokers_min_bid' must be off (None) or a number of tricks from 6 to 10; "
                    f"got {self.both_jokers_min_bid!r}"
                )
            if self.num_jokers != 2:
                raise ValueError("option 'both_jokers_min_bid' needs a two-joker deck (preset 'french_46')")
        if self.joker_nomination != "none" and self.num_jokers != 1:
            raise ValueError(
                f"option 'joker_nomination'={self.joker_nomination!r} needs a one-joker deck; "
                "set joker_nomination='none' with two jokers"
            )
        if self.partner_call != "none" and not self.has_partner_call:
            raise ValueError(f"option 'partner_call'={self.partner_call!r} needs five players (preset 'five_handed'); "
                             f"the {self.preset} preset takes partner_call='none'")
        if not _is_int(self.target) or not _is_int(self.losing_score) or not self.target > 0 > self.losing_score:
            raise ValueError(
                f"options 'target' and 'losing_score' must be whole numbers with target > 0 > losing_score; "
                f"got target={self.target!r}, losing_score={self.losing_score!r}"
            )

    @property
    def deck(self) -> int:
        """The deck as a card mask."""
        return DECKS[self.preset]

    @property
    def num_jokers(self) -> int:
        """How many jokers the deck holds (1, or 2 for the 46-card French pack)."""
        return 2 if self.deck >> JOKER2 & 1 else 1

    @property
    def two_jokers(self) -> bool:
        """Whether the deck holds two jokers (the options of two-joker decks apply)."""
        return self.num_jokers == 2

    @property
    def dead_hand_size(self) -> int:
        """The cards dealt to nobody (docs/rules.md §10.3): 10 in ``two_handed``, else 0."""
        return self.deck.bit_count() - self.num_players * self.hand_size - self.kitty_size

    @property
    def card_slots(self) -> int:
        """The width of a card set in observations: the 46 ids of ranks 4–A and the jokers, or
        all 66 card ids for a pack with the extended ranks (2, 3, 11, 12, 13)."""
        return NUM_CARDS if self.deck < 1 << NUM_CARDS else NUM_CARD_IDS

    @property
    def num_sides(self) -> int:
        """The number of sides (:data:`PRESET_SIDES`): two teams with four or six players; each
        player alone with two, three or five."""
        return PRESET_SIDES[self.preset]

    def side_of(self, seat: int) -> int:
        """The side (team or lone player) of a seat: ``seat % num_sides``, so with four players
        seats {0, 2} are team 0 and {1, 3} team 1, with six {0, 2, 4} and {1, 3, 5}."""
        return seat % self.num_sides

    def seats_of(self, side: int) -> tuple[int, ...]:
        """The seats of a side, in seat order."""
        return tuple(s for s in range(self.num_players) if self.side_of(s) == side)

    def partners_of(self, seat: int) -> tuple[int, ...]:
        """The seat's fixed team-mates, in seat order (none when it plays alone; a five-handed
        partner is called per deal, :attr:`Deal.partner`)."""
        return tuple(s for s in self.seats_of(self.side_of(seat)) if s != seat)

    def partner_of(self, seat: int) -> int | None:
        """The seat's one fixed partner with four players, or ``None`` when it plays alone; with six
        players a seat has two team-mates: use :meth:`partners_of`."""
        mates = self.partners_of(seat)
        if len(mates) > 1:
            raise ValueError(f"seat {seat} has {len(mates)} team-mates in {self.preset}; use partners_of")
        return mates[0] if mates else None

    @property
    def has_partner_call(self) -> bool:
        """Whether the game knows the partner call (§10.5): with five players its actions
        (``PARTNER_0 …``) and observation slices exist, whatever ``partner_call`` is set to."""
        return self.num_players == PARTNER_CALL_PLAYERS

    @property
    def has_partners(self) -> bool:
        """Whether the players form fixed teams (four and six players)."""
        return self.num_sides < self.num_players

    def to_dict(self) -> dict[str, Any]:
        """Every field, as plain JSON-able data (``partner_call`` only with five players: the other
        presets have no call, and their records stay as they were before it existed)."""
        data = dataclasses.asdict(self)
        if not self.has_partner_call:
            data.pop("partner_call")
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Rules:
        """Rebuild rules from :meth:`to_dict` output; unknown keys are an error naming them."""
        if not isinstance(data, dict):
            raise ValueError(f"rules must be a mapping of options, got {type(data).__name__}")
        data = dict(data)
        preset = data.pop("preset", "australian")
        for name in FIXED_BY_PRESET[1:]:
            if name in data and preset in PRESETS and data[name] == PRESETS[preset][name]:
                data.pop(name)
        return make_rules(preset, **data)

    def describe(self) -> str:
        """A one-line summary of the options that differ from the preset."""
        base = make_rules(self.preset)
        diff = [f"{f.name}={getattr(self, f.name)!r}" for f in dataclasses.fields(self)
                if getattr(self, f.name) != getattr(base, f.name)]
        return self.preset + (f" ({', '.join(diff)})" if diff else "")


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


_AUSTRALIAN = {f.name: f.default for f in dataclasses.fields(Rules) if f.name not in ("preset", "partner_call")}
# The Rules field defaults are the australian preset (the default one): its options live there
# once, and the other presets are written as their differences from it. partner_call is set by
# the five-player preset only (the others have no call: their rules dicts leave it out, to_dict).
PRESETS: dict[str, dict[str, Any]] = {
    "australian": _AUSTRALIAN,
    "italian_3p": {
        **_AUSTRALIAN, "num_players": 3, "bidding": "single_round", "misere": "any_time",
        "open_misere": "highest", "open_misere_exposure": "before_first_lead", "joker_nomination": "none",
        "joker_lead_suit": "not_shown_void", "misere_defence": "10_per_declarer_trick", "slam_bonus": False,
    },
    "french_46": {
        **_AUSTRALIAN, "kitty_size": 6, "misere": "none", "open_misere": "none", "joker_nomination": "none",
        "joker_lead_suit": "not_shown_void", "slam_bonus": False, "win_needs_contract": False,
    },
}
# §10.2: two_handed takes the italian_3p options, five_handed and six_handed the australian ones.
PRESETS["two_handed"] = {**PRESETS["italian_3p"], "num_players": 2}
PRESETS["five_handed"] = {**_AUSTRALIAN, "num_players": 5, "partner_call": "card"}
PRESETS["six_handed"] = {**_AUSTRALIAN, "num_players": 6}
"""The options each preset sets (docs/rules.md §2, §10.2)."""

PRESET_SIDES = {"australian": 2, "italian_3p": 3, "french_46": 2, "two_handed": 2, "five_handed": 5, "six_handed": 2}
"""How many sides each preset's players form: seat ``s`` plays for side ``s % sides``, so with
four players in two sides the partners sit opposite (seats 0 and 2, 1 and 3), with six in two
sides they alternate ({0, 2, 4} and {1, 3, 5}), and with two, three or five players each plays
alone."""

_FIELD_NAMES = {f.name for f in dataclasses.fields(Rules)}


def make_rules(preset: str | Rules = "australian", **overrides: Any) -> Rules:
    """The rules of a preset (``australian``, ``italian_3p``, ``french_46``, ``two_handed``,
    ``five_handed``, ``six_handed``) with options overridden.

    Unknown options, invalid values and invalid combinations raise ``ValueError`` naming the option.
    """
    if isinstance(preset, Rules):
        base = preset.to_dict()
        preset = base.pop("preset")
    elif preset in PRESETS:
        base = dict(PRESETS[preset])
    else:
        raise ValueError(f"unknown preset {preset!r}: choose one of {', '.join(PRESETS)}")
    for name in overrides:
        if name not in _FIELD_NAMES or name == "preset":
            raise ValueError(f"unknown rule option {name!r}; options are: {', '.join(sorted(_FIELD_NAMES - {'preset'}))}")
    base.update(overrides)
    return Rules(preset=preset, **base)
