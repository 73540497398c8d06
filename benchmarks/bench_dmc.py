"""DMC's collection on the batched engine against an AEC-stepped loop, in learner steps per CPU-second.

Both loops do the same work per decision: the current Q-network (``training.algorithms.dmc``'s default,
fresh) scores every legal action of a batch of ``--games`` games' acting seats in one call, an
ε-greedy choice is made, the decision is kept with its seat and credited its Monte-Carlo return
when its deal ends (:class:`training.algorithms.dmc.Decisions`). The batched loop is
:class:`training.algorithms.dmc.SelfPlay` on one :class:`five_hundred_env.vector.BatchEngine`; the AEC loop
steps ``--games`` PettingZoo environments (``five_hundred_env.env``), stacking their
observations and masks for the same one network call, or (as DouZero's actors) calling the
network once per decision. A learner step is one decision (every
seat learns in self-play). Both figures come from one run, with their ratio.

    python benchmarks/bench_dmc.py --seconds 10 --games 64
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

import five_hundred_env
from training.algorithms.dmc import Decisions, SelfPlay
from training.algorithms.dmc_networks import build_q_network
from training.settings.dmc_config import DmcConfig


def batched(config: DmcConfig, seconds: float, eps: float) -> float:
    """Learner steps per CPU-second of :class:`SelfPlay` on the batched engine."""
    rules = config.to_rules()
    selfplay = SelfPlay(config, rules, build_q_network(config, rules), np.random.default_rng(0), seed=0)
    selfplay.step(eps)  # the kernels loaded before the clock starts
    start, steps = time.process_time(), selfplay.steps
    while time.process_time() - start < seconds:
        selfplay.collect(config.train.batch_size, eps)
    return (selfplay.steps - steps) / (time.process_time() - start)


def aec_stepped(config: DmcConfig, seconds: float, eps: float, together: bool) -> float:
    """Learner steps per CPU-second of the same collection stepping ``num_envs`` AEC environments:
    their decisions scored in one network call (``together``), or one call per decision (as
    DouZero's actors, each stepping its own environment)."""
    rules = config.to_rules()
    model = build_q_network(config, rules)
    games = config.train.num_envs
    rng = np.random.default_rng(0)
    envs = [five_hundred_env.env(rules=rules) for _ in range(games)]
    for b, env in enumerate(envs):
        env.reset(seed=b)
    decisions = Decisions(games, envs[0].unwrapped.encoder.size)
    rewards, deal_done = np.zeros((games, rules.num_players), dtype=np.float32), np.zeros(games, dtype=np.bool_)
    start, steps = time.process_time(), 0
    while time.process_time() - start < seconds:
        views = [env.observe(env.agent_selection) for env in envs]
        obs = np.stack([v["observation"] for v in views])
        masks = np.stack([v["action_mask"] for v in views])
        seats = np.array([env.possible_agents.index(env.agent_selection) for env in envs])
        with torch.inference_mode():
            if together:
                greedy = model.greedy(torch.from_numpy(obs), torch.from_numpy(masks)).numpy()
            else:
                greedy = np.concatenate([model.greedy(torch.from_numpy(obs[b:b + 1]), torch.from_numpy(masks[b:b + 1])).numpy()
                                         for b in range(games)])
        explore = rng.random(games) < eps
        actions = np.array([rng.choice(np.flatnonzero(m)) if x else g for m, x, g in zip(masks, explore, greedy, strict=True)])
        decisions.add(obs, actions, seats)
        for b, env in enumerate(envs):
            env.step(int(actions[b]))
            deal_done[b] = not env.agents or all(env.terminations.values())
            rewards[b] = [env.rewards[a] for a in env.possible_agents]
            if deal_done[b]:
                env.reset()
        decisions.credit(rewards, deal_done, deal_done)
        decisions.finished.clear()
        steps += games
    return steps / (time.process_time() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="australian")
    parser.add_argument("--games", type=int, default=64, help="games stepped together (train.num_envs)")
    parser.add_argument("--seconds", type=float, default=10.0, help="CPU seconds per loop")
    parser.add_argument("--epsilon", type=float, default=0.1)
    args = parser.parse_args()
    torch.set_num_threads(1)
    config = DmcConfig.model_validate({"rules": {"preset": args.preset}, "train": {"num_envs": args.games}})
    fast = batched(config, args.seconds, args.epsilon)
    together = aec_stepped(config, args.seconds, args.epsilon, together=True)
    alone = aec_stepped(config, args.seconds, args.epsilon, together=False)
    print(f"DMC collection, {args.preset}, {args.games} games, ε {args.epsilon}, one torch thread, learner steps per CPU-second:")
    print(f"  batched engine (BatchEngine, one network call per step):   {fast:9.0f}")
    print(f"  AEC-stepped, {args.games} envs, one network call per step:       {together:9.0f}   ratio {fast / together:5.1f}x")
    print(f"  AEC-stepped, one network call per decision (DouZero actor): {alone:9.0f}   ratio {fast / alone:5.1f}x")


if __name__ == "__main__":
    main()
