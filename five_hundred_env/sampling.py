"""Information-set sampling: complete deals drawn uniformly among those one seat cannot tell apart.

An :class:`InfoSet` is what one seat knows at a decision point (docs/rules.md §3-§7): its own cards, the
auction, every card played and by whom, the kitty and discards if it is the contractor, the joker's
nominated suit, the exposed open-misère hand. What that implies about the hidden cards:

* each unknown *location* (another seat's hand, the kitty during the auction, the discards for
  everyone but the contractor) has a known number of cards;
* a seat that failed to follow a suit holds no card of that *effective* suit (§6, §7: the bowers
  and a trump joker belong to the trump suit, a nominated joker to its suit);
* a suitless joker led naming a suit that was already led (``joker_lead_suit=not_yet_led``) shows
  that the leader held nothing but jokers (§7);
* a nominated joker (or the contractor's nomination turn itself) puts ``JK`` in the contractor's
  hand after the discards;
* the two-handed dead hand (§10.3) is one more location nobody sees, of ten cards;
* a five-handed card call (§10.5): the called card, until it is played, is not in the
  contractor's hand (it was called from outside it) and, when the observer knows the partner, is
  in the partner's hand; whoever does not know the partner samples it among the other hands and
  the discards alike.

The observation does not show a ``NO_NOMINATION`` (see :mod:`five_hundred_env.observation`), so a
seat that sees no nominated suit learns nothing about the joker from it, and neither does the sampler.

Sampling is exact, without rejection: the unknown cards fall into *groups* of cards allowed in the
same locations; :class:`ConstrainedDealer` counts the ways to fill every location by dynamic
programming over the groups (how many cards of each group go where, times the multinomial of
arranging them), then draws each group's split with probability proportional to its count and
shuffles the group's cards into it. Every consistent assignment then has probability
``1 / count``. Only ``both_jokers_min_bid`` (an option no preset sets), which constrains the
*dealt* hands through the auction, is enforced by rejection: the auction is replayed on each world
and a world it is illegal in is drawn again, which keeps the distribution exactly uniform.
"""

from __future__ import annotations

import bisect
import random
from dataclasses import dataclass
from math import factorial

from five_hundred_env.actions import (
    FIRST_JOKER_LEAD,
    FIRST_NOMINATE,
    MISERE,
    NO_NOMINATION,
    NT,
    OPEN_MISERE,
    action_card,
    bid_strain,
    card_action,
    is_card_action,
    is_joker_lead,
    joker_lead_action,
    partner_action,
)
from five_hundred_env.cards import JOKER1, JOKERS_MASK, mask_to_cards
from five_hundred_env.engine import EFFECTIVE_SUIT, NO_TRUMP_CTX, SUIT_CARDS, SUITLESS, Deal, IllegalActionError, Phase
from five_hundred_env.rules import Rules

MAX_REJECTIONS = 100_000
"""Worlds drawn for one sample before giving up (only ``both_jokers_min_bid`` rejects any)."""

Play = tuple[int, int]
"""(seat, action): one card play, the action being a card action or a joker lead ``JK:x``."""


