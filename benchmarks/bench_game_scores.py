"""Do the shipped networks play the game to 500, not only the deal? Games against the heuristic.

    python benchmarks/bench_game_scores.py --games 400 --seed 7 [--presets australian ...] [--json OUT]

For each preset with a shipped network (``agents/pretrained``), in one run: the share of games to
500 won against the heuristic (``training.evaluation.evaluate.duplicate_match``, seats alternating over
pairs of games, Wilson 95% interval) by

* ``shipped``: the network as shipped, reading the game scores;
* ``score_blind``: the same network with its score inputs zeroed (``training.algorithms.score_tuning.score_blind``:
  its zero-score decisions at any score; the heuristic's advice still sees the scores);
* ``heuristic``: the heuristic itself (the equal-strength share: 50% with partners, 33% for three).

A network trained only at a game score of zero loses its games when it reads the scores (the
networks shipped before the score tuning: 18%, 3% and 9% of 100 games, against 47%, 21% and 44%
score-blind); ``tests/test_pretrained_scores.py`` checks a cheaper proxy in the suite. The figures
are wall-clock on whatever else the machine is doing.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from agents.neural import NeuralAgent
from agents.pretrained import available_presets, load_pretrained
from five_hundred_env.rules import make_rules
from training.algorithms.score_tuning import score_blind
from training.evaluation.evaluate import duplicate_match


def game_share(preset: str, agent: Any, games: int, seed: int) -> dict[str, float]:
    """The share of ``games`` games to 500 won against the heuristic, its interval and the seconds taken."""
    started = time.perf_counter()
    g = duplicate_match(preset, agent, "heuristic", deals=0, games=games, seed=seed).to_dict()["games"]
    return {"win_rate": g["win_rate_a"], "ci95": g["ci95"], "games": g["games"],
            "seconds": time.perf_counter() - started}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--presets", nargs="+", default=None, help="default: every preset with a shipped network")
    parser.add_argument("--games", type=int, default=400)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", type=Path, default=None, help="write the figures there too")
    args = parser.parse_args(argv)
    out: dict[str, dict[str, Any]] = {}
    for preset in args.presets or available_presets():
        rules = make_rules(preset)
        shipped = load_pretrained(rules, seed=0)
        blind = NeuralAgent(rules, 0, model=score_blind(shipped.model, rules))
        rows = {"shipped": shipped, "score_blind": blind, "heuristic": "heuristic"}
        out[preset] = {}
        for name, agent in rows.items():
            figures = game_share(preset, agent, args.games, args.seed)
            out[preset][name] = figures
            lo, hi = figures["ci95"]
            print(f"{preset:11s} {name:12s} won {100 * figures['win_rate']:5.1f}% of {figures['games']} games "
                  f"[{100 * lo:.1f}%, {100 * hi:.1f}%]  ({figures['seconds']:.0f} s)", flush=True)
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
