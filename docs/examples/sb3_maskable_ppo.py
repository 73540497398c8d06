"""Train sb3-contrib's MaskablePPO on one team's seats against the heuristic, then evaluate it in
duplicate against the heuristic: the model becomes an Agent through the agent registry.

    python docs/examples/sb3_maskable_ppo.py --steps 20000 --deals 200
"""

from __future__ import annotations

import argparse

from sb3_contrib import MaskablePPO

from agents import HeuristicAgent
from agents.registry import agent_factory, register_agent
from five_hundred_env import SingleAgentEnv
from training.evaluation.evaluate import duplicate_match


def main(argv: list[str] | None = None) -> float:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20_000, help="learner steps")
    parser.add_argument("--deals", type=int, default=200, help="duplicate deals of the evaluation")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    env = SingleAgentEnv(team=0, rules="australian", opponents=HeuristicAgent("australian", seed=args.seed))
    model = MaskablePPO("MlpPolicy", env, seed=args.seed, n_steps=256, batch_size=64, device="cpu", verbose=0)
    model.learn(args.steps)

    register_agent("my_ppo", model, replace=True)  # a model (or the path of its .zip) is an agent now
    report = duplicate_match("australian", agent_factory("my_ppo"), agent_factory("heuristic"),
                             deals=args.deals, seed=args.seed)
    print(report.format_table())
    return report.score_diff[0]


if __name__ == "__main__":
    main()
