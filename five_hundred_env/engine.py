"""The rules engine: one deal (:class:`Deal`) and the game to 500 (:class:`Game`).

Pure Python over plain data: card sets are ``int`` bit masks (see :mod:`cards`), actions are
universal ids (see :mod:`actions`), and the per-contract card orders are tables precomputed
once. Each rule of RULES.md lives in one place, named after its section:

* §3 the deal ........ :meth:`Deal.new`, :meth:`Deal.from_cards`, :meth:`Game._start_deal`
* §4 bidding ......... :meth:`Deal._bidding_actions`, :meth:`Deal._apply_bid`, :func:`bid_rank`
* §5 the kitty ....... :meth:`Deal._end_auction`, :meth:`Deal._apply_discard`
* §6 card order ...... :func:`_build_tables` (``EFFECTIVE_SUIT``, ``SUIT_CARDS``, ``WIN_KEY``)
* §7 play ............ :meth:`Deal.legal_actions`, :meth:`Deal._lead_actions`, :meth:`Deal._joker_lead_suits`,
                        :meth:`Deal._apply_play`
* §8 scoring ......... :mod:`five_hundred_env.scoring` (:func:`deal_score`)
* §9 winning ......... :meth:`Game._end_of_deal`

At every decision point ``to_act`` is the seat to move, ``legal_actions()`` the legal universal
action ids, and ``apply_action(a)`` plays one; an illegal action raises
:class:`IllegalActionError` and leaves the state untouched.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from enum import IntEnum

from five_hundred_env.actions import (
    FIRST_CARD_ACTION,
    FIRST_JOKER_LEAD,
    FIRST_NOMINATE,
    MISERE,
    NO_NOMINATION,
    NT,
    OPEN_MISERE,
    PASS,
    action_to_str,
    bid_action,
    bid_strain,
    bid_tricks,
    is_trick_bid,
)
from five_hundred_env.cards import (
    JOKER1,
    JOKER2,
    JOKERS_MASK,
    NUM_CARDS,
    NUM_RANKS,
    RANK_JACK,
    card_id,
    card_to_str,
    mask_to_cards,
    parse_card,
)
from five_hundred_env.rules import Rules, make_rules
from five_hundred_env.scoring import contract_made, deal_score


class Phase(IntEnum):
    """Where a deal (or game) stands."""

    BIDDING = 0
    DISCARD = 1
    NOMINATE = 2
    PLAY = 3
    DEAL_OVER = 4
    GAME_OVER = 5


# Plain-int phases for the hot paths (IntEnum members compare equal to these).
_BIDDING, _DISCARD, _NOMINATE, _PLAY = 0, 1, 2, 3


class IllegalActionError(ValueError):
    """An action that is not legal here. The message names it and the legal actions."""


# ---------------------------------------------------------------------------------------------
# §4 bid order. Trick bids rank 0, 2, … 48 (by tricks, then S < C < D < H < NT); misère sits
# at 19, between every 7-trick bid (≤ 18) and every 8-trick bid (≥ 20); open misère at 45,
# between 10D (44) and 10H (46), or at 50 above everything.
# ---------------------------------------------------------------------------------------------
NO_BID_RANK = -1
MISERE_RANK = 19
OPEN_MISERE_RANKS = {"between_10D_10H": 45, "highest": 50}


def bid_rank(action: int, rules: Rules) -> int:
    """The position of a bid in the bid order of RULES.md §4 (higher outranks lower)."""
    if action == MISERE:
        return MISERE_RANK
    if action == OPEN_MISERE:
        return OPEN_MISERE_RANKS[rules.open_misere]
    return 2 * (action - 1)


# ---------------------------------------------------------------------------------------------
# §6 card order, precomputed per *trump context*: 0-3 = that suit is trumps; 4 = no trumps
# (and misère) with a suitless joker; 5-8 = no trumps with the joker nominated to suit ctx-5.
# ---------------------------------------------------------------------------------------------
NO_TRUMP_CTX = 4
SUITLESS = 4
"""The effective suit of a joker that belongs to no suit."""


def _build_tables() -> tuple[list[list[int]], list[list[int]], list[list[list[int]]]]:
    effective_suit: list[list[int]] = []
    suit_cards: list[list[int]] = []
    win_key: list[list[list[int]]] = []
    for ctx in range(9):
        trump = ctx if ctx < 4 else -1
        nominated = ctx - 5 if ctx >= 5 else -1
        eff = [0] * NUM_CARDS
        power = [0] * NUM_CARDS
        for c in range(NUM_CARDS):
            if c >= JOKER1:
                if trump >= 0:
                    eff[c] = trump
                    power[c] = 22 if c == JOKER1 else 21  # JK1 above JK2 [FR]
                elif nominated >= 0:
                    eff[c] = nominated
                    power[c] = 20  # the highest card of the nominated suit [AU]
                else:
                    eff[c] = SUITLESS
                    power[c] = 1 if c == JOKER1 else 0
                continue
            s, r = divmod(c, NUM_RANKS)
            eff[c], power[c] = s, r
            if trump >= 0 and r == RANK_JACK:
                if s == trump:
                    power[c] = 20  # right bower
                elif s == trump ^ 1:  # the other jack of the same colour: S<->C, D<->H
                    eff[c], power[c] = trump, 19  # left bower, a trump for the whole deal
        masks = [0] * 5
        for c in range(NUM_CARDS):
            masks[eff[c]] |= 1 << c
        keys = []
        for led in range(4):
            row = []
            for c in range(NUM_CARDS):
                if eff[c] == SUITLESS:
                    row.append(300 + power[c])  # wins any trick it is played to
                elif eff[c] == trump:
                    row.append(200 + power[c])
                elif eff[c] == led:
                    row.append(100 + power[c])
                else:
                    row.append(0)
            keys.append(row)
        effective_suit.append(eff)
        suit_cards.append(masks)
        win_key.append(keys)
    return effective_suit, suit_cards, win_key


EFFECTIVE_SUIT, SUIT_CARDS, WIN_KEY = _build_tables()
"""``EFFECTIVE_SUIT[ctx][card]``: the suit a card belongs to (4 = suitless joker);
``SUIT_CARDS[ctx][suit]``: the mask of cards of that effective suit;
``WIN_KEY[ctx][led][card]``: the card's strength in a trick led in ``led`` (highest wins)."""


