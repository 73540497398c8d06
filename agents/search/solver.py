"""An exact perfect-information solver of the trick play (docs/rules.md §6-§8): alpha-beta over card masks.

Given a :class:`Deal` in the play phase with every hand known (a sampled world), :func:`solve`
returns the tricks the contractor's side takes in the whole deal when every seat plays
perfectly: the contractor's side maximises its tricks in a trick contract and minimises them in a
misère, the other seats (both opponents with three players) do the opposite. For the contractor's
side the deal's result (§8) is monotone in those tricks, so this also gives its best score
(:func:`side_scores`).

The search is written for speed rather than on top of ``Deal.apply_action``: hands are ``int``
masks, the card order is the engine's own tables (``EFFECTIVE_SUIT``, ``SUIT_CARDS``, ``WIN_KEY``
for the contract's trump context), and positions at the start of a trick are kept in a
transposition table of value bounds. What the engine decides beyond the card order is the
follow-suit rule of §7 (follow the effective suit led, else play anything) and the suit a
suitless joker names when led (``joker_lead_suit``), both reproduced here; the tests compare
with brute-force minimax through the engine on random endgames of every preset and contract.
"""

from __future__ import annotations

from five_hundred_env.actions import MISERE, OPEN_MISERE, card_action, joker_lead_action
from five_hundred_env.cards import JOKERS_MASK, mask_to_cards
from five_hundred_env.engine import EFFECTIVE_SUIT, SUIT_CARDS, SUITLESS, WIN_KEY, Deal, Phase
from five_hundred_env.scoring import deal_score


class _Search:
    """One position's search: the fixed tables of the contract and the transposition table."""

    def __init__(self, deal: Deal) -> None:
        if deal.phase != Phase.PLAY:
            raise ValueError(f"the solver needs a deal in the play phase, not {deal.phase.name}")
        rules = deal.rules
        self.rules = rules
        self.ctx = ctx = deal.ctx
        self.effective = EFFECTIVE_SUIT[ctx]
        self.suit_cards = SUIT_CARDS[ctx]
        self.win_key = WIN_KEY[ctx]
        self.suitless = SUIT_CARDS[ctx][SUITLESS]
        self.not_yet_led = rules.joker_lead_suit == "not_yet_led"
        n = deal.n
        out = deal.sitting_out_seats
        self.next_seat = [(s + 1) % n for s in range(n)]
        for s in range(n):
            while self.next_seat[s] in out:
                self.next_seat[s] = (self.next_seat[s] + 1) % n
        self.trick_size = n - len(out)
        team = deal.contracting_seats()  # the side, or the contractor and its called partner (§10.6)
        self.counts = [s in team for s in range(n)]
        """Whether a trick won by this seat counts for the contracting team."""
        misere = deal.contract in (MISERE, OPEN_MISERE)
        self.maximises = [(s in team) != misere for s in range(n)]
        """Whether the seat wants more tricks for the contracting team (its own team, unless a misère)."""
        self.table: dict[tuple, tuple[int, int]] = {}
        self.nodes = 0

    def moves(self, hands: list[int], trick: list[tuple[int, int]], led: int, seat: int, suits_led: int,
              voids: list[int]) -> list[tuple[int, int]]:
        """(card, suit named by a joker lead or -1) for each legal move of ``seat`` (§7)."""
        hand = hands[seat]
        if trick:
            return [(c, -1) for c in mask_to_cards(hand & self.suit_cards[led] or hand)]
        moves = [(c, -1) for c in mask_to_cards(hand & ~self.suitless)]
        jokers = hand & self.suitless
        if jokers:
            if self.not_yet_led:
                named = [s for s in range(4) if not suits_led >> s & 1]
                if not named and hand & ~JOKERS_MASK == 0:
                    named = [0, 1, 2, 3]
            else:
                named = [s for s in range(4) if not voids[seat] >> s & 1] or [0, 1, 2, 3]
            moves += [(c, s) for c in mask_to_cards(jokers) for s in named]
        return moves

    def value(self, hands: list[int], trick: list[tuple[int, int]], led: int, seat: int, suits_led: int,
              voids: list[int], alpha: int, beta: int) -> int:
        """The contractor side's tricks from here on with best play, within the window (alpha, beta)."""
        self.nodes += 1
        left = hands[seat].bit_count()
        if not trick:
            if left == 0:
                return 0
            relevant = (suits_led if self.not_yet_led else tuple(voids)) if any(h & self.suitless for h in hands) else 0
            key = (tuple(hands), seat, relevant)
            bounds = self.table.get(key)
            lo, hi = bounds if bounds else (0, left)
            if lo >= beta or lo == hi:
                return lo
            if hi <= alpha:
                return hi
            a0, b0 = max(alpha, lo), min(beta, hi)
            v = self._children(hands, trick, led, seat, suits_led, voids, a0, b0)
            if v <= a0:
                hi = min(hi, v)
            elif v >= b0:
                lo = max(lo, v)
            else:
                lo = hi = v
            self.table[key] = (lo, hi)
            return v
        return self._children(hands, trick, led, seat, suits_led, voids, alpha, beta)

    def _children(self, hands: list[int], trick: list[tuple[int, int]], led: int, seat: int, suits_led: int,
                  voids: list[int], alpha: int, beta: int) -> int:
        maximise = self.maximises[seat]
        best = -1 if maximise else 99
        hand = hands[seat]
        for card, named in self.moves(hands, trick, led, seat, suits_led, voids):
            v = self.after(hands, trick, led, seat, suits_led, voids, card, named, alpha, beta, hand)
            if maximise:
                if v > best:
                    best = v
                    alpha = max(alpha, v)
            elif v < best:
                best = v
                beta = min(beta, v)
            if alpha >= beta:
                break
        return best

    def after(self, hands: list[int], trick: list[tuple[int, int]], led: int, seat: int, suits_led: int,
              voids: list[int], card: int, named: int, alpha: int, beta: int, hand: int) -> int:
        """The value after ``seat`` plays ``card`` (naming ``named`` if it is a joker lead)."""
        new_voids = voids
        if not trick:
            led = named if named >= 0 else self.effective[card]
            suits_led |= 1 << led
        elif self.effective[card] != led and not voids[seat] >> led & 1:
            new_voids = voids.copy()
            new_voids[seat] |= 1 << led
        hands[seat] = hand & ~(1 << card)
        trick.append((seat, card))
        try:
            if len(trick) < self.trick_size:
                return self.value(hands, trick, led, self.next_seat[seat], suits_led, new_voids, alpha, beta)
            keys = self.win_key[led]
            winner = max(trick, key=lambda sc: keys[sc[1]])[0]
            won = 1 if self.counts[winner] else 0
            rest = self.value(hands, [], -1, winner, suits_led, new_voids, alpha - won, beta - won)
            return won + rest
        finally:
            trick.pop()
            hands[seat] = hand


