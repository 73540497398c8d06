"""Card play in trick contracts (docs/rules.md §7), the way a decent club player does it.

The contractor draws trumps while the opponents may still hold some; winners are cashed (at no
trumps: long suits first, short aces kept as stoppers); defenders cash aces, lead the partner's
bid suit or a singleton to ruff. Second hand low, third hand high; a partner's safe winner is
never overtaken; tricks are won as cheaply as is safe; losers are thrown from short suits. A
suitless joker wins a trick when void in the suit led, and is led naming the side's long suit.
"""

from __future__ import annotations

from agents.heuristic.view import TableView
from five_hundred_env.actions import (
    FIRST_JOKER_LEAD,
    FIRST_NOMINATE,
    action_card,
    bid_strain,
    card_action,
    is_card_action,
    is_trick_bid,
)
from five_hundred_env.engine import SUITLESS

_HIGH_TRUMP_STRENGTH = 19
"""A trump this strong (the bowers and the joker) is not spent overtaking a partner's card."""


def _suit_length(v: TableView, c: int) -> int:
    """How many cards of ``c``'s effective suit the hand holds."""
    t = v.t
    return (v.hand & t.suit[t.eff[c]]).bit_count()


def _keep_value(v: TableView, c: int, enemy: int) -> float:
    """How much this card is worth keeping (lowest is thrown first)."""
    t = v.t
    e = t.eff[c]
    if e == SUITLESS:
        return 1000.0
    if v.trump >= 0 and e == v.trump:
        return 500.0 + t.strength[c]
    if not t.higher[c] & enemy:
        return 200.0 + t.strength[c]
    length = (v.hand & t.suit[e]).bit_count()
    if v.trump >= 0:
        return t.strength[c] + 2.0 * length
    return t.strength[c] + 3.0 * length


def _throw(v: TableView, cards: list[int]) -> int:
    """The card least worth keeping."""
    enemy = v.enemy_possible()
    best = min(cards, key=lambda c: _keep_value(v, c, enemy))
    return card_action(best)


def follow(v: TableView, legal: list[int]) -> int:
    """A card to a trick already led."""
    t = v.t
    led = v.led_suit
    keys = t.key[led]
    cards = [action_card(a) for a in legal]
    w_seat, _w_card, w_key = v.winner()
    rest = v.still_to_play()
    rest_enemies = [r for r in rest if r in v.enemies]
    winners = sorted((c for c in cards if keys[c] > w_key), key=lambda c: keys[c])

    def safe(key: int) -> bool:
        return not any(v.beats(e, led, key) for e in rest_enemies)

    if w_seat in v.friends:
        if safe(w_key) or not winners:
            return _throw(v, cards)
        # the partner's card may be beaten: take over only with a sure, cheap winner
        for c in winners:
            if safe(keys[c]):
                if t.eff[c] == v.trump and led != v.trump and t.strength[c] >= _HIGH_TRUMP_STRENGTH:
                    break
                return card_action(c)
        return _throw(v, cards)
    if not winners:
        return _throw(v, cards)
    for c in winners:
        if safe(keys[c]):
            return card_action(c)  # the cheapest sure winner
    if not rest_enemies:
        return card_action(winners[0])
    following = t.eff[winners[0]] == led
    if len(v.trick) == 1 and following and any(r in v.friends for r in rest):
        return _throw(v, cards)  # second hand low: the partner still plays after
    if following:
        return card_action(winners[-1])  # third hand high
    # ruffing with no sure winner: ruff low and hope (an overruff is only possible, not known)
    return card_action(winners[0])


def _is_boss(v: TableView, c: int, enemy: int) -> bool:
    """A card no enemy can beat when it is led."""
    t = v.t
    if t.higher[c] & enemy:
        return False
    e = t.eff[c]
    if e == SUITLESS or (v.trump >= 0 and e == v.trump):
        return True
    if v.trump < 0:
        # only a suitless joker can beat it, played by an enemy who may be void in the suit
        short = (v.unseen & t.suit[e]).bit_count() <= 2
        return not any(v.possible[x] & t.suit[SUITLESS] and (short or not v.possible[x] & t.suit[e])
                       for x in v.enemies)
    return not any(v.may_ruff(x, e) for x in v.enemies)


def lead(v: TableView, legal: list[int]) -> int:
    """A card (or a suitless joker naming a suit) to lead to a new trick."""
    cards = [action_card(a) for a in legal if is_card_action(a)]
    enemy = v.enemy_possible()
    bosses = [c for c in cards if _is_boss(v, c, enemy)]
    if v.trump >= 0:
        return _lead_at_trumps(v, cards, bosses, enemy)
    joker_leads = [a for a in legal if FIRST_JOKER_LEAD <= a < FIRST_NOMINATE]
    return _lead_at_no_trumps(v, legal, cards, joker_leads, bosses, enemy)


