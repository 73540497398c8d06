"""Golden playthroughs: complete deals recorded step by step in tests/playthroughs/*.json.

Each file (written by ``python tests/make_playthroughs.py``) holds a deal record and, at every
step, the seat to act, the phase, the legal actions, the exposed open-misère cards and the action
taken, then the tricks and the score, and before every step (and at the end) a digest of each
seat's observation with its action mask and of the global state. Replaying it must give exactly
the same at every step: any change of behaviour, or of what the environment shows, fails here
(and shows as a diff once the files are regenerated).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from make_playthroughs import env_of, views

from five_hundred_env import Deal, Rules, action_to_str, parse_action, replay
from five_hundred_env.cards import card_to_str, mask_to_cards

FILES = sorted((Path(__file__).parent / "playthroughs").glob("*.json"))

EXPECTED = {
    "australian_trumps", "italian_3p_trumps", "french_46_trumps",  # one per preset
    "australian_nt_nomination", "italian_3p_nt_joker_lead", "french_46_nt_joker_leads",  # §7 jokers in NT
    "australian_misere", "australian_open_misere", "italian_3p_open_misere",  # misère
    "two_handed_trumps", "two_handed_misere",  # §10: the dead hand, two-card tricks
    "five_handed_card_call", "five_handed_seat_call", "five_handed_open_misere",  # §10.5 the call, misère alone
    "six_handed_trumps", "six_handed_misere",  # §10.4 extended ranks, two team-mates sitting out
}


def test_every_scenario_has_a_file():
    """One playthrough per preset (§2) and per special contract: no trumps with nomination and
    with suitless joker leads (§7), misère and open misère (§7, §8)."""
    assert {f.stem for f in FILES} == EXPECTED


@pytest.mark.parametrize("path", FILES, ids=[f.stem for f in FILES])
def test_playthrough(path):
    """§1-§8 as recorded: replaying the file gives the same legal actions, exposure, tricks and score at every step."""
    data = json.loads(path.read_text())
    record = data["record"]
    rules = Rules.from_dict(record["rules"])
    entry = record["deals"][0]
    deal = Deal.from_cards(rules, entry["hands"], entry["kitty"], entry["dealer"])
    two = rules.two_jokers
    assert [s["action"] for s in data["steps"]] == entry["actions"]
    for i, step in enumerate(data["steps"]):
        where = f"step {i} ({step['action']})"
        assert deal.to_act == step["seat"], where
        assert deal.phase.name == step["phase"], where
        legal = [action_to_str(a, rules) for a in sorted(deal.legal_actions())]
        assert legal == step["legal"], where
        exposed = [card_to_str(c, two) for c in mask_to_cards(deal.exposed_cards())]
        assert exposed == step.get("exposed", []), where
        deal.apply_action(parse_action(step["action"], rules))
    assert deal.is_over
    final = data["final"]
    assert action_to_str(deal.contract, rules) == final["contract"]
    assert deal.contractor == final["contractor"]
    tricks = [{"leader": leader, "led": "SCDH"[led], "cards": [card_to_str(c, two) for _, c in plays], "winner": winner}
              for leader, led, plays, winner in deal.tricks]
    assert tricks == final["tricks"]
    assert deal.tricks_won == final["tricks_won"]
    assert deal.score_change == final["score_change"]
    # The record alone replays to the same end.
    again = replay(record)
    assert again.score_change == final["score_change"]
    assert again.history == deal.history and again.hands == deal.hands


@pytest.mark.parametrize("path", FILES, ids=[f.stem for f in FILES])
def test_playthrough_observations(path):
    """What each seat observes (observation + action mask) and the global state, at every step of
    the recorded deal, digest for digest: an encoding change shows up here."""
    data = json.loads(path.read_text())
    entry = data["record"]["deals"][0]
    rules = Rules.from_dict(data["record"]["rules"])
    env = env_of(Deal.from_cards(rules, entry["hands"], entry["kitty"], entry["dealer"]))
    assert len(data["views"]) == len(data["steps"]) + 1
    for i, step in enumerate(data["steps"]):
        assert views(env) == data["views"][i], f"before step {i} ({step['action']})"
        env.step(env.str_to_action(step["action"]))
    assert views(env) == data["views"][-1], "after the last step"
