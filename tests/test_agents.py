"""The agents: every action legal in every preset and option set, and the heuristic's judgement on
hands whose right call is not in doubt (docs/rules.md §4-§7)."""

from __future__ import annotations

import numpy as np
import pytest

from agents import Agent, HeuristicAgent, RandomAgent, make_agent
from agents.registry import agent_factory
from five_hundred_env.cards import card_to_str, mask_to_cards, parse_card
from five_hundred_env.env import raw_env
from five_hundred_env.rules import Rules, make_rules

PRESETS = ("australian", "italian_3p", "french_46")


def explicit(rules: Rules, given: dict[int, str]) -> dict:
    """Reset options for a deal where the seats in ``given`` hold those cards (the rest in card order)."""
    two = rules.two_jokers
    used = {parse_card(c, two) for h in given.values() for c in h.split()}
    rest = [card_to_str(c, two) for c in mask_to_cards(rules.deck) if c not in used]
    hands = []
    for seat in range(rules.num_players):
        if seat in given:
            hands.append(given[seat].split())
        else:
            hands.append(rest[: rules.hand_size])
            rest = rest[rules.hand_size:]
    return {"hands": hands, "kitty": rest}


def play_deals(rules: Rules, agents: list[Agent], deals: int, seed: int = 0) -> dict[str, int]:
    """Play ``deals`` deals through the environment, checking every chosen action against the mask.

    Returns how many contracts of each kind were played (to check the coverage of the test)."""
    env = raw_env(rules=rules, episode="deal")
    kinds = {"suit": 0, "nt": 0, "misere": 0, "thrown": 0, "nominated": 0, "joker_lead": 0}
    for d in range(deals):
        env.reset(seed=seed + d)
        for name in env.agent_iter():
            obs, _reward, term, trunc, _info = env.last()
            if term or trunc:
                env.step(None)
                continue
            action = agents[int(name.rsplit("_", 1)[1])].act(obs)
            assert isinstance(action, int)
            assert obs["action_mask"][action] == 1, (name, env.action_to_str(action))
            if ":" in env.action_to_str(action):
                kinds["joker_lead"] += 1
            env.step(action)
        deal = env.deal
        if deal.thrown_in:
            kinds["thrown"] += 1
            continue
        text = env.actions.to_str(env.actions.compact[deal.contract])
        kinds["misere" if "MISERE" in text else "nt" if text.endswith("NT") else "suit"] += 1
        kinds["nominated"] += deal.nominated >= 0
    return kinds


@pytest.mark.parametrize("preset", PRESETS)
def test_heuristic_plays_only_legal_actions(preset):
    """300 deals per preset with four (three) heuristic players, then mixed with random players,
    whose wild auctions reach every kind of contract."""
    rules = make_rules(preset)
    n = rules.num_players
    kinds = play_deals(rules, [HeuristicAgent(rules, seed=s) for s in range(n)], 300)
    assert kinds["suit"] > 0
    mixed = [HeuristicAgent(rules, seed=s) if s % 2 == 0 else RandomAgent(rules, seed=s) for s in range(n)]
    more = play_deals(rules, mixed, 150, seed=10_000)
    assert more["nt"] > 0 and more["suit"] > 0
    if rules.misere != "none":
        assert kinds["misere"] + more["misere"] > 0


@pytest.mark.parametrize("preset", PRESETS)
def test_random_agent_plays_only_legal_actions(preset):
    rules = make_rules(preset)
    play_deals(rules, [RandomAgent(rules, seed=s) for s in range(rules.num_players)], 300)


@pytest.mark.parametrize(("preset", "options"), [
    ("australian", {"joker_nomination": "misere_only", "rebid_after_pass": True}),
    ("australian", {"bidding": "single_round", "misere": "any_time", "open_misere": "highest",
                    "open_misere_exposure": "before_first_lead", "joker_lead_suit": "not_shown_void"}),
    ("australian", {"joker_nomination": "none", "misere_value": 150, "slam_bonus": False,
                    "defence_tricks": "only_when_lost"}),
    ("italian_3p", {"misere": "after_seven", "open_misere": "between_10D_10H", "bidding": "until_passed",
                    "joker_lead_suit": "not_yet_led"}),
    ("french_46", {"both_jokers_min_bid": 8, "misere": "after_seven", "open_misere": "between_10D_10H"}),
    ("french_46", {"rebid_after_pass": True, "defence_tricks": "none", "win_needs_contract": True}),
])
def test_heuristic_is_legal_under_rule_options(preset, options):
    rules = make_rules(preset, **options)
    n = rules.num_players
    mixed = [HeuristicAgent(rules, seed=s) if s != 1 else RandomAgent(rules, seed=s) for s in range(n)]
    play_deals(rules, mixed, 60)
    play_deals(rules, [HeuristicAgent(rules, seed=s) for s in range(n)], 60, seed=500)


def test_nomination_and_joker_leads_are_exercised():
    """Australian no-trump deals: the heuristic nominates the joker, and leads a suitless one."""
    rules = make_rules("australian")
    mixed = [HeuristicAgent(rules, seed=s) if s % 2 == 0 else RandomAgent(rules, seed=s) for s in range(4)]
    kinds = play_deals(rules, mixed, 300, seed=77)
    assert kinds["nominated"] > 0
    no_nomination = make_rules("australian", joker_nomination="none")
    kinds = play_deals(no_nomination, [HeuristicAgent(no_nomination, seed=s) for s in range(4)], 300, seed=77)
    assert kinds["joker_lead"] > 0