def _won(deal: Deal, search: _Search) -> int:
    return sum(t for s, t in enumerate(deal.tricks_won) if search.counts[s])


def solve(deal: Deal) -> int:
    """The tricks the contractor's side takes in the whole deal with best play by everyone."""
    search = _Search(deal)
    rest = search.value(list(deal.hands), list(deal.trick), deal.led_suit, deal.to_act, deal.suits_led,
                        list(deal.shown_void), -1, 99)
    return _won(deal, search) + rest


def action_values(deal: Deal) -> dict[int, int]:
    """Each legal action of the seat to act → the contractor side's tricks in the deal after it,
    with best play afterwards (one transposition table shared by all the actions)."""
    search = _Search(deal)
    won = _won(deal, search)
    hands, trick, seat = list(deal.hands), list(deal.trick), deal.to_act
    out = {}
    for card, named in search.moves(hands, trick, deal.led_suit, seat, deal.suits_led, deal.shown_void):
        action = joker_lead_action(card, named) if named >= 0 else card_action(card)
        out[action] = won + search.after(hands, trick, deal.led_suit, seat, deal.suits_led, list(deal.shown_void),
                                         card, named, -1, 99, hands[seat])
    return out


def side_scores(deal: Deal, tricks: int) -> list[int]:
    """Each side's score change (§8, §10.6) when the contracting team ends the deal with ``tricks`` tricks.

    The opponents' tricks are all credited to one opponent: with two sides that changes nothing;
    with three it keeps the contractor's score and the opponents' total exact, which is all the
    solver decides (it plays the opponents as one side)."""
    rules = deal.rules
    tricks_won = [0] * rules.num_players
    tricks_won[deal.contractor] = tricks
    team = deal.contracting_seats()  # with a five-handed partner: the contractor holds the team's tricks
    opponent = next(s for s in range(rules.num_players) if s not in team and rules.side_of(s) != rules.side_of(deal.contractor))
    tricks_won[opponent] = rules.hand_size - tricks
    return deal_score(rules, deal.contract, deal.contractor, tricks_won, deal.partner)


__all__ = ["action_values", "side_scores", "solve"]
