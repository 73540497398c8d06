"""Shared helpers for the rules tests: explicit deals from card names, and actions as strings.

Every helper works through the public API only (``Deal.from_cards``, ``parse_action``,
``apply_action``, ``legal_actions``, ``action_to_str``), so a test reads like the notation of
docs/rules.md §1::

    d = make_deal("australian", [S0, S1, S2, S3], dealer=3)
    act(d, "7H PASS PASS PASS")          # the auction
    discard_kitty(d)                     # the contractor throws the kitty back out
    assert legal(d) == {...}
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping

from five_hundred_env import Deal, Rules, action_to_str, make_rules, parse_action
from five_hundred_env.cards import card_to_str, mask_to_cards, parse_card
from five_hundred_env.engine import Phase

PRESET_NAMES = ("australian", "italian_3p", "french_46")
"""The presets of sections 1-9, which these rules tests check; tests/test_presets_2_5_6.py checks section 10."""


def rules_of(rules: Rules | str, **options) -> Rules:
    """A rules object from a preset name (with options) or a rules object (options applied)."""
    if isinstance(rules, Rules):
        return make_rules(rules, **options) if options else rules
    return make_rules(rules, **options)


def cards(text: str | Iterable[str]) -> list[str]:
    """``"Ah Kh JK"`` → ``["Ah", "Kh", "JK"]`` (a list is passed through)."""
    return text.split() if isinstance(text, str) else list(text)


def deck_names(rules: Rules) -> list[str]:
    """Every card of the deck by name, in card-id order (S, C, D, H low to high, then jokers)."""
    return [card_to_str(c, rules.two_jokers) for c in mask_to_cards(rules.deck)]


def make_deal(rules: Rules | str, hands, kitty=None, dealer: int = 0, **options) -> Deal:
    """An explicit deal. ``hands`` is a list with one entry per seat (a string of card names, a
    list of names, or ``None``), or a mapping seat → cards. Seats given as ``None`` (or missing
    from the mapping), then the kitty if ``None``, are filled with the cards nobody was given, in
    card-id order — deterministic, and every card the test relies on is named explicitly."""
    rules = rules_of(rules, **options)
    n = rules.num_players
    if isinstance(hands, Mapping):
        hands = [hands.get(s) for s in range(n)]
    given = [None if h is None else cards(h) for h in hands]
    kit = None if kitty is None else cards(kitty)
    used = {parse_card(c, rules.two_jokers) for h in [*given, kit] if h for c in h}
    rest = [card_to_str(c, rules.two_jokers) for c in mask_to_cards(rules.deck) if c not in used]
    for s in range(n):
        if given[s] is None:
            given[s], rest = rest[: rules.hand_size], rest[rules.hand_size:]
    if kit is None:
        kit, rest = rest[: rules.kitty_size], rest[rules.kitty_size:]
    return Deal.from_cards(rules, given, kit, dealer)


def act(deal, actions: str | Iterable[str]) -> None:
    """Apply actions written as strings, in order (``"7H PASS PASS PASS"``)."""
    for text in cards(actions):
        deal.apply_action(parse_action(text, deal.rules))


def legal(deal) -> set[str]:
    """The legal actions of the player to act, as strings."""
    return {action_to_str(a, deal.rules) for a in deal.legal_actions()}


def hand(deal, seat: int) -> set[str]:
    """The cards a seat holds now, by name."""
    return {card_to_str(c, deal.rules.two_jokers) for c in mask_to_cards(deal.hands[seat])}


def names(deal, mask: int) -> set[str]:
    return {card_to_str(c, deal.rules.two_jokers) for c in mask_to_cards(mask)}


def card_name(deal, card: int) -> str:
    return card_to_str(card, deal.rules.two_jokers)


def discard_kitty(deal, extra: str = "") -> None:
    """In the kitty phase, discard exactly the kitty's cards (so the contractor's hand is the one
    dealt), then ``extra`` actions (e.g. ``"NO_NOMINATION"``)."""
    assert deal.phase == Phase.DISCARD, deal.phase
    act(deal, [card_name(deal, c) for c in mask_to_cards(deal.kitty)])
    if extra:
        act(deal, extra)


def play_trick(deal, *plays: str | None) -> tuple:
    """Play one whole trick. Each entry is the action of the next player to act, or ``None`` for
    that player's first legal action (lowest id). Returns the finished trick
    ``(leader, led suit, ((seat, card), …), winner)``."""
    before = len(deal.tricks)
    for p in plays:
        if p is None:
            deal.apply_action(deal.legal_actions()[0])
        else:
            act(deal, p)
    while len(deal.tricks) == before:
        deal.apply_action(deal.legal_actions()[0])
    return deal.tricks[-1]


def play_out(deal, prefs: Mapping[int, str] | None = None) -> None:
    """Play the deal to its end: each seat plays the first card of its preference list (in
    ``prefs``) that is legal, else its first legal action (lowest id)."""
    prefs = {s: cards(p) for s, p in (prefs or {}).items()}
    while not deal.is_over:
        options = deal.legal_actions()
        choice = options[0]
        for text in prefs.get(deal.to_act, []):
            a = parse_action(text, deal.rules)
            if a in options:
                choice = a
                break
        deal.apply_action(choice)


def random_play(deal_or_game, rng: random.Random, max_actions: int = 10_000) -> None:
    """Play uniformly random legal actions until the deal (or game) is over."""
    for _ in range(max_actions):
        if deal_or_game.is_over:
            return
        deal_or_game.apply_action(rng.choice(deal_or_game.legal_actions()))
    raise AssertionError("the deal or game did not end")


def rotate(hands: list, k: int) -> list:
    """The hands moved ``k`` seats to the left: seat ``i``'s cards go to seat ``i + k``."""
    n = len(hands)
    return [hands[(s - k) % n] for s in range(n)]