@dataclass(frozen=True)
class InfoSet:
    """What ``seat`` knows at a decision point; build one with :meth:`from_deal` (or the agent's tracker).

    ``discards`` and ``kitty`` are known only to the contractor (else ``None``); ``nomination`` is
    ``NOMINATE_x`` once a suit is nominated for the joker, else ``None`` (a world whose contractor
    could nominate is then replayed with ``NO_NOMINATION``); ``joker_held`` says the contractor is known to hold ``JK`` after the
    discards (a nomination was seen, or it is the contractor's nomination turn now).
    """

    rules: Rules
    seat: int
    dealer: int
    phase: Phase
    bids: tuple[tuple[int, int], ...]
    hand: int
    contractor: int = -1
    contract: int = -1
    kitty: int | None = None
    discards: int | None = None
    num_discards: int = 0
    nomination: int | None = None
    joker_held: bool = False
    plays: tuple[Play, ...] = ()
    exposed_hand: int | None = None
    call: int | None = None
    """The five-handed call (§10.5): the card action called or ``PARTNER_s``; ``None`` before it or without one."""
    partner: int = -1
    """The five-handed partner when this seat knows it (the holder, everyone once it is public), else -1."""

    @classmethod
    def from_deal(cls, deal: Deal, seat: int) -> InfoSet:
        """The information set of ``seat`` in ``deal``: only what that seat has seen is read."""
        if not 0 <= seat < deal.n:
            raise ValueError(f"seat must be 0..{deal.n - 1}, got {seat!r}")
        own = seat == deal.contractor
        after_auction = deal.contractor >= 0
        nomination = FIRST_NOMINATE + deal.nominated if deal.nominated >= 0 else None
        plays: list[Play] = []
        for _leader, led, trick, _winner in [*deal.tricks, (deal.leader, deal.led_suit, deal.trick, -1)]:
            for i, (s, c) in enumerate(trick):
                suitless_lead = i == 0 and EFFECTIVE_SUIT[deal.ctx][c] == SUITLESS  # it named the suit led
                plays.append((s, joker_lead_action(c, led) if suitless_lead else card_action(c)))
        call = None
        if deal.called_card >= 0:
            call = card_action(deal.called_card)
        elif deal.partner_revealed:
            call = partner_action(deal.partner)
        knows = deal.partner_revealed or seat == deal.partner
        return cls(
            rules=deal.rules, seat=seat, dealer=deal.dealer, phase=deal.phase,
            bids=tuple(deal.bids), hand=deal.hands[seat], contractor=deal.contractor, contract=deal.contract,
            kitty=deal.kitty if own else None, discards=deal.discards if own else None,
            num_discards=deal.discards.bit_count() if after_auction else 0, nomination=nomination,
            joker_held=deal.nominated >= 0 or deal.phase == Phase.NOMINATE,
            plays=tuple(plays), exposed_hand=deal.exposed_cards() or None,
            call=call, partner=deal.partner if knows else -1,
        )

    # -- what the public record implies --------------------------------------------------------
    @property
    def ctx(self) -> int:
        """The engine's trump context (§6) of the contract and nomination."""
        if self.contract < 0 or self.contract in (MISERE, OPEN_MISERE) or bid_strain(self.contract) == NT:
            if self.nomination is not None:
                return NO_TRUMP_CTX + 1 + self.nomination - FIRST_NOMINATE
            return NO_TRUMP_CTX
        return bid_strain(self.contract)

    @property
    def kitty_taken(self) -> bool:
        """Whether the auction is over and the contractor has taken the kitty (so the hidden cards hold no kitty)."""
        return self.contractor >= 0 and self.phase != Phase.BIDDING

    def sitting_out(self) -> tuple[int, ...]:
        """The contractor's team-mates sitting out a misère (§7, §10.4)."""
        if self.contract in (MISERE, OPEN_MISERE):
            return self.rules.partners_of(self.contractor)
        return ()

    def trick_size(self) -> int:
        """Cards per trick: one per seat, less the team-mates sitting out a misère."""
        return self.rules.num_players - len(self.sitting_out())

    def played_and_voids(self) -> tuple[list[int], list[int]]:
        """Each seat's played cards, and the effective suits (bits 0-3) it is known to lack now."""
        n = self.rules.num_players
        ctx = self.ctx
        played, voids = [0] * n, [0] * n
        size = self.trick_size()
        suits_led = 0
        led = -1
        for i, (seat, action) in enumerate(self.plays):
            card = action_card(action)
            played[seat] |= 1 << card
            if i % size == 0:
                joker_lead = is_joker_lead(action)
                led = (action - FIRST_JOKER_LEAD) % 4 if joker_lead else EFFECTIVE_SUIT[ctx][card]
                if joker_lead and self.rules.joker_lead_suit == "not_yet_led" and suits_led >> led & 1:
                    voids[seat] = 15  # only an all-joker hand may name a suit already led (§7)
                suits_led |= 1 << led
            elif EFFECTIVE_SUIT[ctx][card] != led:
                voids[seat] |= 1 << led
        return played, voids

    def hand_size(self, seat: int, played: list[int]) -> int:
        """How many cards ``seat`` holds now."""
        size = self.rules.hand_size - played[seat].bit_count()
        if seat == self.contractor and self.kitty_taken:
            size += self.rules.kitty_size - self.num_discards
        return size


