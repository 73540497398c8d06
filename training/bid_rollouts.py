"""Rollout policy improvement of the auction: bids that beat the heuristic's, learnt from rollouts.

PPO alone does not get past the heuristic (the README's training section has the measurements):
its advantage of a bid is one noisy deal result minus a critic's guess. Here the advantage is
measured instead, with *common random numbers*: on the very same deal, every candidate bid is
tried and the rest of the deal is played out by the heuristic agent in every seat (it acts on
each seat's own observation, so nothing hidden is used to choose moves). The difference

    A(s, a) = result(deal, history, a, then heuristic) − result(deal, history, h(s), then heuristic)

is an unbiased, low-variance sample of Q_h(o, a) − Q_h(o, h(o)) given what the bidder sees
(``o``): the policy-improvement step of policy iteration, with the heuristic ``h`` as the base
policy. The network (``network.advice: heuristic``, which starts as the heuristic) is then fitted
by an all-action policy gradient, maximising ``Σ_a π(a | o) A(s, a)`` over the bidding decisions,
while a cross-entropy term keeps every other decision (kitty, nomination, play) on the
heuristic's move. A tenth of the deals is held out: after each epoch the greedy policy's mean
advantage on them is its estimated gain per bidding decision, and the best epoch is kept.

Candidates of a bidding decision: PASS, the heuristic's bid, the cheapest legal bid of each
strain, misère and open misère (where legal). Other legal bids (jump bids) are not rolled out;
the fit treats them as ``-non_candidate_penalty`` so the network never drifts onto them.

One iteration only: the continuation is the heuristic, not the improved policy; ``margin``
(the advised action's logit bonus after the fit) keeps only the deviations the network is
confident about, which is what makes the one-step gains survive when both partners deviate.
"""

from __future__ import annotations

import json
import math
import os
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from agents.neural import ActorCritic, make_adviser, policy_input
from agents.search.values import bid_candidates
from five_hundred_env.actions import ActionTable
from five_hundred_env.engine import Deal, Phase
from five_hundred_env.observation import ObservationEncoder
from five_hundred_env.rules import Rules
from training.config import BidRolloutConfig
from training.distributed import LOCAL, Backend, run_jobs

CHUNK_DEALS = 100
"""Deals per unit of work (one seed each): the data depend on the seeds, not on the workers."""


class _Simulator:
    """The heuristic in every seat, straight on the engine (no AEC bookkeeping), with the same
    observation vectors and masks as the environment."""

    def __init__(self, rules: Rules) -> None:
        from agents.heuristic import HeuristicAgent

        self.rules = rules
        self.table = ActionTable(rules)
        self.encoder = ObservationEncoder(rules)
        self.heuristic = HeuristicAgent(rules, seed=0)
        self.adviser = make_adviser("heuristic", rules)

    def observe(self, deal: Deal) -> dict[str, np.ndarray]:
        return self.encoder.encode_turn(deal, self.table)

    def heuristic_action(self, obs: dict[str, np.ndarray]) -> int:
        """The heuristic's choice as a universal action id."""
        return self.table.universal[self.heuristic.act(obs)]

    def play_out(self, deal: Deal) -> Deal:
        while not deal.is_over:
            deal.apply_action(self.heuristic_action(self.observe(deal)))
        return deal


