"""Write the heuristic agent's regression golden, tests/heuristic_golden/*.json (run:
``python tests/make_heuristic_golden.py``).

One file per preset, each a list of seeded episodes played through the environment: deals where
every seat is the heuristic, deals where some seats play at random (wild auctions put the
heuristic in positions its own bidding never reaches), and whole games from non-zero starting
scores (the bidding reads the score, §9). Every episode stores its seed, reset options, which
seats are the heuristic and every action taken, in the docs/rules.md §1 notation (space-separated).
tests/test_heuristic_golden.py replays the actions and asks the heuristic again at each of its
decisions: a change of the heuristic's play fails there, and shows as a diff once regenerated.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from agents import HeuristicAgent, RandomAgent  # noqa: E402
from five_hundred_env.env import raw_env  # noqa: E402
from five_hundred_env.rules import make_rules  # noqa: E402

OUT = HERE / "heuristic_golden"
PRESETS = ("australian", "italian_3p", "french_46", "two_handed", "five_handed", "six_handed")
HEURISTIC_DEALS = 40
MIXED_DEALS = 20
# Starting scores per seat (partners equal): near the target, near the losing score, and lopsided.
GAME_SCORES = {
    "australian": ([400, 350, 400, 350], [-350, 300, -350, 300], [450, -400, 450, -400],
                   [200, 120, 200, 120], [-150, 250, -150, 250], [30, -20, 30, -20]),
    "italian_3p": ([400, 300, -200], [-350, 420, 100], [450, 450, -400], [150, 200, 250], [-250, 0, 300], [40, -30, 10]),
    "french_46": ([420, 380, 420, 380], [-380, 100, -380, 100], [300, 460, 300, 460],
                  [180, 220, 180, 220], [-200, -100, -200, -100],
                  [20, 40, 20, 40]),
    # §10: two players alone, five alone (a partner called per deal), six in teams of three
    "two_handed": ([400, 350], [-350, 300], [450, -400], [200, 120], [-150, 250], [30, -20]),
    "five_handed": ([400, 350, -200, 100, 0], [-350, 300, 420, 0, 100], [450, 450, -400, 200, 300],
                    [150, 200, 250, 100, 50], [-250, 0, 300, 0, -100], [40, -30, 10, 0, 20]),
    "six_handed": ([400, 350, 400, 350, 400, 350], [-350, 300, -350, 300, -350, 300],
                   [450, -400, 450, -400, 450, -400], [200, 120, 200, 120, 200, 120],
                   [-150, 250, -150, 250, -150, 250], [30, -20, 30, -20, 30, -20]),
}
MAX_GAME_DEALS = 12


def heuristic_seats(n: int, episode: int, mixed: bool) -> list[int]:
    """All seats, or all but one or two seats (varied by episode) when mixed with random play."""
    if not mixed:
        return list(range(n))
    random_seats = {episode % n} | ({(episode + 2) % n} if episode % 3 == 0 else set())
    return [s for s in range(n) if s not in random_seats]


def play(preset: str, seed: int, seats: list[int], episode: str, options: dict[str, Any]) -> str:
    """The actions of one seeded episode (heuristic at ``seats``, random elsewhere), space-separated."""
    rules = make_rules(preset)
    env = raw_env(rules=rules, episode=episode, max_deals=MAX_GAME_DEALS if episode == "game" else None)
    env.reset(seed=seed, options=options)
    agents = [HeuristicAgent(rules, seed=s) if s in seats else RandomAgent(rules, seed=seed + s)
              for s in range(rules.num_players)]
    actions: list[str] = []
    for name in env.agent_iter():
        obs, _reward, term, trunc, _info = env.last()
        if term or trunc:
            env.step(None)
            continue
        action = agents[int(name.rsplit("_", 1)[1])].act(obs)
        actions.append(env.action_to_str(action))
        env.step(action)
    return " ".join(actions)


def episodes(preset: str) -> list[dict[str, Any]]:
    """Every episode of one preset's golden."""
    n = make_rules(preset).num_players
    out = []
    for d in range(HEURISTIC_DEALS + MIXED_DEALS):
        mixed = d >= HEURISTIC_DEALS
        seed = 1000 * (1 + mixed) + d
        seats = heuristic_seats(n, d, mixed)
        out.append({"episode": "deal", "seed": seed, "options": {}, "heuristic_seats": seats,
                    "actions": play(preset, seed, seats, "deal", {})})
    for g, scores in enumerate(GAME_SCORES[preset]):
        seed = 5000 + g
        options = {"scores": scores}
        seats = list(range(n))
        out.append({"episode": "game", "seed": seed, "options": options, "heuristic_seats": seats,
                    "actions": play(preset, seed, seats, "game", options)})
    return out


def main() -> None:
    OUT.mkdir(exist_ok=True)
    for preset in PRESETS:
        data = {"preset": preset, "max_game_deals": MAX_GAME_DEALS, "episodes": episodes(preset)}
        path = OUT / f"{preset}.json"
        path.write_text(json.dumps(data, indent=1) + "\n")
        print(f"{path}: {sum(len(e['actions'].split()) for e in data['episodes'])} actions")


if __name__ == "__main__":
    main()
