"""Cards, suits and decks of Five Hundred (docs/rules.md §1, §2, §10), with card sets as integer bit masks.

Every card of every preset has one id in a universal space of 66 cards:
``suit * 11 + rank`` for the suited cards of ranks ``4 … A`` (suits ``S C D H`` = 0..3, ranks
``4 … A`` = 0..10), 44 and 45 for the jokers, and ``46 + 5 * suit + k`` for the ranks only the
five- and six-handed packs have (k = 0 ``2``, 1 ``3``, 2 ``E`` (11), 3 ``W`` (12), 4 ``X`` (13)).
The first 46 ids (:data:`NUM_CARDS`) are every card of the packs of three and four players, so
those presets keep 46-wide card slices; the extended packs use all :data:`NUM_CARD_IDS`. A set of
cards is an ``int`` whose bit ``id`` is set for each card in it. The same ids serve every preset;
a preset's deck is a mask over them.
"""

from __future__ import annotations

from collections.abc import Iterable

SUITS = "SCDH"
"""Suit letters in bidding order: spades, clubs, diamonds, hearts (docs/rules.md §1)."""
SUIT_SYMBOLS = "♠♣♦♥"
RANKS = "456789TJQKA"
"""Rank letters from low to high in a plain suit (docs/rules.md §6)."""

NUM_SUITS = 4
NUM_RANKS = 11
JOKER1 = 44
"""The (higher) joker: ``JK`` in one-joker decks, ``JK1`` (la Blanche) in two-joker decks."""
JOKER2 = 45
"""The lower joker ``JK2`` (le Bonhomme), only in two-joker decks."""
NUM_CARDS = 46
"""The card ids of ranks 4–A and the jokers: every card of the three- and four-player packs."""
EXTRA_RANKS = "23EWX"
"""The ranks of the extended packs (docs/rules.md §10.1), in id order: ``2``, ``3``, 11, 12, 13."""
FIRST_EXTRA_CARD = NUM_CARDS
NUM_CARD_IDS = FIRST_EXTRA_CARD + NUM_SUITS * len(EXTRA_RANKS)  # 66
"""Every card id of every pack."""
JOKERS_MASK = (1 << JOKER1) | (1 << JOKER2)
PLAIN_ORDER = "23456789TEWXJQKA"
"""Every rank any pack has, low to high in a plain suit (docs/rules.md §10.1)."""
_RANK_NAMES = {"10": "T", "11": "E", "12": "W", "13": "X"}
"""The two-digit spellings the parser accepts for ``T``, ``E``, ``W``, ``X``."""

RANK_JACK = RANKS.index("J")


def card_id(suit: int, rank: int) -> int:
    """The id of the suited card of ``suit`` (0..3) and ``rank`` (0..10)."""
    return suit * NUM_RANKS + rank


def extra_card_id(suit: int, rank_letter: str) -> int:
    """The id of the extended-pack card of ``suit`` (0..3) and rank ``2``, ``3``, ``E``, ``W`` or ``X``."""
    return FIRST_EXTRA_CARD + 5 * suit + EXTRA_RANKS.index(rank_letter)


def card_suit(card: int) -> int:
    """The printed suit of a suited card (0..3); jokers have none (-1)."""
    if card < JOKER1:
        return card // NUM_RANKS
    return (card - FIRST_EXTRA_CARD) // 5 if card >= FIRST_EXTRA_CARD else -1


def card_rank(card: int) -> int:
    """The rank index (0 = 4 … 10 = ace) of a card of ranks 4–A; -1 for a joker or an extended rank."""
    return card % NUM_RANKS if card < JOKER1 else -1


def rank_letter(card: int) -> str:
    """The rank letter of a suited card (``4`` … ``A``, ``2``, ``3``, ``E``, ``W``, ``X``)."""
    if card < JOKER1:
        return RANKS[card % NUM_RANKS]
    return EXTRA_RANKS[(card - FIRST_EXTRA_CARD) % 5]


def plain_rank(card: int) -> int:
    """A suited card's place in :data:`PLAIN_ORDER` (0 = ``2`` … 15 = ace)."""
    return PLAIN_ORDER.index(rank_letter(card))


def is_joker(card: int) -> bool:
    return card == JOKER1 or card == JOKER2


SUIT_MASKS = tuple(((1 << NUM_RANKS) - 1) << (s * NUM_RANKS) | 0b11111 << (FIRST_EXTRA_CARD + 5 * s)
                   for s in range(NUM_SUITS))
"""The printed cards of each suit (no jokers), extended ranks included."""


def suit_of_letter(letter: str) -> int:
    """The suit index of a suit letter, either case; raises ``ValueError`` naming the letter."""
    i = SUITS.find(letter.upper()) if len(letter) == 1 else -1
    if i < 0:
        raise ValueError(f"unknown suit {letter!r}: expected one of S, C, D, H")
    return i


def _make_deck(ranks_by_suit: dict[str, str], jokers: int) -> int:
    deck = 0
    for suit_letter, ranks in ranks_by_suit.items():
        s = SUITS.index(suit_letter)
        for r in ranks:
            deck |= 1 << (card_id(s, RANKS.index(r)) if r in RANKS else extra_card_id(s, r))
    deck |= 1 << JOKER1
    if jokers == 2:
        deck |= 1 << JOKER2
    return deck


