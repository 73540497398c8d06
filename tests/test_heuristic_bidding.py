"""The heuristic's bidding reads the scoring rules (§8) and the partnership (§2) from the rules.

Its expected scores come from :mod:`five_hundred_env.scoring`, so every scoring option moves
them the way the rule says; who partners whom comes from ``Rules.partner_of``.
"""

from __future__ import annotations

import numpy as np
import pytest
from env_helpers import fill_deal

from agents import HeuristicAgent
from five_hundred_env.actions import MISERE, bid_strain, bid_tricks, bid_value, is_trick_bid
from five_hundred_env.env import raw_env
from five_hundred_env.rules import make_rules

MIDDLING = "JK Jh Ah Kh 9h 7h Ac 8c 6d 5s"  # a fair hearts hand: some contracts are in doubt
LOW_ITALIAN = "7h 8h 9h 7d 8d 9d 7c 8c 7s 8s"  # the lowest cards of every suit: a likely misère


def expectations(preset: str, hand: str, before: tuple[str, ...] = (), dealer: int = 0, **options):
    """The heuristic's expected result of each legal bid, and of passing, for seat ``dealer + 1 +
    len(before)`` holding ``hand`` after the bids ``before``."""
    rules = make_rules(preset, **options)
    seat = (dealer + 1 + len(before)) % rules.num_players
    env = raw_env(rules=rules)
    hands, kitty = fill_deal(rules, {seat: hand})
    env.reset(seed=0, options={"dealer": dealer, "hands": hands, "kitty": kitty})
    for text in before:
        env.step(env.str_to_action(text))
    assert env.agent_selection == f"player_{seat}"
    agent = HeuristicAgent(rules, seed=0)
    obs = env.observe(env.agent_selection)
    legal = [agent.table.universal[i] for i in np.flatnonzero(obs["action_mask"])]
    return agent.bidder.expected_results(agent.decoder.decode(obs["observation"]), legal)


def trick_bids(bids: dict[int, float]) -> list[int]:
    return [a for a in bids if is_trick_bid(a)]


def test_defence_points_are_counted_as_the_option_says():
    """§8 ``defence_tricks``: conceding 10 per opposing trick always (10_per_trick) costs more than
    only when the contract is lost, which costs more than never (none)."""
    every = expectations("australian", MIDDLING)[0]
    when_lost = expectations("australian", MIDDLING, defence_tricks="only_when_lost")[0]
    never = expectations("australian", MIDDLING, defence_tricks="none")[0]
    for a in trick_bids(every):
        assert every[a] < when_lost[a] < never[a]


def test_defence_points_make_passing_against_an_opponent_better():
    """§8 ``defence_tricks``: passing an opponent's contract earns this side its defence points."""
    every = expectations("australian", MIDDLING, before=("6S",))[1]
    never = expectations("australian", MIDDLING, before=("6S",), defence_tricks="none")[1]
    assert every > never


def test_misere_defence_counts_against_a_misere():
    """§8 ``misere_defence``: with 10 per declarer trick [IT], a misère that may fail is worth less."""
    per_trick = expectations("italian_3p", LOW_ITALIAN)[0]
    nothing = expectations("italian_3p", LOW_ITALIAN, misere_defence="nothing")[0]
    assert per_trick[MISERE] < nothing[MISERE]
    for a in trick_bids(per_trick):
        assert per_trick[a] == nothing[a]


def test_the_slam_bonus_adds_to_cheap_bids_only():
    """§8 ``slam_bonus``: a chance of all ten tricks adds to a bid worth less than 250, not above."""
    strong = "JK Jh Jd Ah Kh Qh Th As Ac Ad"
    bonus = expectations("australian", strong)[0]
    plain = expectations("australian", strong, slam_bonus=False)[0]
    cheap = [a for a in trick_bids(bonus) if bid_value(a) < 250]
    dear = [a for a in trick_bids(bonus) if bid_value(a) > 250]
    assert cheap and dear
    for a in cheap:
        assert bonus[a] > plain[a]
    for a in dear:
        assert bonus[a] == plain[a]


@pytest.mark.parametrize("preset", ["australian", "french_46"])
def test_a_partners_bid_raises_its_strain_an_opponents_lowers_it(preset):
    """§2 partnerships: 7H is worth more to this seat when its partner (two seats on) bid 6H and
    the opponent between passed than when the partner passed and that opponent bid 6H."""
    hand = "Jh Kh 9h 7h Ac 8c 6d 5s 5c 7s"
    seven_hearts = next(a for a in range(1, 26) if bid_tricks(a) == 7 and bid_strain(a) == 3)
    by_partner = expectations(preset, hand, before=("6H", "PASS"), dealer=1)[0][seven_hearts]
    by_opponent = expectations(preset, hand, before=("PASS", "6H"), dealer=1)[0][seven_hearts]
    assert by_partner > by_opponent


def test_three_players_have_no_partner():
    """§2: with three players each plays alone, so no seat is read as a partner."""
    assert HeuristicAgent("italian_3p").decoder.partner is None
    assert HeuristicAgent("australian").decoder.partner == 2