def _chunk(args: tuple[Rules, int, int, float]) -> dict[str, np.ndarray]:
    """Rollout targets for ``deals`` deals from one seed (runs in a worker process)."""
    rules, seed, deals, play_rate = args
    sim = _Simulator(rules)
    rng = random.Random(seed)
    n_actions = len(sim.table)
    bid_x, bid_mask, cand, adv, play_x, play_mask, play_action = [], [], [], [], [], [], []
    for _ in range(deals):
        deal = Deal.new(rules, rng, dealer=rng.randrange(rules.num_players))
        while deal.phase == Phase.BIDDING:
            obs = sim.observe(deal)
            advised = sim.heuristic_action(obs)
            legal = deal.legal_actions()
            if len(legal) > 1:
                side = rules.side_of(deal.to_act)
                results = {}
                for bid in bid_candidates(legal, advised):
                    trial = deal.clone()
                    trial.apply_action(bid)
                    results[bid] = sim.play_out(trial).zero_sum_result(side)
                c = np.zeros(n_actions, dtype=np.int8)
                a = np.zeros(n_actions, dtype=np.float32)
                for bid, result in results.items():
                    c[sim.table.compact[bid]] = 1
                    a[sim.table.compact[bid]] = result - results[advised]
                bid_x.append(policy_input(obs, sim.adviser))
                bid_mask.append(obs["action_mask"])
                cand.append(c)
                adv.append(a)
            deal.apply_action(advised)
        while not deal.is_over:  # the rest of the deal, heuristic everywhere: a sample of its decisions
            obs = sim.observe(deal)
            advised = sim.heuristic_action(obs)
            if obs["action_mask"].sum() > 1 and rng.random() < play_rate:
                play_x.append(policy_input(obs, sim.adviser))
                play_mask.append(obs["action_mask"])
                play_action.append(sim.table.compact[advised])
            deal.apply_action(advised)
    width = sim.encoder.size + n_actions

    def stack(rows: list[np.ndarray], shape: tuple[int, ...], dtype: Any) -> np.ndarray:
        return np.stack(rows) if rows else np.zeros((0, *shape), dtype=dtype)

    return {
        "bid_x": stack(bid_x, (width,), np.int8), "bid_mask": stack(bid_mask, (n_actions,), np.int8),
        "candidates": stack(cand, (n_actions,), np.int8), "advantages": stack(adv, (n_actions,), np.float32),
        "play_x": stack(play_x, (width,), np.int8), "play_mask": stack(play_mask, (n_actions,), np.int8),
        "play_action": np.asarray(play_action, dtype=np.int64),
        "bid_chunk": np.full(len(bid_x), seed, dtype=np.int64),
    }


def rollout_targets(rules: Rules, cfg: BidRolloutConfig, rng: np.random.Generator,
                    progress: bool = False, cache: Path | None = None, backend: Backend = LOCAL) -> dict[str, np.ndarray]:
    """Advantages of the candidate bids at every bidding decision of ``cfg.deals`` deals played by
    the heuristic (in hundreds of points, relative to the heuristic's own bid), plus a sample of
    the other decisions with the heuristic's move, played on ``backend`` (``cfg.workers`` local
    processes, or Ray tasks). Reproducible from ``rng`` whatever the backend and ``cfg.workers``.
    With ``cache``, data already there for the very same deals (same seeds,
    rules and sampling) are read instead of played again, and fresh data are written there."""
    chunks = [CHUNK_DEALS] * (cfg.deals // CHUNK_DEALS) + ([cfg.deals % CHUNK_DEALS] if cfg.deals % CHUNK_DEALS else [])
    seeds = rng.integers(2**31, size=len(chunks))
    key = json.dumps({"rules": rules.to_dict(), "seeds": seeds.tolist(), "chunks": chunks,
                      "play_sample_rate": cfg.play_sample_rate}, sort_keys=True)
    if cache is not None and cache.is_file():
        with np.load(cache) as saved:
            if str(saved["key"]) == key:
                return {k: saved[k] for k in saved.files if k != "key"}
    jobs = [(rules, int(s), k, cfg.play_sample_rate) for s, k in zip(seeds, chunks, strict=True)]
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=cfg.deals, unit="deal", desc="bid rollouts", dynamic_ncols=True)
    try:
        parts = run_jobs(_chunk, jobs, cfg.workers, cfg.chunk_timeout,
                         on_done=(lambda i: bar.update(jobs[i][2])) if bar else None, backend=backend)
    finally:
        if bar:
            bar.close()
    data = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    data["advantages"] /= 100.0  # in hundreds of points, the scale of the zero_sum reward
    if cache is not None:  # written whole, then moved into place: never a truncated cache
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache.with_name(cache.name + ".tmp.npz")
        np.savez(tmp, key=np.array(key), **data)
        os.replace(tmp, cache)
    return data


