"""The compiled heuristic against ``HeuristicAgent`` on the presets of docs/rules.md §10 (two, five
and six players), decision by decision, on the AEC environment's observations and masks.

Deals are played in ``five_hundred_env.env`` (random or heuristic play, rule options mixed, from
starting scores spread over the game: §9, the bidding reads the score); at every turn with a
choice, ``HeuristicPolicy.act_batch`` must return the action ``HeuristicAgent.act`` returns —
the five-handed partner call (§10.5) and a known partner's play (§10.8) included, and six-handed
hearts 12 and 13, whose card ids (64, 65) do not fit a 64-bit mask. The default run compares a
sample; ``pytest -m full`` compares at least 100,000 decisions per preset.
"""

from __future__ import annotations

import numpy as np
import pytest

from agents import HeuristicAgent
from agents.heuristic.compiled import HeuristicPolicy, policy_card_bits
from five_hundred_env.actions import FIRST_PARTNER, action_card, is_card_action
from five_hundred_env.cards import NUM_CARD_IDS
from five_hundred_env.env import raw_env
from five_hundred_env.rules import Rules, make_rules

OPTION_MIXES: dict[str, list[dict]] = {
    "two_handed": [
        {},
        {"misere": "after_seven", "open_misere": "between_10D_10H", "open_misere_exposure": "after_first_trick",
         "joker_nomination": "nt_and_misere", "joker_lead_suit": "not_yet_led", "bidding": "until_passed",
         "misere_defence": "nothing", "slam_bonus": True},
        {"rebid_after_pass": True, "misere": "none", "open_misere": "none", "joker_nomination": "misere_only",
         "defence_tricks": "only_when_lost", "win_needs_contract": False, "target": 300, "losing_score": -300},
    ],
    "five_handed": [
        {},
        {"partner_call": "seat", "misere": "any_time", "open_misere": "highest",
         "open_misere_exposure": "before_first_lead", "joker_nomination": "misere_only",
         "joker_lead_suit": "not_shown_void", "defence_tricks": "only_when_lost",
         "misere_defence": "10_per_declarer_trick", "slam_bonus": False, "bidding": "single_round"},
        {"partner_call": "none", "rebid_after_pass": True, "joker_nomination": "none", "defence_tricks": "none",
         "target": 250, "losing_score": -250},
    ],
    "six_handed": [
        {},
        {"misere": "any_time", "open_misere": "highest", "open_misere_exposure": "before_first_lead",
         "joker_nomination": "misere_only", "joker_lead_suit": "not_shown_void", "bidding": "single_round",
         "misere_defence": "10_per_declarer_trick", "slam_bonus": False},
        {"rebid_after_pass": True, "misere": "none", "open_misere": "none", "joker_nomination": "none",
         "defence_tricks": "only_when_lost", "win_needs_contract": False, "target": 300, "losing_score": -300},
    ],
}
PRESETS = tuple(OPTION_MIXES)
FULL_DECISIONS = 100_000


def compare_decisions(rules: Rules, deals: int, seed: int, play: str) -> tuple[int, set[str]]:
    """Play ``deals`` deals in the AEC environment (random or heuristic play) and compare the two
    forms at every turn with a choice; returns how many were compared and the kinds of decision
    seen (for the coverage checks)."""
    rng = np.random.default_rng(seed)
    env = raw_env(rules=rules)
    agent = HeuristicAgent(rules, seed=0)
    policy = HeuristicPolicy(rules)
    observations, masks, expected, kinds = [], [], [], set()
    for number in range(deals):
        scores = (rng.integers(rules.losing_score // 10 + 1, rules.target // 10, size=rules.num_sides) * 10).tolist()
        env.reset(seed=seed * 100_003 + number, options={"scores": scores})
        for _agent in env.agent_iter():
            obs, _reward, term, trunc, _info = env.last()
            if term or trunc:
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            action = agent.act(obs)
            if len(legal) > 1:
                observations.append(obs["observation"])
                masks.append(obs["action_mask"])
                expected.append(action)
                kinds.add(decision_kind(env, action, obs["observation"]))
            env.step(int(rng.choice(legal)) if play == "random" else action)
    chosen = policy.act_batch(np.array(observations), np.array(masks))
    wrong = np.flatnonzero(chosen != np.array(expected))
    table = policy.actions
    assert not len(wrong), (f"{rules.describe()}, {play} play: {len(wrong)} of {len(expected)} differ, e.g. " + "; ".join(
        f"compiled {table.to_str(int(chosen[i]))}, HeuristicAgent {table.to_str(expected[i])}" for i in wrong[:10]))
    return len(expected), kinds


def decision_kind(env, action: int, observation: np.ndarray) -> str:
    """What a chosen action was: its phase; for cards whether it is a six-handed red 12 or 13; in
    five-handed play, whether the observer knows the partner of the deal (§10.8)."""
    unwrapped = env.unwrapped
    universal = unwrapped.actions.universal[action]
    phase = unwrapped.deal.phase.name.lower()
    if universal >= FIRST_PARTNER:
        return "call_seat"
    if is_card_action(universal) and action_card(universal) >= 64:
        return phase + "_hearts_12_13"
    layout = unwrapped.encoder.layout
    if phase == "play" and "partner" in layout:
        at, (width,) = layout["partner"]
        if observation[at:at + width].any():
            return "play_partner_known"
    return phase


@pytest.mark.parametrize("play", ["random", "heuristic"])
@pytest.mark.parametrize("preset", PRESETS)
def test_compiled_heuristic_decides_as_the_agent_on_the_new_presets(preset, play):
    """A sample of every option mix: the same action at every turn with a choice (§4-§10)."""
    kinds: set[str] = set()
    for number, options in enumerate(OPTION_MIXES[preset]):
        compared, seen = compare_decisions(make_rules(preset, **options), 24, seed=200 + number, play=play)
        assert compared > 300
        kinds |= seen
    assert {"bidding", "discard", "play"} <= kinds
    if preset == "five_handed":
        assert {"call", "call_seat", "play_partner_known"} <= kinds


@pytest.mark.full
@pytest.mark.parametrize("preset", PRESETS)
def test_compiled_heuristic_decides_as_the_agent_on_the_new_presets_full(preset):
    """At least 100,000 decisions per preset, random and heuristic games, every option mix."""
    compared, round_, kinds = 0, 0, set()
    while compared < FULL_DECISIONS:
        for number, options in enumerate(OPTION_MIXES[preset]):
            for play in ("random", "heuristic"):
                count, seen = compare_decisions(make_rules(preset, **options), 100,
                                                seed=1000 * round_ + 10 * number + (play == "heuristic"), play=play)
                compared += count
                kinds |= seen
        round_ += 1
    if preset == "six_handed":
        assert {"play_hearts_12_13", "discard_hearts_12_13"} <= kinds
    print(f"{preset}: {compared} decisions compared, all equal ({', '.join(sorted(kinds))})")


def test_policy_card_bits_keep_the_id_order_in_one_word():
    """Every pack's cards get distinct bits below 64, in the order of their ids (the agent breaks
    ties by id order), six_handed's hearts 12 and 13 (ids 64, 65) included (§10.1)."""
    for preset in ("australian", "italian_3p", "french_46", *PRESETS):
        deck = make_rules(preset).deck
        bits = [b for c, b in enumerate(policy_card_bits(deck)) if deck >> c & 1]
        assert len(bits) == deck.bit_count() and bits == sorted(set(bits)) and bits[-1] < 64, preset
        if deck < 1 << 64:
            assert bits == [c for c in range(NUM_CARD_IDS) if deck >> c & 1], preset