def _card_actions_table() -> list[list[tuple[int, ...]]]:
    """For each suit, every 11-bit pattern of its cards → their card actions; row 4: the jokers."""
    table = []
    for s in range(4):
        row = []
        for pattern in range(1 << NUM_RANKS):
            row.append(tuple(FIRST_CARD_ACTION + s * NUM_RANKS + r for r in range(NUM_RANKS) if pattern >> r & 1))
        table.append(row)
    table.append([tuple(FIRST_CARD_ACTION + JOKER1 + j for j in range(2) if pattern >> j & 1) for pattern in range(4)])
    return table


_S, _C, _D, _H, _J = _card_actions_table()
_RANK_BITS = (1 << NUM_RANKS) - 1


def card_actions(mask: int) -> list[int]:
    """The card actions of a card mask, in card order (one table lookup per suit)."""
    return [*_S[mask & _RANK_BITS], *_C[mask >> 11 & _RANK_BITS], *_D[mask >> 22 & _RANK_BITS],
            *_H[mask >> 33 & _RANK_BITS], *_J[mask >> JOKER1]]


_DECK_BITS: dict[int, list[int]] = {}


def _deck_bits(deck: int) -> list[int]:
    """A fresh list of the single-card masks of a deck (cached per deck)."""
    bits = _DECK_BITS.get(deck)
    if bits is None:
        bits = _DECK_BITS[deck] = [1 << c for c in mask_to_cards(deck)]
    return list(bits)


