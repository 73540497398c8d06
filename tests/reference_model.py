"""An independent, deliberately plain model of one deal, written from docs/rules.md §4-§8 and §10 alone.

It shares nothing with the engine but the notation of §1 (card and action strings) and the rules
object (option values). The property tests drive the engine and this model with the same
actions and require the same legal actions, trick winners, exposure and score at every step.
Slow and simple on purpose: sets of card names, no bit masks, no tables.
"""

from __future__ import annotations

SUITS = "SCDH"
STRAINS = ("S", "C", "D", "H", "NT")
PLAIN_ORDER = "23456789TEWXJQKA"  # §6, §10.4: A K Q J X W E T 9 … 2 in plain suits
TRUMP_PLAIN_ORDER = "23456789TEWXQKA"  # the trump suit below the bowers: A K Q X W E T 9 … 2
PACKS = {  # §10.2: the packs the call may name cards of
    "five_handed": [r + s.lower() for s in SUITS for r in "23456789TJQKA"] + ["JK"],
}
SAME_COLOUR = {"S": "C", "C": "S", "D": "H", "H": "D"}


def suit_of(card: str) -> str | None:
    return None if card.startswith("JK") else card[-1].upper()


def is_joker(card: str) -> bool:
    return card.startswith("JK")


def bid_key(bid: str, rules) -> float:
    """§4: by tricks, then S < C < D < H < NT; misère between 7NT and 8S; open misère between 10D
    and 10H [AU] or above everything [IT]."""
    if bid == "MISERE":
        return 7 * 10 + 4.5
    if bid == "OPEN_MISERE":
        return 10 * 10 + 2.5 if rules.open_misere == "between_10D_10H" else 1000.0
    return int(bid[:-2] if bid.endswith("NT") else bid[:-1]) * 10 + STRAINS.index(bid[-2:] if bid.endswith("NT") else bid[-1])


def bid_tricks(bid: str) -> int:
    return int(bid[:-2] if bid.endswith("NT") else bid[:-1])


def bid_strain(bid: str) -> str:
    return "NT" if bid.endswith("NT") else bid[-1]


def bid_value(bid: str, rules) -> int:
    """§4: the Avondale table; MISERE = misere_value, OPEN_MISERE = 500."""
    if bid == "MISERE":
        return rules.misere_value
    if bid == "OPEN_MISERE":
        return 500
    return 40 + 100 * (bid_tricks(bid) - 6) + 20 * STRAINS.index(bid_strain(bid))


TRICK_BIDS = [f"{t}{s}" for t in range(6, 11) for s in STRAINS]