DECKS = {
    # [AU]: hearts and diamonds 4–A, spades and clubs 5–A, one joker: 43 cards.
    "australian": _make_deck({"S": RANKS[1:], "C": RANKS[1:], "D": RANKS, "H": RANKS}, 1),
    # [IT]: 7–A in each suit, one joker: 33 cards.
    "italian_3p": _make_deck({s: RANKS[3:] for s in SUITS}, 1),
    # [FR]: 4–A in each suit, two jokers: 46 cards.
    "french_46": _make_deck({s: RANKS for s in SUITS}, 2),
    # [BC2]: the italian_3p pack; ten of its cards are the dead hand (§10.3).
    "two_handed": _make_deck({s: RANKS[3:] for s in SUITS}, 1),
    # [BC5]: 2–A in each suit and the joker: 53 cards.
    "five_handed": _make_deck({s: "23" + RANKS for s in SUITS}, 1),
    # [BC6, WP, PG]: 2–A, 11 and 12 in each suit, 13 in hearts and diamonds, the joker: 63 cards.
    "six_handed": _make_deck({"S": "23EW" + RANKS, "C": "23EW" + RANKS, "D": "23EWX" + RANKS, "H": "23EWX" + RANKS}, 1),
}
"""The deck of each preset as a card mask (docs/rules.md §2)."""


KERNEL_MASK_BITS = 64
"""The width of the card masks of the compiled (numba) kernels: one ``int64`` word."""


def kernel_card_ids(deck: int) -> tuple[int, ...]:
    """Each universal card id's bit in the compiled kernels' 64-bit card masks, for the pack ``deck``
    (-1 for an id not in the pack).

    Every pack has at most 63 cards, but ``six_handed``'s hearts 12 and 13 hold ids 64 and 65: those
    take the lowest ids below 64 that the pack lacks and that are no joker's (there, spades 13 and
    clubs 13), so a kernel must read suits and ranks from tables indexed by these bits, never from the
    bit itself. Every other card keeps its id: the packs of two to five players map to themselves.
    """
    free = [c for c in range(KERNEL_MASK_BITS) if not deck >> c & 1 and c not in (JOKER1, JOKER2)]
    bits = []
    for c in range(NUM_CARD_IDS):
        if not deck >> c & 1:
            bits.append(-1)
        elif c < KERNEL_MASK_BITS:
            bits.append(c)
        else:
            bits.append(free.pop(0))
    return tuple(bits)


def popcount(mask: int) -> int:
    return mask.bit_count()


def mask_to_cards(mask: int) -> list[int]:
    """The card ids of a mask, lowest id first."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def cards_to_mask(cards: Iterable[int]) -> int:
    mask = 0
    for c in cards:
        mask |= 1 << c
    return mask


def card_to_str(card: int, two_jokers: bool = False) -> str:
    """The canonical name of a card: ``Ah``, ``Td``, ``Xh`` (13♥), ``JK`` (one joker) or ``JK1``/``JK2``."""
    if card == JOKER1:
        return "JK1" if two_jokers else "JK"
    if card == JOKER2:
        return "JK2"
    if not isinstance(card, int) or not 0 <= card < NUM_CARD_IDS:
        raise ValueError(f"no card has id {card!r}")
    return rank_letter(card) + SUITS[card_suit(card)].lower()


def parse_card(text: str, two_jokers: bool = False) -> int:
    """Parse a card name (docs/rules.md §1, §10.1): rank then suit, ``10``/``11``/``12``/``13``
    for ``T``/``E``/``W``/``X``, suit in either case.

    Jokers are ``JK`` in a one-joker deck and ``JK1``/``JK2`` in a two-joker deck. Raises
    ``ValueError`` saying what is wrong.
    """
    if not isinstance(text, str):
        raise ValueError(f"a card name must be a string, got {text!r}")
    t = text.strip()
    up = t.upper()
    if up.startswith("JK"):
        if two_jokers:
            if up == "JK1":
                return JOKER1
            if up == "JK2":
                return JOKER2
            raise ValueError(f"bad card {text!r}: this deck has two jokers, JK1 and JK2")
        if up == "JK":
            return JOKER1
        raise ValueError(f"bad card {text!r}: this deck has one joker, written JK")
    if len(t) < 2:
        raise ValueError(f"bad card {text!r}: expected a rank then a suit, like Ah or 10d")
    rank_text, suit_text = t[:-1], t[-1]
    rank = _RANK_NAMES.get(rank_text, rank_text.upper())
    if len(rank) != 1 or rank not in PLAIN_ORDER:
        raise ValueError(f"bad card {text!r}: unknown rank {rank_text!r} "
                         "(ranks are 2-9, T or 10, E or 11, W or 12, X or 13, J, Q, K, A)")
    try:
        s = suit_of_letter(suit_text)
    except ValueError:
        raise ValueError(f"bad card {text!r}: unknown suit {suit_text!r} (suits are s, c, d, h)") from None
    return card_id(s, RANKS.index(rank)) if rank in RANKS else extra_card_id(s, rank)