class Deal:
    """The state of one deal: bidding, kitty, nomination, ten tricks, and its score.

    Attributes are plain data (ints, lists of ints, masks) and are read-only for users; change
    the state only through :meth:`apply_action`. Seats are ``0 … n-1`` clockwise.
    """

    __slots__ = (
        "_both_jokers_seat",
        "_legal",
        "_next_seat",
        "_num_tricks",
        "_trick_size",
        "bids",
        "contract",
        "contractor",
        "ctx",
        "dealer",
        "dealt",
        "discards",
        "exposed",
        "hands",
        "high_bid",
        "high_bidder",
        "history",
        "kitty",
        "leader",
        "led_suit",
        "misere",
        "n",
        "nominated",
        "passed",
        "passes_in_row",
        "phase",
        "played",
        "rules",
        "score_change",
        "shown_void",
        "sitting_out",
        "suits_led",
        "thrown_in",
        "to_act",
        "trick",
        "tricks",
        "tricks_won",
        "trump",
    )

    def __init__(self, rules: Rules, hands: Sequence[int], kitty: int, dealer: int) -> None:
        """A deal from card masks; prefer :meth:`new` (shuffled) or :meth:`from_cards` (names)."""
        n = rules.num_players
        self.rules = rules
        self.n = n
        self.dealer = dealer
        self.dealt: tuple[int, ...] = tuple(hands)
        """The hands as dealt (before the kitty)."""
        self.kitty = kitty
        """The kitty as dealt; it stays recorded after the contractor takes it."""
        self.hands = list(hands)
        self.phase = Phase.BIDDING
        self.to_act = (dealer + 1) % n
        self.history: list[int] = []
        """Every action of the deal, in order (universal ids)."""
        self.bids: list[tuple[int, int]] = []
        """The auction as (seat, action) pairs, passes included."""
        self.passed = 0  # seats that passed, as a bit set
        self.passes_in_row = 0
        self.high_bid = -1
        self.high_bidder = -1
        self.contract = -1
        self.contractor = -1
        self.ctx = NO_TRUMP_CTX
        self.trump = -1
        self.misere = False
        self.sitting_out = -1
        """The contractor's partner in a 4-player misère; -1 otherwise."""
        self.discards = 0
        self.nominated = -1
        """The suit nominated for the joker (§7), or -1."""
        self.leader = -1
        self.led_suit = -1
        """The suit led to the current trick (named by a joker lead, if so), or -1."""
        self.trick: list[tuple[int, int]] = []
        """The current trick as (seat, card) pairs."""
        self.tricks: list[tuple[int, int, tuple[tuple[int, int], ...], int]] = []
        """Finished tricks as (leader, led suit, ((seat, card), …), winner)."""
        self.tricks_won = [0] * n
        self.played = [0] * n
        """The cards each seat has played, as masks."""
        self.suits_led = 0
        self.shown_void = [0] * n
        """For each seat, the suits (bits 0-3) it has failed to follow."""
        self.exposed = False
        """Whether the open-misère contractor's hand is face up now."""
        self.thrown_in = False
        self.score_change: list[int] | None = None
        """Each side's score change, once the deal is over."""
        self._legal: list[int] | None = None
        self._next_seat = [(s + 1) % n for s in range(n)]  # clockwise, skipping a sitting-out partner
        self._trick_size = n
        self._num_tricks = rules.hand_size
        self._both_jokers_seat = -1
        if rules.both_jokers_min_bid is not None:
            for seat, hand in enumerate(hands):
                if hand & JOKERS_MASK == JOKERS_MASK:
                    self._both_jokers_seat = seat

    # -- §3 the deal ------------------------------------------------------------------------
    @classmethod
    def new(cls, rules: Rules, rng: random.Random, dealer: int) -> Deal:
        """A uniformly shuffled deal (the dealing pattern does not change the distribution, §3)."""
        bits = _deck_bits(rules.deck)
        rng.shuffle(bits)
        size = rules.hand_size
        hands = [sum(bits[i * size:(i + 1) * size]) for i in range(rules.num_players)]
        return cls(rules, hands, sum(bits[rules.num_players * size:]), dealer)

    @classmethod
    def from_cards(
        cls, rules: Rules, hands: Sequence[Sequence[str]], kitty: Sequence[str], dealer: int = 0
    ) -> Deal:
        """An explicit deal from card names; wrong counts, duplicates and foreign cards are errors."""
        hand_masks, kitty_mask = parse_deal(rules, hands, kitty, dealer)
        return cls(rules, hand_masks, kitty_mask, dealer)

    def clone(self) -> Deal:
        """An independent copy of this deal (plain data, no replay): the copy and the original
        can then be played on separately, as search and rollouts need."""
        copy = Deal.__new__(Deal)
        for name in _DEAL_SCALARS:
            setattr(copy, name, getattr(self, name))
        copy.hands = self.hands.copy()
        copy.history = self.history.copy()
        copy.bids = self.bids.copy()
        copy.trick = self.trick.copy()
        copy.tricks = self.tricks.copy()
        copy.tricks_won = self.tricks_won.copy()
        copy.played = self.played.copy()
        copy.shown_void = self.shown_void.copy()
        copy._next_seat = self._next_seat.copy()
        copy.score_change = None if self.score_change is None else self.score_change.copy()
        copy._legal = None
        return copy

    # -- queries -----------------------------------------------------------------------------
    @property
    def is_over(self) -> bool:
        return self.phase >= Phase.DEAL_OVER

    def side_of(self, seat: int) -> int:
        return self.rules.side_of(seat)

    def legal_actions(self) -> list[int]:
        """The legal universal action ids of the player to act (empty once the deal is over).

        The list is cached until the next action and shared: copy it before changing it.
        """
        legal = self._legal
        if legal is None:
            phase = self.phase
            if phase == _PLAY:
                hand = self.hands[self.to_act]
                if self.trick:
                    # Follow the effective suit led if you can; otherwise play any card (§7).
                    legal = card_actions(hand & SUIT_CARDS[self.ctx][self.led_suit] or hand)
                else:
                    legal = self._lead_actions(hand)
            elif phase == _BIDDING:
                legal = self._bidding_actions()
            elif phase == _DISCARD:
                legal = card_actions(self.hands[self.contractor])
            elif phase == _NOMINATE:
                legal = [*range(FIRST_NOMINATE, FIRST_NOMINATE + 4), NO_NOMINATION]
            else:
                legal = []
            self._legal = legal
        return legal

    def apply_action(self, action: int) -> None:
        """Play one action for the player to act; an illegal one raises and changes nothing."""
        legal = self._legal
        if legal is None:
            legal = self.legal_actions()
        if action not in legal:
            raise IllegalActionError(self._illegal_message(action))
        self._legal = None
        self.history.append(action)
        phase = self.phase
        if phase == _PLAY:
            self._apply_play(action)
        elif phase == _BIDDING:
            self._apply_bid(action)
        elif phase == _DISCARD:
            self._apply_discard(action)
        else:
            self._apply_nomination(action)

    def _illegal_message(self, action: object) -> str:
        legal = ", ".join(action_to_str(a, self.rules) for a in self.legal_actions())
        try:
            name = action_to_str(action, self.rules)  # type: ignore[arg-type]
        except ValueError:
            name = repr(action)
        if self.is_over:
            return f"illegal action {name}: the deal is over"
        return (f"illegal action {name} for seat {self.to_act} in phase {self.phase.name}; "
                f"legal actions: {legal}")

    # -- §4 bidding --------------------------------------------------------------------------
    def _bidding_actions(self) -> list[int]:
        rules = self.rules
        high = self.high_bid
        current = bid_rank(high, rules) if high >= 0 else NO_BID_RANK
        first_trick_bid = 1 + (current + 2) // 2 if current >= 0 else 1  # lowest trick bid above
        if self.to_act == self._both_jokers_seat:
            floor = bid_action(rules.both_jokers_min_bid, 0)  # type: ignore[arg-type]
            if current < bid_rank(floor, rules):
                # Both jokers dealt and the bid below the floor: no pass, no misère (§4).
                return list(range(max(first_trick_bid, floor), 26))
        legal = [PASS, *range(first_trick_bid, 26)]
        if rules.misere != "none" and current < MISERE_RANK and (
            rules.misere == "any_time" or (high >= 0 and is_trick_bid(high) and bid_tricks(high) == 7)
        ):
            legal.append(MISERE)
        if rules.open_misere != "none" and current < OPEN_MISERE_RANKS[rules.open_misere]:
            legal.append(OPEN_MISERE)
        legal.sort()
        return legal

    def _apply_bid(self, action: int) -> None:
        seat = self.to_act
        n = self.n
        self.bids.append((seat, action))
        if action == PASS:
            self.passed |= 1 << seat
            self.passes_in_row += 1
        else:
            self.high_bid = action
            self.high_bidder = seat
            self.passes_in_row = 0
        bidding = self.rules.bidding
        if bidding == "single_round":
            if len(self.bids) == n:  # dealer's left … dealer, once each
                self._end_auction()
                return
            self.to_act = (seat + 1) % n
            return
        if self.rules.rebid_after_pass:
            if (self.high_bid >= 0 and self.passes_in_row == n - 1) or self.passes_in_row == n:
                self._end_auction()
                return
            self.to_act = (seat + 1) % n
            return
        # until_passed: passed players are skipped; it ends once every other player has passed.
        all_seats = (1 << n) - 1
        if self.passed == all_seats or (self.high_bid >= 0 and self.passed | 1 << self.high_bidder == all_seats):
            self._end_auction()
            return
        nxt = (seat + 1) % n
        while self.passed >> nxt & 1:
            nxt = (nxt + 1) % n
        self.to_act = nxt

    # -- §5 the kitty ------------------------------------------------------------------------
    def _end_auction(self) -> None:
        if self.high_bid < 0:  # every player passed: thrown in (§4)
            self.thrown_in = True
            self.phase = Phase.DEAL_OVER
            self.to_act = -1
            self.score_change = [0] * self.rules.num_sides
            return
        self.contract = contract = self.high_bid
        self.contractor = contractor = self.high_bidder
        self.misere = contract in (MISERE, OPEN_MISERE)
        if self.misere or bid_strain(contract) == NT:
            self.ctx, self.trump = NO_TRUMP_CTX, -1
        else:
            self.ctx = self.trump = bid_strain(contract)
        if self.misere and self.n == 4:
            self.sitting_out = out = (contractor + 2) % 4
            self._next_seat[out - 1] = (out + 1) % 4
            self._trick_size = 3
        self.hands[contractor] |= self.kitty  # picked up without showing it
        self.phase = Phase.DISCARD
        self.to_act = contractor

    def _apply_discard(self, action: int) -> None:
        bit = 1 << (action - FIRST_CARD_ACTION)
        self.hands[self.contractor] ^= bit
        self.discards |= bit
        if self.discards.bit_count() < self.rules.kitty_size:
            return
        if self._may_nominate():
            self.phase = Phase.NOMINATE
        else:
            self._start_play()

    # -- §7 play -----------------------------------------------------------------------------
    def _may_nominate(self) -> bool:
        nomination = self.rules.joker_nomination
        if nomination == "none" or not self.hands[self.contractor] >> JOKER1 & 1:
            return False
        if nomination == "misere_only":
            return self.misere
        return self.misere or bid_strain(self.contract) == NT

    def _apply_nomination(self, action: int) -> None:
        if action != NO_NOMINATION:
            self.nominated = action - FIRST_NOMINATE
            self.ctx = NO_TRUMP_CTX + 1 + self.nominated
        self._start_play()

    def _start_play(self) -> None:
        self.phase = Phase.PLAY
        self.leader = self.to_act = self.contractor
        if self.contract == OPEN_MISERE and self.rules.open_misere_exposure == "before_first_lead":
            self.exposed = True

    def _joker_lead_suits(self, seat: int) -> list[int]:
        """The suits a suitless joker may name when led (RULES.md §7, ``joker_lead_suit``)."""
        hand = self.hands[seat]
        if self.rules.joker_lead_suit == "not_yet_led":
            allowed = [s for s in range(4) if not self.suits_led >> s & 1]
            if not allowed and hand & ~JOKERS_MASK == 0:
                allowed = [0, 1, 2, 3]  # nothing but jokers left: any suit
            return allowed
        allowed = [s for s in range(4) if not self.shown_void[seat] >> s & 1]
        return allowed or [0, 1, 2, 3]

    def _lead_actions(self, hand: int) -> list[int]:
        """Any card may be led; a suitless joker is led naming a suit (``JK:x``)."""
        suitless_jokers = hand & SUIT_CARDS[self.ctx][SUITLESS]
        if not suitless_jokers:
            return card_actions(hand)
        legal = card_actions(hand ^ suitless_jokers)
        suits = self._joker_lead_suits(self.to_act)
        for joker in (JOKER1, JOKER2):
            if suitless_jokers >> joker & 1:
                legal.extend(FIRST_JOKER_LEAD + 4 * (joker - JOKER1) + s for s in suits)
        return legal

    def _apply_play(self, action: int) -> None:
        seat = self.to_act
        trick = self.trick
        if action >= FIRST_JOKER_LEAD:  # a suitless joker led, naming the suit to follow
            card = JOKER1 + (action - FIRST_JOKER_LEAD) // 4
            self.led_suit = (action - FIRST_JOKER_LEAD) % 4
        else:
            card = action - FIRST_CARD_ACTION
            suit = EFFECTIVE_SUIT[self.ctx][card]
            if not trick:
                self.led_suit = suit
            elif suit != self.led_suit:
                self.shown_void[seat] |= 1 << self.led_suit
        bit = 1 << card
        self.hands[seat] ^= bit
        self.played[seat] |= bit
        if not trick:
            self.suits_led |= 1 << self.led_suit
        trick.append((seat, card))
        if len(trick) < self._trick_size:
            self.to_act = self._next_seat[seat]
            return
        # The trick is complete: the highest trump wins, else the highest card of the suit led.
        keys = WIN_KEY[self.ctx][self.led_suit]
        winner, best = -1, -1
        for s, c in trick:
            if keys[c] > best:
                winner, best = s, keys[c]
        self.tricks.append((self.leader, self.led_suit, tuple(trick), winner))
        self.tricks_won[winner] += 1
        self.trick = []
        if self.contract == OPEN_MISERE and len(self.tricks) == 1:
            self.exposed = True  # after_first_trick; before_first_lead set it already
        if len(self.tricks) == self._num_tricks:
            self.phase = Phase.DEAL_OVER
            self.to_act = -1
            self.score_change = self._score()
            return
        self.leader = self.to_act = winner
        self.led_suit = -1

    # -- §8 scoring ----------------------------------------------------------------------------
    def zero_sum_result(self, side: int) -> float:
        """``side``'s score change minus the mean change of the other sides (0 until the deal is
        scored): the environment's ``zero_sum`` reward before scaling."""
        change = self.score_change or [0] * self.rules.num_sides
        k = len(change)
        return float(change[side] - (sum(change) - change[side]) / (k - 1))

    def side_tricks(self) -> list[int]:
        """Tricks won by each side so far."""
        won = [0] * self.rules.num_sides
        for seat, t in enumerate(self.tricks_won):
            won[self.rules.side_of(seat)] += t
        return won

    def contract_made(self) -> bool:
        """Whether the contract is made (meaningful once play is over)."""
        if self.contract < 0:
            return False
        own = self.side_of(self.contractor)
        return contract_made(self.contract, self.side_tricks()[own], self.tricks_won[self.contractor])

    def _score(self) -> list[int]:
        return deal_score(self.rules, self.contract, self.contractor, self.tricks_won)

    # -- locations of cards (for checks and observers) ------------------------------------------
    def card_locations(self) -> dict[str, int]:
        """Where every card is: each hand, the kitty (until taken), the discards, played cards."""
        places = {f"hand{s}": h for s, h in enumerate(self.hands)}
        places["kitty"] = self.kitty if self.phase == Phase.BIDDING or self.thrown_in else 0
        places["discards"] = self.discards
        for s, p in enumerate(self.played):
            places[f"played{s}"] = p
        return places

    def exposed_cards(self) -> int:
        """The open-misère contractor's cards visible to everyone now (0 if none)."""
        return self.hands[self.contractor] if self.exposed else 0

    def describe(self) -> str:
        """A short text of the deal so far."""
        two = self.rules.two_jokers
        lines = [f"dealer {self.dealer}; phase {self.phase.name}"]
        for s, h in enumerate(self.hands):
            lines.append(f"  seat {s}: " + " ".join(card_to_str(c, two) for c in mask_to_cards(h)))
        lines.append("  actions: " + " ".join(action_to_str(a, self.rules) for a in self.history))
        return "\n".join(lines)