def _draw_trumps(v: TableView, my_trumps: list[int], enemy: int) -> int | None:
    """The contractor's side draws the enemies' trumps: with a sure winner, else low from three
    or more (to flush the honours), else low to the partner who holds the contract."""
    t = v.t
    top = max(my_trumps, key=lambda c: t.strength[c])
    if not t.higher[top] & enemy:
        return card_action(top)
    lowest = card_action(min(my_trumps, key=lambda c: t.strength[c]))
    if v.contractor == 0 and len(my_trumps) >= 3:
        return lowest
    if v.contractor in v.mates and not v.shown_void[v.contractor] >> v.trump & 1:
        return lowest
    return None


def _defender_lead(v: TableView, side: list[int], my_trumps: list[int]) -> int | None:
    """A defender leads a singleton to ruff (holding a trump), else the partner's suit."""
    if my_trumps:
        singles = [c for c in side if _suit_length(v, c) == 1]
        if singles:
            return card_action(min(singles, key=lambda c: v.t.strength[c]))
    return _partner_suit_lead(v, side)


def _lead_at_trumps(v: TableView, cards: list[int], bosses: list[int], enemy: int) -> int:
    t = v.t
    trump = v.trump
    declaring = v.declaring
    my_trumps = [c for c in cards if t.eff[c] == trump]
    if declaring and enemy & t.suit[trump] and my_trumps:
        drawn = _draw_trumps(v, my_trumps, enemy)
        if drawn is not None:
            return drawn
    side_bosses = [c for c in bosses if t.eff[c] != trump]
    if side_bosses:
        return card_action(max(side_bosses, key=lambda c: (_suit_length(v, c), t.strength[c])))
    if bosses and declaring:
        return card_action(max(bosses, key=lambda c: t.strength[c]))
    side = [c for c in cards if t.eff[c] != trump]
    if not declaring and side:
        defence = _defender_lead(v, side, my_trumps)
        if defence is not None:
            return defence
    if side:
        return _lead_from_long(v, side, enemy)
    return card_action(min(cards, key=lambda c: t.strength[c]))


def _lead_at_no_trumps(v: TableView, legal: list[int], cards: list[int], joker_leads: list[int],
                       bosses: list[int], enemy: int) -> int:
    """Run the long suits' winners, develop the longest suit, and keep the short suits' aces as
    stoppers and ways back in."""
    t = v.t
    hand = v.hand
    declaring = v.declaring
    regular = [c for c in bosses if t.eff[c] != SUITLESS]
    running = [c for c in regular if _suit_length(v, c) >= 3]
    if running:
        return card_action(max(running, key=lambda c: (_suit_length(v, c), t.strength[c])))
    if joker_leads and declaring:
        # a sure trick that also pulls the others' cards of our long suit
        return max(joker_leads, key=lambda a: ((hand & t.suit[(a - FIRST_JOKER_LEAD) % 4]).bit_count(), -a))
    if not declaring and cards:
        partner_suit = _partner_suit_lead(v, cards)
        if partner_suit is not None:
            return partner_suit
    long_cards = [c for c in cards if t.eff[c] != SUITLESS and _suit_length(v, c) >= 3]
    if long_cards:
        return _lead_from_long(v, long_cards, enemy)
    if regular:
        return card_action(max(regular, key=lambda c: (_suit_length(v, c), t.strength[c])))
    if cards:
        return _lead_from_long(v, cards, enemy)
    return joker_leads[0] if joker_leads else legal[0]


def _partner_suit_lead(v: TableView, cards: list[int]) -> int | None:
    """Lead the suit a partner bid, if we hold it (top of a doubleton, else low)."""
    mates = [m for m in v.mates if not v.out >> m & 1]
    if not mates:
        return None
    t = v.t
    suits = {bid_strain(b) for b, r in v.bids if r in mates and is_trick_bid(b)}
    for s in sorted(suits, reverse=True):
        if s >= 4 or s == v.trump:
            continue
        mine = [c for c in cards if t.eff[c] == s]
        if mine:
            pick = max(mine, key=lambda c: t.strength[c]) if len(mine) <= 2 else min(mine, key=lambda c: t.strength[c])
            return card_action(pick)
    return None


def _lead_from_long(v: TableView, cards: list[int], enemy: int) -> int:
    """Lead from the longest suit: the top of a sequence that knocks out one honour, else low."""
    t = v.t
    by_suit: dict[int, list[int]] = {}
    for c in cards:
        by_suit.setdefault(t.eff[c], []).append(c)
    declaring = v.declaring

    def score(s: int) -> tuple[bool, bool, int, int]:
        mine = by_suit[s]
        ruffable = v.trump >= 0 and s != v.trump and any(v.may_ruff(e, s) for e in v.enemies)
        # defenders avoid leading into the contractor's void; everyone avoids trumps unless forced
        return (not ruffable, s != v.trump or declaring, len(mine), s)

    s = max(by_suit, key=score)
    mine = sorted(by_suit[s], key=lambda c: -t.strength[c])
    top = mine[0]
    if (len(mine) >= 2 and (t.higher[top] & enemy).bit_count() == 1
            and t.higher[mine[1]] & v.unseen == t.higher[top] & v.unseen):
        return card_action(top)
    return card_action(mine[-1])
