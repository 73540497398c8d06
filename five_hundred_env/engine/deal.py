"""One deal (:class:`Deal`): §3 the deal, §4 the auction, §5 the kitty, §10.5 the five-handed
partner call, §7 play, scored by §8 and §10.6. Its phases and errors are in :mod:`.phase`, the
card-name form of a deal (:func:`parse_deal`, :func:`deal_to_cards`) in :mod:`.explicit`.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from five_hundred_env.actions import (
    EXTRA_CARD_SHIFT,
    FIRST_CARD_ACTION,
    FIRST_JOKER_LEAD,
    FIRST_NOMINATE,
    FIRST_PARTNER,
    MISERE,
    NO_NOMINATION,
    NT,
    OPEN_MISERE,
    PASS,
    action_card,
    action_to_str,
    bid_strain,
    partner_action,
)
from five_hundred_env.cards import JOKER1, JOKER2, JOKERS_MASK, card_to_str, mask_to_cards
from five_hundred_env.engine.bidding import legal_bids, next_bidder
from five_hundred_env.engine.card_order import EFFECTIVE_SUIT, NO_TRUMP_CTX, SUIT_CARDS, SUITLESS, WIN_KEY, card_actions
from five_hundred_env.engine.explicit import deal_rules, parse_deal
from five_hundred_env.engine.phase import IllegalActionError, Phase, action_id
from five_hundred_env.rules import Rules
from five_hundred_env.scoring import contract_made, deal_score, zero_sum_result

# Plain-int phases for the hot paths (IntEnum members compare equal to these).
_BIDDING, _DISCARD, _NOMINATE, _PLAY, _DEAL_OVER, _CALL = 0, 1, 2, 3, 4, 5


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
        "_both_jokers_seat", "_legal", "_next_seat", "_num_tricks", "_trick_size", "bids", "called_card", "contract",
        "contractor", "ctx", "dealer", "dealt", "discards", "exposed", "hands", "high_bid", "high_bidder",
        "history", "kitty", "leader", "led_suit", "misere", "n", "nominated", "partner", "partner_revealed", "passed",
        "passes_in_row", "phase", "played", "rules", "score_change", "shown_void", "sitting_out_seats", "suits_led",
        "thrown_in", "to_act", "trick", "tricks", "tricks_won", "trump",
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
        self.sitting_out_seats: tuple[int, ...] = ()
        """The contractor's team-mates, sitting out a misère (one with four players, two with six)."""
        self.called_card = -1
        """The card the five-handed contractor called (``partner_call=card``, §10.5), or -1."""
        self.partner = -1
        """The five-handed contractor's partner for this deal (§10.5): the seat called, or the holder
        of the called card at the call; -1 for none (no call, or a discard called)."""
        self.partner_revealed = False
        """Whether everyone knows the partner: from the call with ``seat``, once the called card is
        played with ``card`` (§10.5, §10.8)."""
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
        """A uniformly shuffled deal (the dealing pattern does not change the distribution, §3):
        the hands, then the kitty, then (``two_handed``) the dead hand, the rest of the pack (§10.3)."""
        bits = _deck_bits(rules.deck)
        rng.shuffle(bits)
        size = rules.hand_size
        dealt = rules.num_players * size
        hands = [sum(bits[i * size:(i + 1) * size]) for i in range(rules.num_players)]
        return cls(rules, hands, sum(bits[dealt:dealt + rules.kitty_size]), dealer)

    @classmethod
    def from_cards(cls, rules: Rules | str, hands: Sequence[Sequence[str]], kitty: Sequence[str], dealer: int = 0) -> Deal:
        """An explicit deal from card names under ``rules`` (a :class:`Rules` or a preset name);
        wrong counts, duplicates and foreign cards are errors."""
        rules = deal_rules(rules)
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
        """Whether the deal is over (played out, or thrown in)."""
        return self.phase == _DEAL_OVER

    @property
    def dead_hand(self) -> int:
        """The cards dealt to nobody (``two_handed``, §10.3): the pack less the hands and the kitty."""
        dealt = self.kitty
        for hand in self.dealt:
            dealt |= hand
        return self.rules.deck & ~dealt

    def contracting_seats(self) -> tuple[int, ...]:
        """The contracting team (§10.6): the contractor and its team-mates or called partner in a
        trick contract, the contractor alone in misère; empty before the auction is over."""
        contractor = self.contractor
        if contractor < 0:
            return ()
        if self.misere:
            return (contractor,)
        team = {contractor, *self.rules.partners_of(contractor)}
        if self.partner >= 0:
            team.add(self.partner)
        return tuple(sorted(team))

    def side_of(self, seat: int) -> int:
        """The side of a seat (:meth:`Rules.side_of`)."""
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
            elif phase == _CALL:
                legal = self._call_actions()
            else:
                legal = []
            self._legal = legal
        return legal

    def apply_action(self, action: int) -> None:
        """Play one action for the player to act; an illegal one raises and changes nothing.

        ``action`` is a Python or numpy integer (stored as a plain ``int``); a ``bool``, a float
        (even ``3.0``) or anything else is refused with :class:`IllegalActionError`.
        """
        if type(action) is not int:
            action = action_id(action)
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
        elif phase == _CALL:
            self._apply_call(action)
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
        return legal_bids(self.rules, self.high_bid, self.to_act == self._both_jokers_seat)

    def _apply_bid(self, action: int) -> None:
        seat = self.to_act
        self.bids.append((seat, action))
        if action == PASS:
            self.passed |= 1 << seat
            self.passes_in_row += 1
        else:
            self.high_bid = action
            self.high_bidder = seat
            self.passes_in_row = 0
        nxt = next_bidder(self.rules, seat, self.passed, self.passes_in_row, len(self.bids), self.high_bidder)
        if nxt < 0:
            self._end_auction()
        else:
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
        mates = self.rules.partners_of(contractor)
        if self.misere and mates:  # the contractor's team-mates sit out a misère (§7, §10.4)
            n = self.n
            self.sitting_out_seats = mates
            for seat in range(n):
                nxt = (seat + 1) % n
                while nxt in mates:
                    nxt = (nxt + 1) % n
                self._next_seat[seat] = nxt
            self._trick_size = n - len(mates)
        self.hands[contractor] |= self.kitty  # picked up without showing it
        self.phase = Phase.DISCARD
        self.to_act = contractor

    def _apply_discard(self, action: int) -> None:
        bit = 1 << action_card(action)
        self.hands[self.contractor] ^= bit
        self.discards |= bit
        if self.discards.bit_count() < self.rules.kitty_size:
            return
        if self.rules.partner_call != "none" and not self.misere:
            self.phase = Phase.CALL  # a trick contract's partner call, after the discards (§10.5)
        else:
            self._after_call()

    # -- §10.5 the five-handed partner call ------------------------------------------------------
    def _call_actions(self) -> list[int]:
        contractor = self.contractor
        if self.rules.partner_call == "seat":
            return [partner_action(seat) for seat in range(self.n) if seat != contractor]
        # Any card but the joker and the contractor's own; its discards included.
        return card_actions(self.rules.deck & ~JOKERS_MASK & ~self.hands[contractor])

    def _apply_call(self, action: int) -> None:
        if action >= FIRST_PARTNER:
            self.partner = action - FIRST_PARTNER
            self.partner_revealed = True
        else:
            card = self.called_card = action_card(action)
            bit = 1 << card
            # The holder at the call is the partner; a discard called means playing alone.
            self.partner = next((seat for seat, hand in enumerate(self.hands) if hand & bit), -1)
        self._after_call()

    def _after_call(self) -> None:
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
        """The suits a suitless joker may name when led (docs/rules.md §7, ``joker_lead_suit``)."""
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
        if FIRST_JOKER_LEAD <= action < FIRST_NOMINATE:  # a suitless joker led, naming the suit to follow
            card = JOKER1 + (action - FIRST_JOKER_LEAD) // 4
            self.led_suit = (action - FIRST_JOKER_LEAD) % 4
        else:
            card = action - FIRST_CARD_ACTION if action < FIRST_JOKER_LEAD else action - EXTRA_CARD_SHIFT
            suit = EFFECTIVE_SUIT[self.ctx][card]
            if not trick:
                self.led_suit = suit
            elif suit != self.led_suit:
                self.shown_void[seat] |= 1 << self.led_suit
        bit = 1 << card
        self.hands[seat] ^= bit
        self.played[seat] |= bit
        if card == self.called_card:
            self.partner_revealed = True  # who played it is public (§10.5)
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
        return zero_sum_result(self.score_change or [0] * self.rules.num_sides, side)

    def side_tricks(self) -> list[int]:
        """Tricks won by each side so far."""
        won = [0] * self.rules.num_sides
        for seat, t in enumerate(self.tricks_won):
            won[self.rules.side_of(seat)] += t
        return won

    def contract_made(self) -> bool:
        """Whether the contract is made (meaningful once play is over): the contracting team's
        tricks together reach the bid, or a misère contractor took none (§8, §10.6)."""
        if self.contract < 0:
            return False
        team = sum(self.tricks_won[seat] for seat in self.contracting_seats())
        return contract_made(self.contract, team, self.tricks_won[self.contractor])

    def _score(self) -> list[int]:
        return deal_score(self.rules, self.contract, self.contractor, self.tricks_won, self.partner)

    # -- locations of cards (for checks and observers) ------------------------------------------
    def card_locations(self) -> dict[str, int]:
        """Where every card is: each hand, the kitty (until taken), the discards, played cards."""
        places = {f"hand{s}": h for s, h in enumerate(self.hands)}
        places["kitty"] = self.kitty if self.phase == Phase.BIDDING or self.thrown_in else 0
        places["discards"] = self.discards
        if self.rules.dead_hand_size:
            places["dead_hand"] = self.dead_hand
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