# The Deal fields that hold immutable values (ints, tuples, the rules): a clone shares them.
_DEAL_SCALARS = tuple(name for name in Deal.__slots__ if name not in (
    "hands", "history", "bids", "trick", "tricks", "tricks_won", "played", "shown_void",
    "_next_seat", "score_change", "_legal"))


def parse_deal(
    rules: Rules, hands: Sequence[Sequence[str]], kitty: Sequence[str], dealer: int
) -> tuple[list[int], int]:
    """Validate an explicit deal given by card names and return (hand masks, kitty mask)."""
    n = rules.num_players
    if not isinstance(dealer, int) or isinstance(dealer, bool) or not 0 <= dealer < n:
        raise ValueError(f"dealer must be a seat 0..{n - 1}, got {dealer!r}")
    if isinstance(hands, str) or not isinstance(hands, Sequence) or len(hands) != n:
        raise ValueError(f"hands must be a list of {n} hands (one per seat), got {hands!r}")
    seen: dict[int, str] = {}

    def parse_group(cards: Sequence[str], where: str, size: int) -> int:
        if isinstance(cards, str) or not isinstance(cards, Sequence):
            raise ValueError(f"{where} must be a list of card names, got {cards!r}")
        if len(cards) != size:
            raise ValueError(f"{where} must hold {size} cards, got {len(cards)}")
        mask = 0
        for name in cards:
            card = parse_card(name, rules.two_jokers)
            if not rules.deck >> card & 1:
                raise ValueError(f"card {name!r} in {where} is not in the {rules.preset} deck")
            if card in seen:
                raise ValueError(f"card {card_to_str(card, rules.two_jokers)} is dealt twice ({seen[card]} and {where})")
            seen[card] = where
            mask |= 1 << card
        return mask

    hand_masks = [parse_group(h, f"hand {i}", rules.hand_size) for i, h in enumerate(hands)]
    kitty_mask = parse_group(kitty, "the kitty", rules.kitty_size)
    return hand_masks, kitty_mask


