"""Information-set sampling (five_hundred_env/sampling.py): worlds are consistent and exactly uniform.

The oracle is the engine itself: a brute-force enumeration deals the cards a seat cannot see in
every possible way, replays the deal's actions on each (the follow-suit rule of §7 and the
nomination of §7 then reject what the seat knows to be impossible) and keeps the deals whose
observation for the seat is the real one. The sampler must produce exactly that set, count it,
and hit every member equally often (a chi-square test).
"""

from __future__ import annotations

import random
import zlib
from collections import Counter
from collections.abc import Iterator
from itertools import combinations
from math import factorial

import numpy as np
import pytest
from test_search_positions import PRESET_NAMES, kinds_of, position

from five_hundred_env import make_rules
from five_hundred_env.actions import FIRST_CARD_ACTION, FIRST_NOMINATE, NO_NOMINATION, PASS, is_nomination
from five_hundred_env.cards import JOKER1, JOKERS_MASK, mask_to_cards
from five_hundred_env.engine import Deal, IllegalActionError, Phase
from five_hundred_env.observation import ObservationEncoder
from five_hundred_env.rules import Rules
from five_hundred_env.sampling import InfoSet, WorldSampler

VARIANTS = [make_rules(p) for p in PRESET_NAMES] + [make_rules("french_46", both_jokers_min_bid=8)]
NEW_VARIANTS = [make_rules(p) for p in ("two_handed", "five_handed", "six_handed")] + [
    make_rules("five_handed", partner_call="seat")]
"""§10: the dead hand is one more hidden place; the five-handed partner may be unknown."""


def _hidden_locations(deal: Deal, seat: int) -> tuple[list[int], list[int], int]:
    """The seats whose hands ``seat`` cannot see, their sizes, and the cards it cannot see."""
    own = seat == deal.contractor
    seen = deal.hands[seat] | sum(deal.played) | deal.exposed_cards() | ((deal.kitty | deal.discards) if own else 0)
    seats = [s for s in range(deal.n) if s != seat and not (deal.exposed and s == deal.contractor)]
    sizes = [deal.hands[s].bit_count() for s in seats]
    if not own and deal.discards:
        seats.append(-1)
        sizes.append(deal.discards.bit_count())
    return seats, sizes, deal.rules.deck & ~seen


def _assignments(cards: list[int], sizes: list[int]) -> Iterator[tuple[int, ...]]:
    if not sizes:
        yield ()
        return
    for chosen in combinations(cards, sizes[0]):
        rest = [c for c in cards if c not in chosen]
        for tail in _assignments(rest, sizes[1:]):
            yield (sum(1 << c for c in chosen), *tail)


def _replay(deal: Deal, seat: int, seats: list[int], masks: tuple[int, ...]) -> Deal:
    """The deal's actions replayed on the cards ``masks`` puts in the hidden locations."""
    rules = deal.rules
    hands = list(deal.hands)
    discards = deal.discards
    for s, m in zip(seats, masks, strict=True):
        if s >= 0:
            hands[s] = m
        else:
            discards = m
    dealt = [h | p for h, p in zip(hands, deal.played, strict=True)]
    c = deal.contractor
    if c == seat:
        dealt[c], kitty = deal.dealt[c], deal.kitty
    else:  # the kitty's split of the contractor's cards does not matter to the replay
        pool = mask_to_cards(dealt[c] | discards)
        kitty = sum(1 << x for x in pool[: rules.kitty_size])
        dealt[c] = (dealt[c] | discards) & ~kitty
    world = Deal(rules, dealt, kitty, deal.dealer)
    for action in [a for _s, a in deal.bids] + [FIRST_CARD_ACTION + x for x in mask_to_cards(discards)]:
        world.apply_action(action)
    if world.phase == Phase.NOMINATE and deal.phase != Phase.NOMINATE:
        world.apply_action(FIRST_NOMINATE + deal.nominated if deal.nominated >= 0 else NO_NOMINATION)
    history = deal.history[len(deal.bids) + deal.discards.bit_count():]
    for action in history[1:] if history and is_nomination(history[0]) else history:
        world.apply_action(action)
    return world


def consistent_worlds(deal: Deal, seat: int) -> set[tuple[int, ...]]:
    """Every assignment of the hidden cards the engine accepts and the seat cannot tell from the real one."""
    encoder = ObservationEncoder(deal.rules)
    seen = encoder.encode(deal, seat)
    seats, sizes, hidden = _hidden_locations(deal, seat)
    out = set()
    for masks in _assignments(mask_to_cards(hidden), sizes):
        try:
            world = _replay(deal, seat, seats, masks)
        except IllegalActionError:
            continue
        if np.array_equal(encoder.encode(world, seat), seen):
            out.add(masks)
    return out


def _multinomial(sizes: list[int]) -> int:
    out = factorial(sum(sizes))
    for k in sizes:
        out //= factorial(k)
    return out


def _sampled_key(sampler: WorldSampler, deal: Deal, seat: int, rng: random.Random) -> tuple[int, ...]:
    hands, extra = sampler.sample_hidden(rng)
    seats, _sizes, _hidden = _hidden_locations(deal, seat)
    return tuple(hands[s] if s >= 0 else extra for s in seats)


def _endgame(rules: Rules, kind: str, role: str, rng: random.Random) -> tuple[Deal, int]:
    """A late position whose unconstrained deals number at most a few thousand, and an observer."""
    while True:
        deal = position(rules, rng, kind, tricks_left=rng.choice((2, 3, 4)))
        others = [s for s in range(deal.n) if s != deal.contractor]
        seat = deal.contractor if role == "contractor" else rng.choice(others)
        _seats, sizes, _hidden = _hidden_locations(deal, seat)
        joker_unplayed_nominated = deal.nominated >= 0 and not sum(deal.played) >> JOKER1 & 1
        if 10 <= _multinomial(sizes) <= 3000 and (joker_unplayed_nominated or not role.endswith("nominated")):
            return deal, seat