class ConstrainedDealer:
    """Exactly uniform assignments of cards to locations of fixed sizes, each card allowed in some.

    ``allowed[c]`` is the bit set of locations card ``c`` may go to. Cards with the same allowed
    set are exchangeable, so the count is a sum over how many of each group go where; the
    tables of partial counts are built lazily and kept, so later draws only bisect.
    """

    def __init__(self, cards: list[int], allowed: dict[int, int], sizes: list[int]) -> None:
        by_set: dict[int, list[int]] = {}
        for c in cards:
            by_set.setdefault(allowed[c], []).append(c)
        if len(cards) != sum(sizes):
            raise ValueError(f"{len(cards)} unknown cards for {sum(sizes)} places: the information set is inconsistent")
        self.groups = [(cards_, [i for i in range(len(sizes)) if mask >> i & 1]) for mask, cards_ in sorted(by_set.items())]
        self.sizes = tuple(sizes)
        self._counts: dict[tuple[int, tuple[int, ...]], int] = {}
        self._choices: dict[tuple[int, tuple[int, ...]], tuple[list[int], list[tuple[int, ...]]]] = {}

    def count(self) -> int:
        """The number of distinct assignments of the cards to the locations."""
        return self._count(0, self.sizes)

    def _count(self, g: int, caps: tuple[int, ...]) -> int:
        if g == len(self.groups):
            return 0 if any(caps) else 1
        key = (g, caps)
        if key not in self._counts:
            self._counts[key] = sum(w for w, _k in self._splits(g, caps))
        return self._counts[key]

    def _splits(self, g: int, caps: tuple[int, ...]) -> list[tuple[int, tuple[int, ...]]]:
        """Each way to spread group ``g`` over its locations, weighted by how many completions it has."""
        cards, where = self.groups[g]
        m = len(cards)
        out = []
        for split in _compositions(m, [caps[i] for i in where]):
            rest = list(caps)
            ways = factorial(m)
            for i, k in zip(where, split, strict=True):
                rest[i] -= k
                ways //= factorial(k)
            completions = self._count(g + 1, tuple(rest))
            if completions:
                out.append((ways * completions, tuple(rest)))
        return out

    def sample(self, rng: random.Random) -> list[int]:
        """One uniformly drawn assignment: the card mask of each location."""
        caps = self.sizes
        masks = [0] * len(caps)
        for g, (cards, _where) in enumerate(self.groups):
            key = (g, caps)
            choice = self._choices.get(key)
            if choice is None:
                cumulative, rests, total = [], [], 0
                for w, rest in self._splits(g, caps):
                    total += w
                    cumulative.append(total)
                    rests.append(rest)
                if not total:
                    raise ValueError("no deal is consistent with this information set")
                choice = self._choices[key] = (cumulative, rests)
            cumulative, rests = choice
            rest = rests[bisect.bisect_right(cumulative, rng.randrange(cumulative[-1]))]
            shuffled = cards.copy()
            rng.shuffle(shuffled)
            start = 0
            for i, (before, after) in enumerate(zip(caps, rest, strict=True)):
                for c in shuffled[start:start + before - after]:
                    masks[i] |= 1 << c
                start += before - after
            caps = rest
        return masks


def _compositions(m: int, caps: list[int]) -> list[tuple[int, ...]]:
    """Every way to write ``m`` as an ordered sum of ``len(caps)`` parts, part ``i`` at most ``caps[i]``."""
    if not caps:
        return [()] if m == 0 else []
    if len(caps) == 1:
        return [(m,)] if m <= caps[0] else []
    room = sum(caps[1:])
    return [(k, *rest) for k in range(max(0, m - room), min(m, caps[0]) + 1) for rest in _compositions(m - k, caps[1:])]