def deal_to_cards(rules: Rules, hands: Sequence[int], kitty: int) -> dict[str, list]:
    """The card names of a deal's hands and kitty (the inverse of :func:`parse_deal`)."""
    two = rules.two_jokers
    return {
        "hands": [[card_to_str(c, two) for c in mask_to_cards(h)] for h in hands],
        "kitty": [card_to_str(c, two) for c in mask_to_cards(kitty)],
    }


class Game:
    """A game to 500 (RULES.md §9): deals in turn, the dealer rotating, scores per side.

    ``Game(rules, seed=s)`` draws the first dealer and every shuffle from one seeded generator;
    ``first_deal`` (a :class:`Deal`) and ``scores`` set up any position instead. ``deal`` is the
    deal in progress; ``legal_actions``/``apply_action`` act on it and move on to the next deal
    when one ends, until the game is over (or ``max_deals`` deals have been played: then the
    last deal stays the current one, over, with nobody to act).
    """

    def __init__(
        self,
        rules: Rules | str | None = None,
        seed: int | None = None,
        *,
        first_deal: Deal | None = None,
        scores: Sequence[int] | None = None,
        rng: random.Random | None = None,
        max_deals: int | None = None,
    ) -> None:
        if rules is None or isinstance(rules, str):
            rules = make_rules(rules or "australian")
        self.rules = rules
        self.rng = rng if rng is not None else random.Random(seed)
        self.max_deals = max_deals
        """Stop dealing after this many deals (the game is then unfinished); None: play to the end."""
        self.scores = [0] * rules.num_sides if scores is None else check_scores(rules, scores)
        self.starting_scores = list(self.scores)
        self.winners: list[int] = []
        """The winning sides, once the game is over."""
        self.deals: list[Deal] = []
        """Every deal of the game, the current one last."""
        self._over = False
        self.upcoming_deals: list[Deal] = []
        """Deals to play next instead of shuffling (replays fill it); each must have the next dealer."""
        if first_deal is not None:
            if first_deal.rules != rules:
                raise ValueError("the first deal was made for other rules")
            self.deals.append(first_deal)
        else:
            self._start_deal(self.rng.randrange(rules.num_players))

    def clone(self) -> Game:
        """An independent copy of the game: the current deal cloned, finished deals shared (they
        no longer change), and the random generator copied so the copy deals the same next deals."""
        copy = Game.__new__(Game)
        copy.rules = self.rules
        copy.rng = random.Random()
        copy.rng.setstate(self.rng.getstate())
        copy.max_deals = self.max_deals
        copy.scores = self.scores.copy()
        copy.starting_scores = self.starting_scores.copy()
        copy.winners = self.winners.copy()
        copy.deals = [*self.deals[:-1], self.deals[-1].clone()] if self.deals else []
        copy._over = self._over
        copy.upcoming_deals = [d.clone() for d in self.upcoming_deals]
        return copy

    @property
    def deal(self) -> Deal:
        """The deal in progress (or the last one, once the game is over)."""
        return self.deals[-1]

    @property
    def is_over(self) -> bool:
        return self._over

    @property
    def phase(self) -> Phase:
        return Phase.GAME_OVER if self._over else self.deal.phase

    @property
    def to_act(self) -> int:
        return -1 if self._over else self.deal.to_act

    def legal_actions(self) -> list[int]:
        return [] if self._over else self.deal.legal_actions()

    def apply_action(self, action: int) -> None:
        """Apply an action to the current deal; at its end score it and deal the next one."""
        if self._over:
            raise IllegalActionError(f"illegal action {action!r}: the game is over")
        deal = self.deal
        deal.apply_action(action)
        if deal.is_over:
            self._end_of_deal(deal)
            if not self._over and (self.max_deals is None or len(self.deals) < self.max_deals):
                self._start_deal((deal.dealer + 1) % self.rules.num_players)

    def _start_deal(self, dealer: int) -> None:
        if self.upcoming_deals:
            deal = self.upcoming_deals.pop(0)
            if deal.dealer != dealer:
                raise ValueError(f"the next deal must be dealt by seat {dealer}, not {deal.dealer}")
        else:
            deal = Deal.new(self.rules, self.rng, dealer)
        self.deals.append(deal)

    # -- §9 winning the game -----------------------------------------------------------------------
    def _end_of_deal(self, deal: Deal) -> None:
        if deal.thrown_in:
            return
        rules = self.rules
        for side, change in enumerate(deal.score_change or ()):
            self.scores[side] += change
        scores = self.scores
        own = rules.side_of(deal.contractor)
        if rules.win_needs_contract:
            reached = [own] if deal.contract_made() and scores[own] >= rules.target else []
        else:
            reached = [s for s in range(rules.num_sides) if scores[s] >= rules.target]
            if len(reached) > 1:
                reached = [own] if own in reached else _highest(scores, reached)
        if reached:
            self.winners = reached
        elif any(s <= rules.losing_score for s in scores):
            if rules.num_sides == 2:
                self.winners = [s for s in range(2) if scores[s] > rules.losing_score] or _highest(scores, [0, 1])
            else:
                self.winners = _highest(scores, range(rules.num_sides))
        self._over = bool(self.winners)

    def winning_seats(self) -> list[int]:
        """The seats of the winning sides (both partners of a winning team)."""
        return [s for s in range(self.rules.num_players) if self.rules.side_of(s) in self.winners]