CASES = [(rules, kind, role) for rules in VARIANTS for kind in kinds_of(rules) for role in ("contractor", "other")]
CASES += [(VARIANTS[0], kind, "other, joker nominated") for kind in ("no_trumps", "misere")]  # §7 nomination


@pytest.mark.parametrize(("rules", "kind", "role"), CASES, ids=lambda x: x.describe() if isinstance(x, Rules) else x)
def test_sampler_is_exactly_uniform_over_the_consistent_deals(rules: Rules, kind: str, role: str) -> None:
    """§3-§7: the support is every deal the seat cannot rule out, each drawn equally often."""
    rng = random.Random(zlib.crc32(f"{rules.describe()} {kind} {role}".encode()))
    deal, seat = _endgame(rules, kind, role, rng)
    worlds = consistent_worlds(deal, seat)
    sampler = WorldSampler(InfoSet.from_deal(deal, seat))
    if rules.both_jokers_min_bid is None:
        assert sampler.count() == len(worlds)
    else:  # the auction's constraint on the dealt hands is applied by rejection, after counting
        assert sampler.count() >= len(worlds)
    draws = max(2000, 20 * len(worlds))
    counts = Counter(_sampled_key(sampler, deal, seat, rng) for _ in range(draws))
    assert set(counts) <= worlds
    if len(worlds) > 1:
        expected = draws / len(worlds)
        chi2 = sum((counts.get(w, 0) - expected) ** 2 / expected for w in worlds)
        df = len(worlds) - 1
        z = ((chi2 / df) ** (1 / 3) - (1 - 2 / (9 * df))) / (2 / (9 * df)) ** 0.5  # Wilson–Hilferty
        assert abs(z) < 4.5, (chi2, df)


def random_positions(rules: Rules, rng: random.Random, count: int) -> Iterator[Deal]:
    """Deals in progress: each of ``count`` new deals after up to 54 random actions (those that
    ended meanwhile are left out)."""
    for _ in range(count):
        deal = Deal.new(rules, rng, rng.randrange(rules.num_players))
        for _ in range(rng.randrange(55)):
            if deal.is_over:
                break
            deal.apply_action(rng.choice(deal.legal_actions()))
        if not deal.is_over:
            yield deal


@pytest.mark.parametrize("rules", VARIANTS + NEW_VARIANTS, ids=lambda r: r.describe())
def test_every_world_looks_the_same_to_the_seat(rules: Rules) -> None:
    """Each world is a real deal at the same decision point: the seat's observation, the seat to
    act and its legal actions are the real ones, and its information set is the same."""
    rng = random.Random(11)
    encoder = ObservationEncoder(rules)
    for deal in random_positions(rules, rng, 25):
        for seat in range(rules.num_players):
            info = InfoSet.from_deal(deal, seat)
            sampler = WorldSampler(info)
            for _ in range(3):
                world = sampler.sample(rng)
                assert np.array_equal(encoder.encode(world, seat), encoder.encode(deal, seat))
                assert (world.phase, world.to_act) == (deal.phase, deal.to_act)
                assert InfoSet.from_deal(world, seat) == info
                if seat == deal.to_act:
                    assert world.legal_actions() == deal.legal_actions()


@pytest.mark.parametrize("rules", VARIANTS + NEW_VARIANTS, ids=lambda r: r.describe())
def test_a_world_copied_from_its_path_equals_the_replayed_one(rules: Rules) -> None:
    """``replay`` replays the record once per path and copies it for the later worlds: every
    world equals the engine's own replay of the same cards, field by field, in every phase."""
    rng = random.Random(23)
    copied = drawn = 0
    for deal in random_positions(rules, rng, 25):
        for seat in range(rules.num_players):
            sampler = WorldSampler(InfoSet.from_deal(deal, seat))
            for _ in range(4):
                cards = sampler.dealt_cards(*sampler.sample_hidden(rng), rng)
                copied += sampler._path_key(cards[0], sampler._hands_now(*cards)) in sampler._templates
                drawn += 1
                world, replayed = sampler.replay(*cards), sampler._replay_actions(*cards)
                assert (world is None) == (replayed is None)
                if world is not None and replayed is not None:
                    assert {f: getattr(world, f) for f in Deal.__slots__ if f != "_legal"} == {
                        f: getattr(replayed, f) for f in Deal.__slots__ if f != "_legal"}
                    assert world.legal_actions() == replayed.legal_actions()
    assert copied > drawn / 2  # most worlds were copies


def test_a_seat_that_passed_below_the_floor_never_gets_both_jokers() -> None:
    """§4 both_jokers_min_bid: passing while the bid is below 8 shows a hand without both jokers."""
    rules = make_rules("french_46", both_jokers_min_bid=8)
    rng = random.Random(5)
    checked = 0
    while checked < 20:
        deal = position(rules, rng, "suit", tricks_left=8)
        passed_low = {s for s, a in deal.bids if a == PASS} - {deal.contractor}
        seat = deal.contractor
        sampler = WorldSampler(InfoSet.from_deal(deal, seat))
        for _ in range(50):
            world = sampler.sample(rng)
            assert not any(world.dealt[s] & JOKERS_MASK == JOKERS_MASK for s in passed_low)
        checked += 1


def test_a_bad_seat_is_refused() -> None:
    deal = Deal.new(make_rules("australian"), random.Random(0), 0)
    with pytest.raises(ValueError, match=r"seat must be 0\.\.3"):
        InfoSet.from_deal(deal, 4)
