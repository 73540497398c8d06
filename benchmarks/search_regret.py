"""How much of the search's judgement a policy carries: each policy's choice at the searched
decisions of a search dataset (``five-hundred dataset pimc ...``, docs/datasets.md), scored by the
search's own values of the candidates.

For every decision where the search valued two or more candidates it prints, per policy: the share
where the policy picks the candidate the search valued best, and its **regret**, the mean of (best
value − the value of the policy's pick) in points, beside a uniform candidate's; then the same by
decision kind (the card play split into leads and follows), each kind's share of all the regret. The search's values
are means over sampled worlds, so its best is partly luck (the regret of a perfect policy is above
zero); compare policies with each other on the same data, and a training chunk with a held-out one
(a gap between them is over-fitting; none is under-fitting or noise).

    python benchmarks/search_regret.py data/two_handed-pimc_base=heuristic-uniform-s1048-1000 heuristic runs/two_big/final.pt

A policy is ``heuristic`` (batched, :func:`agents.heuristic.batch_heuristic`) or a network file (a
checkpoint or a policy file): the network takes its highest-logit candidate among those the search
valued (the search prunes cards equal to one it values; the heuristic's own choice is always among
them, as the search's base advice or its equal).
"""

from __future__ import annotations

import argparse

import numpy as np
import torch

from agents.base import DECISION_KINDS
from agents.heuristic import batch_heuristic
from agents.neural import load_agent
from five_hundred_env.dataset import open_dataset
from five_hundred_env.observation import ObservationEncoder
from five_hundred_env.rules import Rules
from training.algorithms.distill import decision_kinds

KINDS = (*DECISION_KINDS[:3], "lead", "follow")
"""The decision kinds of :data:`agents.base.DECISION_KINDS`, the card play split into leads and follows."""


def chooser(policy: str, rules: Rules):
    """A function (observations, masks, candidates) -> the policy's greedy choices."""
    if policy == "heuristic":
        heuristic = batch_heuristic(rules)
        return lambda obs, mask, _candidates: np.asarray(heuristic.act_batch(obs, mask))
    network = load_agent(policy, rules)

    def choose(obs: np.ndarray, mask: np.ndarray, candidates: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            logits = network.logits_batch(obs, mask).numpy()
        return np.where(candidates, logits, -np.inf).argmax(1)
    return choose


def kinds_of(obs: np.ndarray, rules: Rules) -> np.ndarray:
    """Each row's index in :data:`KINDS`: its decision kind, a card play split by whether the trick is empty."""
    kinds = decision_kinds(torch.from_numpy(obs), rules).numpy()  # the card play's index is the lead's
    trick_at, (seats, width) = ObservationEncoder(rules).layout["trick"]
    lead = KINDS.index("lead")
    return np.where((kinds == lead) & obs[:, trick_at:trick_at + seats * width].any(1), KINDS.index("follow"), kinds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset", help="a search agent's dataset folder (its records hold every candidate's value)")
    parser.add_argument("policies", nargs="+", help="'heuristic' or network files")
    args = parser.parse_args()
    data = open_dataset(args.dataset)
    if not data.has_values:
        raise SystemExit(f"{args.dataset} holds no candidate values: not a search agent's dataset")
    choosers = {p: chooser(p, data.rules) for p in args.policies}
    best_picked = {p: np.zeros(len(KINDS), int) for p in choosers}
    regret = {p: np.zeros(len(KINDS)) for p in choosers}
    uniform_regret, decisions = 0.0, np.zeros(len(KINDS), int)
    for batch in data.batches(batch_size=4096, seed=0):
        values = batch.values
        searched = (~np.isnan(values)).sum(1) >= 2
        if not searched.any():
            continue
        obs, mask, values = batch.obs[searched], batch.mask[searched], values[searched]
        candidates = ~np.isnan(values)
        best = np.where(candidates, values, -np.inf).max(1)
        kinds = kinds_of(obs, data.rules)
        uniform_regret += float((best - np.nanmean(values, 1)).sum())
        decisions += np.bincount(kinds, minlength=len(KINDS))
        for policy, choose in choosers.items():
            picked = values[np.arange(len(values)), choose(obs, mask, candidates)]
            picked = np.where(np.isnan(picked), np.nanmin(values, 1), picked)  # a pick the search did not value: its worst
            best_picked[policy] += np.bincount(kinds, picked == best, len(KINDS)).astype(int)
            regret[policy] += np.bincount(kinds, best - picked, len(KINDS))
    total = decisions.sum()
    print(f"{args.dataset}: {total:,} searched decisions; a uniform candidate's regret "
          f"{uniform_regret / total:.2f} points")
    for policy in choosers:
        print(f"  {policy}: the search's best {best_picked[policy].sum() / total:.1%}, "
              f"regret {regret[policy].sum() / total:.2f} points")
        share = regret[policy] / max(regret[policy].sum(), 1e-9)
        for k in np.flatnonzero(decisions):
            print(f"    {KINDS[k]:8} {decisions[k]:>9,} decisions: the best {best_picked[policy][k] / decisions[k]:.1%}, "
                  f"regret {regret[policy][k] / decisions[k]:.2f} ({share[k]:.0%} of it)")


if __name__ == "__main__":
    main()