def _highest(scores: Sequence[int], sides: Sequence[int] | range) -> list[int]:
    best = max(scores[s] for s in sides)
    return [s for s in sides if scores[s] == best]


def check_scores(rules: Rules, scores: Sequence[int]) -> list[int]:
    """Validate starting scores given per seat (partners equal) or per side; return per side."""
    if isinstance(scores, str) or not isinstance(scores, Sequence):
        raise ValueError(f"scores must be a list of numbers, got {scores!r}")
    values = list(scores)
    if any(not isinstance(v, int) or isinstance(v, bool) for v in values):
        raise ValueError(f"scores must be whole numbers, got {scores!r}")
    if len(values) == rules.num_players and rules.num_players != rules.num_sides:
        for seat in range(rules.num_players):
            if values[seat] != values[rules.side_of(seat)]:
                raise ValueError(f"partners must have equal scores: seat {seat} has {values[seat]}, "
                                 f"its partner {values[rules.side_of(seat)]}")
        values = values[: rules.num_sides]
    if len(values) != rules.num_sides:
        raise ValueError(f"scores need one entry per seat ({rules.num_players}), got {len(values)}")
    # A side at the target from defence points alone has not won while a contract is needed (§9).
    top = float("inf") if rules.win_needs_contract else rules.target
    if any(v >= top or v <= rules.losing_score for v in values):
        raise ValueError(f"starting scores {values} end the game at once: each must be above "
                         f"{rules.losing_score}" + ("" if rules.win_needs_contract else f" and below {rules.target}"))
    return values


__all__ = [
    "EFFECTIVE_SUIT",
    "NO_TRUMP_CTX",
    "SUITLESS",
    "SUIT_CARDS",
    "WIN_KEY",
    "Deal",
    "Game",
    "IllegalActionError",
    "Phase",
    "bid_rank",
    "card_actions",
    "card_id",
    "check_scores",
    "deal_to_cards",
    "parse_deal",
]
