"""The heuristic's regression golden: its recorded choices in tests/heuristic_golden/*.json.

Each file (written by ``python tests/make_heuristic_golden.py``) holds seeded episodes of one
preset: all-heuristic deals, deals mixed with random play, and games from non-zero starting
scores (§9: the bidding reads the score). Replaying the recorded actions, the heuristic is asked
again at every one of its decisions and must choose the recorded action: a change of its
bidding (§4), discards (§5), nomination or play (§6, §7) fails here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agents import HeuristicAgent
from five_hundred_env.env import raw_env
from five_hundred_env.rules import make_rules

GOLDEN = Path(__file__).parent / "heuristic_golden"
PRESETS = ("australian", "italian_3p", "french_46")


def replay_mismatches(preset: str) -> tuple[int, list[str]]:
    """How many heuristic decisions the golden of ``preset`` holds, and those now chosen differently."""
    data = json.loads((GOLDEN / f"{preset}.json").read_text())
    rules = make_rules(preset)
    agent = HeuristicAgent(rules, seed=0)  # a pure function of its observation: one serves every seat
    decisions, mismatches = 0, []
    for number, episode in enumerate(data["episodes"]):
        max_deals = data["max_game_deals"] if episode["episode"] == "game" else None
        env = raw_env(rules=rules, episode=episode["episode"], max_deals=max_deals)
        env.reset(seed=episode["seed"], options=episode["options"])
        recorded = iter(episode["actions"].split())
        for step, name in enumerate(env.agent_iter()):
            obs, _reward, term, trunc, _info = env.last()
            if term or trunc:
                env.step(None)
                continue
            text = next(recorded)
            if int(name.rsplit("_", 1)[1]) in episode["heuristic_seats"]:
                decisions += 1
                chosen = env.action_to_str(agent.act(obs))
                if chosen != text:
                    mismatches.append(f"episode {number} step {step} {name}: {chosen} (golden {text})")
            env.step(env.str_to_action(text))
        assert next(recorded, None) is None, f"episode {number} ended before its recorded actions"
    return decisions, mismatches


@pytest.mark.parametrize("preset", PRESETS)
def test_heuristic_plays_as_recorded(preset):
    """Every recorded heuristic decision of the preset's golden is chosen again (§4-§9)."""
    decisions, mismatches = replay_mismatches(preset)
    assert decisions > 1000
    assert not mismatches, f"{len(mismatches)} of {decisions} decisions changed:\n" + "\n".join(mismatches[:20])