class ReferenceDeal:
    def __init__(self, rules, hands: list[list[str]], kitty: list[str], dealer: int) -> None:
        self.rules = rules
        self.n = rules.num_players
        self.hands = [set(h) for h in hands]
        self.kitty = set(kitty)
        self.dealer = dealer
        self.two_jokers = rules.two_jokers
        self.both_jokers_seat = None
        if rules.both_jokers_min_bid is not None:
            for s, h in enumerate(hands):
                if {"JK1", "JK2"} <= set(h):
                    self.both_jokers_seat = s
        self.phase = "bid"
        self.to_act = (dealer + 1) % self.n
        self.high: str | None = None
        self.high_bidder = -1
        self.passed: set[int] = set()
        self.turns = 0
        self.passes_since_bid = 0
        self.contract: str | None = None
        self.contractor = -1
        self.thrown_in = False
        self.discarded: set[str] = set()
        self.nominated: str | None = None
        self.trick: list[tuple[int, str]] = []
        self.led: str | None = None
        self.tricks: list[tuple[int, str, list[tuple[int, str]], int]] = []
        self.suits_led: set[str] = set()
        self.shown_void: list[set[str]] = [set() for _ in range(self.n)]
        self.exposed = False
        self.score: list[int] | None = None
        self.partner: int | None = None  # §10.5: the five-handed partner of this deal
        self.called: str | None = None

    # -- helpers ------------------------------------------------------------------------------------
    @property
    def misere(self) -> bool:
        return self.contract in ("MISERE", "OPEN_MISERE")

    @property
    def trump(self) -> str | None:
        if self.contract is None or self.misere or bid_strain(self.contract) == "NT":
            return None
        return bid_strain(self.contract)

    def side(self, seat: int) -> int:
        return seat % 2 if self.n in (4, 6) else seat  # §1, §10.1: teams with four and six players

    def sides(self) -> int:
        return 2 if self.n in (4, 6) else self.n

    def active(self) -> list[int]:
        """§7, §10.4: the contractor's team-mates sit out a misère."""
        if self.n in (4, 6) and self.misere:
            return [s for s in range(self.n) if s == self.contractor or self.side(s) != self.side(self.contractor)]
        return list(range(self.n))

    def team(self) -> list[int]:
        """§10.6: the sides of the contracting team."""
        own = [self.side(self.contractor)]
        if self.partner is not None and not self.misere:
            own.append(self.side(self.partner))
        return own

    def effective_suit(self, card: str) -> str | None:
        """§6/§7: the suit a card belongs to; None for a joker with no suit."""
        trump = self.trump
        if is_joker(card):
            if trump:
                return trump
            return self.nominated  # None unless nominated
        if trump and card[0] == "J" and suit_of(card) == SAME_COLOUR[trump]:
            return trump  # the left bower
        return suit_of(card)

    def trump_power(self, card: str) -> int:
        trump = self.trump
        if card == "JK1" or card == "JK":
            return 100
        if card == "JK2":
            return 99
        if card[0] == "J":
            return 98 if suit_of(card) == trump else 97
        return TRUMP_PLAIN_ORDER.index(card[0])

    def plain_power(self, card: str) -> int:
        if is_joker(card):
            return 50  # a nominated joker: the highest card of its suit
        return PLAIN_ORDER.index(card[0])

    def winner(self, trick, led) -> int:
        """§7: the highest trump, else (§7 joker) a suitless joker, else the highest card led."""
        trumps = [(s, c) for s, c in trick if self.trump and self.effective_suit(c) == self.trump]
        if trumps:
            return max(trumps, key=lambda sc: self.trump_power(sc[1]))[0]
        suitless = [(s, c) for s, c in trick if is_joker(c) and self.effective_suit(c) is None]
        if suitless:
            return min(suitless, key=lambda sc: sc[1])[0]  # "JK1" < "JK2" as strings: JK1 wins
        followers = [(s, c) for s, c in trick if self.effective_suit(c) == led]
        return max(followers, key=lambda sc: self.plain_power(sc[1]))[0]

    def joker_lead_suits(self, seat: int) -> list[str]:
        """§7 `joker_lead_suit`."""
        if self.rules.joker_lead_suit == "not_yet_led":
            allowed = [s for s in SUITS if s not in self.suits_led]
            if not allowed and all(is_joker(c) for c in self.hands[seat]):
                allowed = list(SUITS)
            return allowed
        allowed = [s for s in SUITS if s not in self.shown_void[seat]]
        return allowed or list(SUITS)

    # -- legal actions -------------------------------------------------------------------------------
    def legal(self) -> set[str]:
        if self.phase == "bid":
            return self._legal_bids()
        if self.phase == "discard":
            return set(self.hands[self.contractor])
        if self.phase == "nominate":
            return {f"NOMINATE_{s}" for s in SUITS} | {"NO_NOMINATION"}
        if self.phase == "call":
            if self.rules.partner_call == "seat":
                return {f"PARTNER_{s}" for s in range(self.n) if s != self.contractor}
            return set(PACKS[self.rules.preset]) - {"JK"} - self.hands[self.contractor]
        if self.phase == "play":
            return self._legal_plays()
        return set()

    def _legal_bids(self) -> set[str]:
        rules = self.rules
        current = bid_key(self.high, rules) if self.high else float("-inf")
        higher = {b for b in TRICK_BIDS if bid_key(b, rules) > current}
        if self.to_act == self.both_jokers_seat and current < rules.both_jokers_min_bid * 10:
            return {b for b in higher if bid_tricks(b) >= rules.both_jokers_min_bid}
        legal = {"PASS"} | higher
        if rules.misere != "none" and bid_key("MISERE", rules) > current:
            if rules.misere == "any_time" or (self.high and self.high in TRICK_BIDS and bid_tricks(self.high) == 7):
                legal.add("MISERE")
        if rules.open_misere != "none" and bid_key("OPEN_MISERE", rules) > current:
            legal.add("OPEN_MISERE")
        return legal

    def _legal_plays(self) -> set[str]:
        seat = self.to_act
        hand = self.hands[seat]
        if self.trick:
            follow = {c for c in hand if self.effective_suit(c) == self.led}
            return follow or set(hand)
        legal = set()
        for c in hand:
            if is_joker(c) and self.effective_suit(c) is None:
                legal |= {f"{c}:{s}" for s in self.joker_lead_suits(seat)}
            else:
                legal.add(c)
        return legal

    # -- actions -------------------------------------------------------------------------------------
    def apply(self, action: str) -> None:
        assert action in self.legal(), (action, self.legal())
        getattr(self, f"_apply_{self.phase}")(action)

    def _apply_bid(self, action: str) -> None:
        n, seat, rules = self.n, self.to_act, self.rules
        self.turns += 1
        if action == "PASS":
            self.passed.add(seat)
            self.passes_since_bid += 1
        else:
            self.high, self.high_bidder = action, seat
            self.passes_since_bid = 0
        if rules.bidding == "single_round":
            if self.turns == n:
                return self._end_auction()
            self.to_act = (seat + 1) % n
            return None
        if rules.rebid_after_pass:
            if (self.high and self.passes_since_bid == n - 1) or (not self.high and self.passes_since_bid == n):
                return self._end_auction()
            self.to_act = (seat + 1) % n
            return None
        if len(self.passed) == n or (self.high and self.passed == set(range(n)) - {self.high_bidder}):
            return self._end_auction()
        nxt = (seat + 1) % n
        while nxt in self.passed:
            nxt = (nxt + 1) % n
        self.to_act = nxt
        return None

    def _end_auction(self) -> None:
        if not self.high:
            self.thrown_in = True
            self.phase = "over"
            self.score = [0] * self.sides()
            return
        self.contract, self.contractor = self.high, self.high_bidder
        self.hands[self.contractor] |= self.kitty
        self.phase = "discard"
        self.to_act = self.contractor

    def _apply_discard(self, card: str) -> None:
        self.hands[self.contractor].remove(card)
        self.discarded.add(card)
        if len(self.discarded) < self.rules.kitty_size:
            return
        if self.rules.partner_call != "none" and not self.misere:
            self.phase = "call"  # §10.5: after the discards, before the nomination
            return
        self._after_call()

    def _apply_call(self, action: str) -> None:
        if action.startswith("PARTNER_"):
            self.partner = int(action[-1])
        else:
            self.called = action
            holders = [s for s in range(self.n) if action in self.hands[s]]
            self.partner = holders[0] if holders else None  # a discard: alone
        self._after_call()

    def _after_call(self) -> None:
        nomination = self.rules.joker_nomination
        no_trumps = self.misere or bid_strain(self.contract) == "NT"
        may = (
            not self.two_jokers
            and "JK" in self.hands[self.contractor]
            and ((nomination == "nt_and_misere" and no_trumps) or (nomination == "misere_only" and self.misere))
        )
        if may:
            self.phase = "nominate"
        else:
            self._start_play()

    def _apply_nominate(self, action: str) -> None:
        if action != "NO_NOMINATION":
            self.nominated = action[-1]
        self._start_play()

    def _start_play(self) -> None:
        self.phase = "play"
        self.to_act = self.contractor
        if self.contract == "OPEN_MISERE" and self.rules.open_misere_exposure == "before_first_lead":
            self.exposed = True

    def _apply_play(self, action: str) -> None:
        seat = self.to_act
        if ":" in action:
            card, named = action.split(":")
            self.led = named
        else:
            card = action
            if not self.trick:
                self.led = self.effective_suit(card)
            elif self.effective_suit(card) != self.led:
                self.shown_void[seat].add(self.led)
        if not self.trick:
            self.suits_led.add(self.led)
        self.hands[seat].remove(card)
        self.trick.append((seat, card))
        active = self.active()
        if len(self.trick) < len(active):
            nxt = (seat + 1) % self.n
            while nxt not in active:
                nxt = (nxt + 1) % self.n
            self.to_act = nxt
            return
        winner = self.winner(self.trick, self.led)
        self.tricks.append((self.trick[0][0], self.led, self.trick, winner))
        self.trick = []
        if self.contract == "OPEN_MISERE":
            self.exposed = True
        if len(self.tricks) == 10:
            self.phase = "over"
            self.to_act = -1
            self.score = self._score()
            return
        self.to_act = winner
        self.led = None

    # -- §8 --------------------------------------------------------------------------------------------
    def side_tricks(self) -> list[int]:
        won = [0] * self.sides()
        for *_, w in self.tricks:
            won[self.side(w)] += 1
        return won

    def made(self) -> bool:
        if self.misere:
            return not any(w == self.contractor for *_, w in self.tricks)
        return sum(self.side_tricks()[s] for s in self.team()) >= bid_tricks(self.contract)

    def _score(self) -> list[int]:
        rules = self.rules
        own = self.side(self.contractor)
        won = self.side_tricks()
        team = self.team()
        value = bid_value(self.contract, rules)
        made = self.made()
        score = [0] * self.sides()
        if self.misere:
            score[own] = value if made else -value
            if rules.misere_defence == "10_per_declarer_trick":
                taken = sum(1 for *_, w in self.tricks if w == self.contractor)
                for s in range(self.sides()):
                    if s != own:
                        score[s] += 10 * taken
            return score
        if made and rules.slam_bonus and sum(won[s] for s in team) == 10 and value < 250:
            value = 250
        for s in team:  # §10.6: each side of the contracting team scores the contract
            score[s] = value if made else -value
        if rules.defence_tricks == "10_per_trick" or (rules.defence_tricks == "only_when_lost" and not made):
            for s in range(self.sides()):
                if s not in team:
                    score[s] += 10 * won[s]
        return score


def game_winners(rules, scores: list[int], contractor_side: int | None, made: bool,
                 partner_side: int | None = None) -> list[int]:
    """§9, §10.7: the winning sides after a deal (empty while the game goes on); ``partner_side``:
    a five-handed partner's side, which made (or lost) the contract too."""
    sides = range(len(scores))
    team = [] if contractor_side is None else [contractor_side] + ([partner_side] if partner_side is not None else [])
    if rules.win_needs_contract:
        reached = [s for s in team if scores[s] >= rules.target] if made else []
    else:
        reached = [s for s in sides if scores[s] >= rules.target]
        if len(reached) > 1:
            if any(s in team for s in reached):
                reached = [s for s in reached if s in team]
            else:
                best = max(scores[s] for s in reached)
                reached = [s for s in reached if scores[s] == best]
    if reached:
        return sorted(reached)
    sunk = [s for s in sides if scores[s] <= rules.losing_score]
    if not sunk:
        return []
    others = [s for s in sides if s not in sunk]
    if len(scores) == 2:
        return others
    best = max(scores[s] for s in others) if others else max(scores)
    return [s for s in (others or sides) if scores[s] == best]