def improve_bidding(model: ActorCritic, data: dict[str, np.ndarray], cfg: BidRolloutConfig, device: torch.device,
                    log: Callable[[str], None] = print,
                    on_epoch: Callable[[dict[str, float]], None] | None = None) -> list[dict[str, float]]:
    """Fit the network's bidding to the rollout advantages (all-action policy gradient) and keep
    its other decisions on the heuristic's (cross-entropy); the epoch with the best held-out gain
    is kept. Returns one metrics dict per epoch (``gain``: points per bidding decision)."""
    if model.advice != "heuristic":
        raise ValueError("bid rollouts improve on the heuristic: the network needs advice='heuristic'")
    t = {k: torch.from_numpy(v).to(device) for k, v in data.items() if k != "bid_chunk"}
    n, n_play = len(t["bid_x"]), len(t["play_x"])
    cut = _held_out_start(data["bid_chunk"], cfg.held_out)
    play_cut = max(1, int(n_play * (1 - cfg.held_out)))
    gen = torch.Generator().manual_seed(int(torch.randint(2**31, (1,)).item()))
    # The candidates' measured advantages; jump bids (not rolled out) get a flat penalty.
    target = torch.where(t["candidates"].bool(), t["advantages"], torch.full_like(t["advantages"], -cfg.non_candidate_penalty))
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.learning_rate)
    steps = math.ceil(cut / cfg.batch_size)
    play_batch = max(1, (play_cut + steps - 1) // steps)
    best: tuple[float, dict[str, torch.Tensor]] | None = None
    history = []
    for epoch in range(cfg.epochs):
        order = torch.randperm(cut, generator=gen)
        play_order = torch.randperm(play_cut, generator=gen)
        for k in range(steps):
            mb = order[k * cfg.batch_size:(k + 1) * cfg.batch_size].to(device)
            probs = torch.softmax(model.masked_logits(t["bid_x"][mb], t["bid_mask"][mb]), dim=-1)
            loss = -(probs * target[mb]).sum(-1).mean()  # illegal actions have probability 0
            pmb = play_order[k * play_batch:(k + 1) * play_batch].to(device)
            if len(pmb):
                loss = loss + nn.functional.cross_entropy(model.masked_logits(t["play_x"][pmb], t["play_mask"][pmb]),
                                                          t["play_action"][pmb])
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), cfg.max_grad_norm)
            optimizer.step()
        metrics = {"epoch": float(epoch + 1), **_greedy_gain(model, t, target, cut, n, play_cut, n_play)}
        history.append(metrics)
        if on_epoch:
            on_epoch(metrics)
        log(f"bid rollouts epoch {epoch + 1}/{cfg.epochs}: held out: gain {100 * metrics['gain']:+.2f} points per "
            f"bidding decision (±{100 * metrics['gain_se']:.2f}), deviates from the heuristic at "
            f"{metrics['deviation']:.1%} of them; other decisions agree {metrics['play_agreement']:.2%}")
        if best is None or metrics["gain"] > best[0]:
            best = (metrics["gain"], {k: v.detach().clone() for k, v in model.state_dict().items()})
    if best is not None:
        model.load_state_dict(best[1])
    if cfg.margin is not None:
        with torch.no_grad():
            model.advice_weight.clamp_(min=cfg.margin)
    return history


def _held_out_start(chunks: np.ndarray, fraction: float) -> int:
    """Where the held-out decisions start: at the last chunk boundary before ``1 - fraction`` of
    them, so that no deal has decisions on both sides (within a single chunk: a plain cut)."""
    n = len(chunks)
    want = int(n * (1 - fraction))
    boundaries = np.flatnonzero(np.diff(chunks) != 0) + 1
    earlier = boundaries[boundaries <= want]
    start = int(earlier[-1]) if len(earlier) else want
    return min(max(start, 1), max(n - 1, 1))


def _greedy_gain(model: ActorCritic, t: dict[str, torch.Tensor], target: torch.Tensor, lo: int, hi: int,
                 play_lo: int, play_hi: int) -> dict[str, float]:
    """The greedy policy on the held-out decisions: mean advantage (its estimated gain over the
    heuristic per bidding decision) with its standard error, how often it deviates, and its
    agreement with the heuristic elsewhere."""
    with torch.no_grad():
        greedy = model.masked_logits(t["bid_x"][lo:hi], t["bid_mask"][lo:hi]).argmax(-1)
        gain = target[lo:hi].gather(1, greedy[:, None]).squeeze(1)
        advised = t["bid_x"][lo:hi, -model.num_actions:].argmax(-1)
        play = model.masked_logits(t["play_x"][play_lo:play_hi], t["play_mask"][play_lo:play_hi]).argmax(-1)
    count = max(len(gain), 1)
    return {
        "gain": float(gain.mean()) if len(gain) else 0.0,
        "gain_se": float(gain.std() / math.sqrt(count)) if len(gain) > 1 else 0.0,
        "deviation": float((greedy != advised).float().mean()) if len(gain) else 0.0,
        "play_agreement": float((play == t["play_action"][play_lo:play_hi]).float().mean()) if len(play) else 1.0,
    }