class WorldSampler:
    """Deals consistent with an :class:`InfoSet`, drawn uniformly; each is a real :class:`Deal`
    replayed from its cards to the same decision point, so ``legal_actions``/``apply_action`` work."""

    def __init__(self, info: InfoSet) -> None:
        self.info = info
        rules = info.rules
        n = rules.num_players
        played, voids = info.played_and_voids()
        self.played = played
        known = info.hand | sum(played) | (info.kitty or 0) | (info.discards or 0) | (info.exposed_hand or 0)
        self.fixed_hands: dict[int, int] = {info.seat: info.hand}
        if info.exposed_hand is not None:
            self.fixed_hands[info.contractor] = info.exposed_hand
        self.locations: list[int] = [s for s in range(n) if s not in self.fixed_hands]
        """The seats with unknown hands; then -1 for the kitty (auction) or the discards (others),
        and -2 for the two-handed dead hand."""
        sizes = [info.hand_size(s, played) for s in self.locations]
        if info.phase == Phase.BIDDING:
            self.locations.append(-1)
            sizes.append(rules.kitty_size)
        elif info.discards is None and info.num_discards:
            self.locations.append(-1)
            sizes.append(info.num_discards)
        if rules.dead_hand_size:
            self.locations.append(-2)
            sizes.append(rules.dead_hand_size)
        ctx = info.ctx
        forbidden = [sum(SUIT_CARDS[ctx][v] for v in range(4) if voids[s] >> v & 1) if s >= 0 else 0
                     for s in self.locations]
        joker_placed = info.joker_held and not sum(played) >> JOKER1 & 1
        allowed: dict[int, int] = {}
        unknown = mask_to_cards(rules.deck & ~known)
        for c in unknown:
            allowed[c] = sum(1 << i for i, f in enumerate(forbidden) if not f >> c & 1)
            if joker_placed and c == JOKER1:  # seen nominated: it was in the contractor's hand (§7)
                allowed[c] &= 1 << self.locations.index(info.contractor)
        if info.call is not None and is_card_action(info.call) and action_card(info.call) in allowed:
            called = action_card(info.call)  # §10.5: unplayed, it is outside the contractor's hand
            if info.partner >= 0 and info.partner in self.locations:
                allowed[called] &= 1 << self.locations.index(info.partner)
            elif info.contractor in self.locations:
                allowed[called] &= ~(1 << self.locations.index(info.contractor))
        self.dealer = ConstrainedDealer(unknown, allowed, sizes)
        self._templates: dict[tuple[int, int, int], Deal | None] = {}
        """A replayed world per :meth:`_path_key` (``None``: its auction is illegal), for :meth:`replay`."""

    def count(self) -> int:
        """How many assignments of the hidden cards are consistent (each equally likely); with
        ``both_jokers_min_bid`` this counts them before the auction's check, which rejects some."""
        return self.dealer.count()

    def sample_hidden(self, rng: random.Random) -> tuple[list[int], int]:
        """One uniformly drawn assignment: every seat's hand now, and the kitty (auction) or discards."""
        masks = self.dealer.sample(rng)
        hands = [self.fixed_hands.get(s, 0) for s in range(self.info.rules.num_players)]
        extra = 0
        for s, m in zip(self.locations, masks, strict=True):
            if s >= 0:
                hands[s] = m
            elif s == -1:
                extra = m  # (-2, the dead hand, is what the deal leaves over)
        if self.info.phase != Phase.BIDDING and self.info.discards is not None:
            extra = self.info.discards
        return hands, extra

    def sample(self, rng: random.Random) -> Deal:
        """A uniformly drawn complete deal at this decision point (a fresh :class:`Deal`)."""
        for _ in range(MAX_REJECTIONS):
            deal = self.replay(*self.dealt_cards(*self.sample_hidden(rng), rng))
            if deal is not None:
                return deal
        raise RuntimeError(f"no world consistent with the auction in {MAX_REJECTIONS} draws (both_jokers_min_bid)")

    def dealt_cards(self, hands: list[int], extra: int, rng: random.Random) -> tuple[list[int], int, int]:
        """The hands as dealt and the kitty of a world drawn by :meth:`sample_hidden` (and its ``extra``,
        for :meth:`replay`): a cheap form of the world, enough to replay its auction."""
        info = self.info
        dealt = [h | p for h, p in zip(hands, self.played, strict=True)]
        if info.phase == Phase.BIDDING:
            kitty = extra
        elif info.kitty is not None:
            kitty = info.kitty
            dealt[info.contractor] = (dealt[info.contractor] | extra) & ~kitty
        else:  # which of the contractor's cards were the kitty is unknown: any split is as likely
            pool = mask_to_cards(dealt[info.contractor] | extra)
            kitty = sum(1 << c for c in rng.sample(pool, info.rules.kitty_size))
            dealt[info.contractor] = (dealt[info.contractor] | extra) & ~kitty
        return dealt, kitty, extra

    def replay(self, dealt: list[int], kitty: int, extra: int) -> Deal | None:
        """The public record replayed on a world of :meth:`dealt_cards`; ``None`` if its auction is
        illegal there (``both_jokers_min_bid``).

        The record is replayed once per :meth:`_path_key`: worlds that agree on it take the same
        path through the engine (the same phases, legal actions and public state), so the later
        ones are a copy of the first with their own cards, and the discards their history holds."""
        hands = self._hands_now(dealt, kitty, extra)
        key = self._path_key(dealt, hands)
        if key not in self._templates:
            world = self._replay_actions(dealt, kitty, extra)
            self._templates[key] = None if world is None else world.clone()
            return world
        template = self._templates[key]
        if template is None:
            return None
        deal = template.clone()
        deal.dealt, deal.kitty, deal.hands = tuple(dealt), kitty, hands
        if self.info.phase != Phase.BIDDING:
            start = len(self.info.bids)
            deal.discards = extra
            deal.history[start:start + extra.bit_count()] = [card_action(c) for c in mask_to_cards(extra)]
        return deal

    def _hands_now(self, dealt: list[int], kitty: int, extra: int) -> list[int]:
        """Every seat's hand at the decision point in the world of :meth:`dealt_cards`."""
        hands = [d & ~p for d, p in zip(dealt, self.played, strict=True)]
        if self.info.kitty_taken:
            c = self.info.contractor
            hands[c] = (dealt[c] | kitty) & ~extra & ~self.played[c]
        return hands

    def _path_key(self, dealt: list[int], hands: list[int]) -> tuple[int, int, int]:
        """What of a world's hidden cards the engine's replay of the public record depends on: whether
        the contractor holds the first joker after the discards (a nomination turn, §7), who holds a
        five-handed called card (the partner, §10.5) and who was dealt both jokers
        (``both_jokers_min_bid``, §4); everything else the replay reads is public."""
        info = self.info
        after_discards = [h | p for h, p in zip(hands, self.played, strict=True)]
        joker = after_discards[info.contractor] >> JOKER1 & 1 if info.contractor >= 0 else 0
        holder = -1
        if info.call is not None and is_card_action(info.call):
            called = action_card(info.call)
            holder = next((s for s, h in enumerate(after_discards) if h >> called & 1), -1)
        both = -1
        if info.rules.both_jokers_min_bid is not None:
            both = max((s for s, d in enumerate(dealt) if d & JOKERS_MASK == JOKERS_MASK), default=-1)
        return joker, holder, both

    def _replay_actions(self, dealt: list[int], kitty: int, extra: int) -> Deal | None:
        """:meth:`replay` by the engine, action by action."""
        info = self.info
        deal = Deal(info.rules, dealt, kitty, info.dealer)
        try:
            for _seat, action in info.bids:
                deal.apply_action(action)
        except IllegalActionError:
            if info.rules.both_jokers_min_bid is None:
                raise
            return None
        if info.phase == Phase.BIDDING:
            return deal
        for card in mask_to_cards(extra):  # the discards, in any order: it changes nothing after
            deal.apply_action(card_action(card))
        if deal.phase == Phase.CALL and info.call is not None:
            deal.apply_action(info.call)
        if deal.phase == Phase.NOMINATE and info.phase != Phase.NOMINATE:
            deal.apply_action(NO_NOMINATION if info.nomination is None else info.nomination)
        for _seat, action in info.plays:
            deal.apply_action(action)
        return deal

__all__ = ["ConstrainedDealer", "InfoSet", "Play", "WorldSampler"]