def trick_cards(deal, trick) -> list[str]:
    return [card_name(deal, c) for _, c in trick[2]]


# -- forced deals: the outcome does not depend on how anyone plays -------------------------------

# [AU] hearts trumps: seat 0 holds the seven top trumps and the three lowest spades; seat 1 the
# six other trumps and four high spades; seat 2 only low clubs and diamonds; seat 3 high clubs,
# diamonds and spades. Seat 0 wins exactly its seven trump leads; team 1 the other three tricks
# (seat 0's spades are the lowest, seat 2 holds nothing that can win).
AU_SEVEN = [
    "JK Jh Jd Ah Kh Qh Th 5s 6s 7s",
    "9h 8h 7h 6h 5h 4h As Ks Qs Js",
    "5c 6c 7c 8c 9c 4d 5d 6d 7d 8d",
    "8s 9s Ts Tc Jc Qc Kc Ac 9d Td",
]
AU_SEVEN_KITTY = "Qd Kd Ad"
AU_SEVEN_LEADS = "JK Jh Jd Ah Kh Qh Th 5s 6s 7s"

# [FR] the same shape in the 46-card deck (kitty of 6).
FR_SEVEN = [
    "JK1 JK2 Jh Jd Ah Kh Qh 4s 5s 6s",
    "Th 9h 8h 7h 6h 5h 4h As Ks Qs",
    "4c 5c 6c 7c 8c 4d 5d 6d 7d 8d",
    "7s 8s 9s Ts Js 9c Tc Jc Qc Kc",
]
FR_SEVEN_KITTY = "Ac 9d Td Qd Kd Ad"
FR_SEVEN_LEADS = "JK1 JK2 Jh Jd Ah Kh Qh 4s 5s 6s"

# The ten highest trumps with hearts trumps: whoever holds them wins all ten tricks.
TOP_HEARTS = {
    "australian": "JK Jh Jd Ah Kh Qh Th 9h 8h 7h",
    "italian_3p": "JK Jh Jd Ah Kh Qh Th 9h 8h 7h",
    "french_46": "JK1 JK2 Jh Jd Ah Kh Qh Th 9h 8h",
    "two_handed": "JK Jh Jd Ah Kh Qh Th 9h 8h 7h",
    "five_handed": "JK Jh Jd Ah Kh Qh Th 9h 8h 7h",
    "six_handed": "JK Jh Jd Ah Kh Qh Xh Wh Eh Th",
}


def all_tricks_deal(rules: Rules | str, holder: int, dealer: int, **options) -> Deal:
    """A deal where ``holder`` has the ten top hearts (so wins every trick with hearts trumps)."""
    rules = rules_of(rules, **options)
    return make_deal(rules, {holder: TOP_HEARTS[rules.preset]}, dealer=dealer)


def pytest_sessionstart(session) -> None:
    """The batched engine imported before any test captures output: on a cold numba cache (a fresh
    checkout) its import says on standard error that it compiles, which would otherwise land in the
    captured output of whichever test happened to import it first."""
    try:
        import five_hundred_env.vector  # noqa: F401
    except ImportError:  # numba is not installed: the vector tests skip
        pass


def pytest_collection_modifyitems(config, items) -> None:
    """Tests marked ``full`` (long runs) are skipped unless the ``-m`` expression names them."""
    import pytest

    if "full" in (config.getoption("markexpr") or ""):
        return
    skip = pytest.mark.skip(reason="a long run: select it with -m full")
    for item in items:
        if "full" in item.keywords:
            item.add_marker(skip)
