"""Inference from the card play: the cards a seat cannot hold if it plays its cards as the heuristic does.

The heuristic's card play in a trick contract (:func:`agents.heuristic.play.follow`) shows two things
about the hand of a seat that follows to a trick, whatever else it holds:

* **The lowest card when not winning.** A card that does not beat the trick's winner so far is a
  card thrown (``_throw``), and a card thrown while following suit is the *lowest* of the suit led
  in that hand (the keep value of a card rises with its rank within a suit): the seat held no lower
  card of the suit led.
* **A winner when an enemy is winning.** With an enemy of the seat winning the trick so far, the
  heuristic plays a card that beats it whenever it holds one (the cheapest sure winner, third hand
  high, or a low ruff), except second hand low (following, a partner still to play after it): if
  it played a card that does not win, it held no legal card that would have (none of the suit led
  above the winner when following; no card above the winner at all, a trump or a joker, when void).

Both are facts about the seat's hand when it played, so about its hand now (hands only shrink, and
the cards it played since are known). :func:`play_exclusions` reads them off an :class:`InfoSet`'s
plays for the seats it is told to model, and :func:`inferred_sampler` draws worlds uniformly among
the deals of the information set that also satisfy them (the exact sampler of
:mod:`five_hundred_env.sampling` with each excluded card's location removed: no rejection). Where
a modelled seat did not play as the heuristic would, no deal may be left; the sampler then keeps
the information set's uniform worlds. Closed and open misères (another module of the heuristic)
and the five-handed game (whose partnerships are private) are not inferred from.
"""

from __future__ import annotations

from collections.abc import Iterable

from five_hundred_env.actions import FIRST_JOKER_LEAD, MISERE, OPEN_MISERE, action_card, is_joker_lead
from five_hundred_env.engine import EFFECTIVE_SUIT, SUIT_CARDS, WIN_KEY
from five_hundred_env.sampling import ConstrainedDealer, InfoSet, WorldSampler


def _friends(info: InfoSet, seat: int) -> tuple[int, ...]:
    """The seats the heuristic in ``seat`` plays with (``TableView.friends``): its team-mates, or,
    playing alone, the other defenders while it defends."""
    rules = info.rules
    mates = rules.partners_of(seat)
    if mates:
        return mates
    if seat == info.contractor:
        return ()
    return tuple(s for s in range(rules.num_players) if s not in (seat, info.contractor))


def play_exclusions(info: InfoSet, seats: Iterable[int]) -> dict[int, int]:
    """The cards (a mask per seat of ``seats``) each of those seats cannot hold now if it played
    every card so far as the heuristic would (the module docstring); no entry for a seat nothing
    was inferred about. Empty for misères and for the five-handed game."""
    modelled = set(seats)
    rules = info.rules
    if (not modelled or info.contract < 0 or info.contract in (MISERE, OPEN_MISERE)
            or rules.has_partner_call):
        return {}
    ctx = info.ctx
    size = info.trick_size()
    effective, keys = EFFECTIVE_SUIT[ctx], WIN_KEY[ctx]
    friends = {s: _friends(info, s) for s in modelled}
    out: dict[int, int] = {}
    for start in range(0, len(info.plays), size):
        trick = info.plays[start:start + size]
        lead_seat, lead_action = trick[0]
        lead_card = action_card(lead_action)
        led = (lead_action - FIRST_JOKER_LEAD) % 4 if is_joker_lead(lead_action) else effective[lead_card]
        key = keys[led]
        w_seat, w_key = lead_seat, key[lead_card]
        for j in range(1, len(trick)):
            seat, action = trick[j]
            card = action_card(action)
            if seat in modelled:
                rest = _still_to_play(info, lead_seat, j)
                excluded = _follow_exclusions(ctx, led, card, w_key, w_seat in friends[seat],
                                              any(s not in friends[seat] for s in rest),
                                              j == 1 and any(s in friends[seat] for s in rest))
                if excluded:
                    out[seat] = out.get(seat, 0) | excluded
            if key[card] > w_key:
                w_seat, w_key = seat, key[card]
    return out


def _follow_exclusions(ctx: int, led: int, card: int, w_key: float, friend_winning: bool, enemy_after: bool,
                       partner_after_second: bool) -> int:
    """The cards a heuristic seat that followed to a trick led ``led`` with ``card`` did not hold,
    the trick so far won at ``w_key`` by a friend of it or not, an enemy of it still to play after
    it or not, and, second to play, a friend still to play after it or not (``follow``'s branches)."""
    key = WIN_KEY[ctx][led]
    effective = EFFECTIVE_SUIT[ctx]
    suit = SUIT_CARDS[ctx][led]
    following = effective[card] == led
    legal = suit if following else -1  # following: only the suit led was legal; void: any card
    beats = key[card] > w_key
    excluded = 0
    # a throw: any card that does not win, and anything with a friend winning and no enemy after
    if not beats or (friend_winning and not enemy_after):
        if following:  # the lowest of the suit led (a card's keep value rises with its rank in its suit)
            excluded |= _mask(c for c in _cards(suit) if key[c] < key[card])
        elif ctx < 4 and effective[card] == ctx:  # a trump is kept before any other card: only trumps left
            excluded |= ~SUIT_CARDS[ctx][ctx] & _ALL
    if not friend_winning:
        above = _mask(c for c in range(len(key)) if key[c] > w_key) & legal
        if not beats and not (following and partner_after_second):
            excluded |= above  # it plays a winner whenever it holds one (but second hand low)
        elif beats and not enemy_after:  # last of its enemies: the cheapest winner
            excluded |= _mask(c for c in _cards(above) if key[c] < key[card])
    return excluded


_ALL = (1 << 128) - 1
"""Every card id (a mask wider than any pack)."""


def _cards(mask: int) -> list[int]:
    return [c for c in range(mask.bit_length()) if mask >> c & 1]


def _mask(cards: Iterable[int]) -> int:
    return sum(1 << c for c in cards)


def _still_to_play(info: InfoSet, leader: int, j: int) -> list[int]:
    """The seats that play to a trick led by ``leader`` after its ``j``-th card (in seat order,
    skipping the seats sitting out), whether or not they have played yet."""
    n = info.rules.num_players
    out_seats = set(info.sitting_out())
    seats = []
    seat = leader
    for _ in range(n):
        if seat not in out_seats:
            seats.append(seat)
        seat = (seat + 1) % n
    return seats[j + 1:]


def inferred_sampler(info: InfoSet, exclusions: dict[int, int]) -> tuple[WorldSampler, bool]:
    """A :class:`WorldSampler` of ``info`` whose worlds also give no seat a card of its
    ``exclusions`` (uniform among those deals), and whether the exclusions were kept: where they
    leave no deal (a seat did not play as the heuristic), the information set's own sampler."""
    sampler = WorldSampler(info)
    if not exclusions:
        return sampler, False
    allowed: dict[int, int] = {}
    cards: list[int] = []
    for group, where in sampler.dealer.groups:
        mask = sum(1 << i for i in where)
        for c in group:
            allowed[c] = mask
            cards.append(c)
    for seat, excluded in exclusions.items():
        if seat not in sampler.locations:
            continue
        bit = 1 << sampler.locations.index(seat)
        for c in cards:
            if excluded >> c & 1:
                allowed[c] &= ~bit
    dealer = ConstrainedDealer(cards, allowed, list(sampler.dealer.sizes))
    if dealer.count() == 0:
        return sampler, False
    sampler.dealer = dealer
    return sampler, True