def first_decision(preset: str, given: dict[int, str], dealer: int = 0, before: tuple[str, ...] = ()) -> str:
    """The heuristic's action, by name, for the player to act after ``before`` on an explicit deal."""
    rules = make_rules(preset)
    env = raw_env(rules=rules)
    env.reset(seed=0, options={"dealer": dealer, **explicit(rules, given)})
    for text in before:
        env.step(env.str_to_action(text))
    return env.action_to_str(HeuristicAgent(rules, seed=0).act(env.observe(env.agent_selection)))


TOP_HEARTS = {
    "australian": "JK Jh Jd Ah Kh Qh Th 9h 8h 7h",
    "italian_3p": "JK Jh Jd Ah Kh Qh Th 9h 8h 7h",
    "french_46": "JK1 JK2 Jh Jd Ah Kh Qh Th 9h 8h",
}


@pytest.mark.parametrize("preset", PRESETS)
def test_the_ten_top_trumps_bid_ten_hearts(preset):
    """Ten sure tricks in hearts: bid 10H, the most that can be made with them."""
    assert first_decision(preset, {1: TOP_HEARTS[preset]}) == "10H"


def test_all_low_cards_bid_open_misere():
    """[AU] the lowest cards of every suit: nobody can get under them, so open misère (500)."""
    assert first_decision("australian", {1: "4h 5h 6h 4d 5d 6d 5c 6c 5s 6s"}) == "OPEN_MISERE"


def test_all_low_cards_bid_misere_over_a_seven_bid():
    """[AU] misère may only be bid over a 7-trick bid; with the lowest cards the heuristic bids a
    misère or open misère there (never a trick contract)."""
    action = first_decision("australian", {2: "4h 5h 6h 4d 5d 6d 5c 6c 5s 6s"}, before=("7S",))
    assert action in ("MISERE", "OPEN_MISERE")


def test_aces_kings_and_the_joker_bid_no_trumps():
    """Stoppers in every suit and the joker: a no-trump contract."""
    assert first_decision("australian", {1: "JK As Ks Ac Kc Ad Kd Ah Kh Qd"}).endswith("NT")


def test_a_hopeless_hand_passes():
    """Low cards without the lowest ones: no trick contract and no misère."""
    assert first_decision("australian", {1: "7s 8s 9s 7c 8c 9c 7d 8d 9d Th"}) == "PASS"


def test_heuristic_depends_only_on_its_observation():
    """The same observation gives the same action, whatever the environment's state is afterwards."""
    rules = make_rules("australian")
    env = raw_env(rules=rules)
    agent = HeuristicAgent(rules, seed=1)
    for seed in range(20):
        env.reset(seed=seed)
        for _ in range(int(np.random.default_rng(seed).integers(1, 30))):
            if env.deal.is_over:
                break
            env.step(agent.act(env.observe(env.agent_selection)))
        if env.deal.is_over:
            continue
        obs = env.observe(env.agent_selection)
        frozen = {k: v.copy() for k, v in obs.items()}
        first = agent.act(frozen)
        env.reset(seed=seed + 1000)  # a different deal: the agent must not look at the environment
        assert HeuristicAgent(rules, seed=99).act(frozen) == first


def test_agents_refuse_an_empty_mask():
    rules = make_rules("australian")
    env = raw_env(rules=rules)
    env.reset(seed=0)
    idle = next(a for a in env.agents if a != env.agent_selection)
    for agent in (HeuristicAgent(rules), RandomAgent(rules)):
        with pytest.raises(ValueError, match="no legal action"):
            agent.act(env.observe(idle))


def test_make_agent_builds_the_named_agents():
    rules = make_rules("italian_3p")
    assert isinstance(make_agent("random", rules, seed=1), RandomAgent)
    assert isinstance(make_agent("Heuristic", "italian_3p"), HeuristicAgent)
    assert make_agent("heuristic", rules).rules == rules
    assert agent_factory("heuristic").label == "heuristic"


def test_make_agent_rejects_unknown_specs(tmp_path):
    with pytest.raises(ValueError, match="unknown agent 'nobody'"):
        make_agent("nobody", "australian")
    with pytest.raises(ValueError):
        make_agent("", "australian")


def test_make_agent_loads_checkpoints_through_the_checkpoint_loader(tmp_path, monkeypatch):
    """A path is handed to ``agents.dmc.load_checkpoint_agent`` (a DMC checkpoint, else
    ``agents.neural.load_agent``; imported only then) with the rules and seed."""
    import sys
    import types

    calls = []
    fake = types.ModuleType("agents.dmc")

    def load_checkpoint_agent(path, rules=None, seed=None):
        calls.append((path, rules, seed))
        return RandomAgent(rules, seed)

    fake.load_checkpoint_agent = load_checkpoint_agent
    monkeypatch.setitem(sys.modules, "agents.dmc", fake)
    ckpt = tmp_path / "final.pt"
    ckpt.write_bytes(b"not really")
    agent = make_agent(str(ckpt), "australian", seed=3)
    assert isinstance(agent, RandomAgent)
    assert calls == [(str(ckpt), make_rules("australian"), 3)]


def test_make_agent_explains_a_missing_neural_module(tmp_path, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "agents.neural", None)  # importing it now raises ImportError
    ckpt = tmp_path / "final.pt"
    ckpt.write_bytes(b"x")
    with pytest.raises(RuntimeError, match="neural agents are not available"):
        make_agent(str(ckpt), "australian")
