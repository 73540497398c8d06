"""Expert-iteration data: deals played by the current policy, with improved targets at sampled decisions.

A chunk of deals (one seed each, so the data never depend on how many worker processes share the
chunks) is played by the current network, greedy, in every seat. Every decision is a sample for
the critic: the network's input, and the deal's zero-sum result for the acting seat's side
(in hundreds of points: the scale of the PPO reward). At a sampled decision of each kind
(``DECISION_KINDS``; only decisions with a choice), every candidate action is scored and its
advantage over the policy's own choice kept — the improvement step of policy iteration, with the
current network as the base policy:

* **bids** (``agents.search.values.bid_candidates``: pass, the policy's bid, the cheapest bid of
  each strain, misère, open misère), **discards** and **nominations** (every legal action): the
  very same deal is cloned, the candidate applied and the deal played out by the current policy
  (common random numbers: the candidates differ only in the candidate);
* **card play**: PIMC (``agents.search.values.pimc_action_values``): ``worlds`` deals drawn
  uniformly from what the seat has seen (``five_hundred_env.sampling``), every legal card played out
  in each of them by the current policy, or solved exactly with ``solver_tricks`` tricks or fewer
  left; the card play's targets use no hidden card.

The playouts of bids, discards and nominations see the real deal: their results are samples of
``Q(o, a)`` given the seat's observation ``o`` because the policy playing them out acts on
observations only (common random numbers: every candidate meets the same hidden cards, so their
differences are low-variance samples of the advantage).

With ``starting_scores="uniform"`` every deal starts from side scores drawn over the game's range
(``training.rollouts.selfplay.draw_starting_scores``, as PPO's), which its observations and those of its
playouts show, so the network learns to play at the scores a game to 500 reaches; with
``win_bonus`` the results (targets and the critic's returns) also count the deal's effect on the
game: the side whose deal wins the game gains ``win_bonus`` points, zero-sum (:func:`game_result`).

With ``base="heuristic"`` the heuristic plays the deals and the playouts: one step of policy
iteration over the heuristic, whatever the network. :func:`heuristic_rollouts` makes those data
for the PPO warm start ``pretrain.rollouts`` (card plays rolled out on the real deal too).

:func:`generate_chunk` plays a chunk on the batched engine (:mod:`.exit_batch`: its deals side by
side, every sampled decision's playouts in one batch) where the compiled heuristic covers the
preset (every preset, numba installed), else on the scalar engine here (:func:`generate_scalar_chunk`, a deal at a time); both
make the same rows (:mod:`.exit_rows`: the same deals, one decision stream per deal).
"""

from __future__ import annotations

import contextlib
import json
import random
import zipfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import numpy as np
import torch

from agents.base import DECISION_KINDS, KIND_OF_PHASE
from agents.central import hidden_cards
from agents.heuristic import HeuristicAgent
from agents.neural import ActorCritic, NeuralAgent, policy_input
from agents.search.values import pimc_action_values, policy_play_out, world_action_values
from five_hundred_env.actions import ActionTable
from five_hundred_env.engine import Deal
from five_hundred_env.files import write_atomic
from five_hundred_env.observation import ObservationEncoder, observation_layout
from five_hundred_env.rules import Rules
from five_hundred_env.sampling import InfoSet
from training.rollouts.exit_batch import batch_plays, generate_batch_chunk
from training.rollouts.exit_rows import (
    RESULT_SCALE,
    ChunkJob,
    DataRows,
    Draw,
    deal_rng,
    deal_value,
    decision_rng,
    draw_decision,
    game_result,
)
from training.rollouts.selfplay import draw_starting_scores
from training.settings.improvement_config import RolloutsConfig
from training.workers.distributed import LOCAL, Backend, run_jobs


@contextlib.contextmanager
def _single_torch_thread() -> Iterator[None]:
    """One intra-op thread while a chunk is played: the same arithmetic (hence the same greedy
    choices) in the parent process and in any worker."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


class _Chunk:
    """A chunk played by the scalar engine, a deal at a time: the policy, the encoders and the rows."""

    def __init__(self, job: ChunkJob) -> None:
        self.job = job
        self.rules = job.rules
        self.table = ActionTable(job.rules)
        self.encoder = ObservationEncoder(job.rules)
        model = ActorCritic(**job.model_spec)
        model.load_state_dict({k: torch.from_numpy(v) for k, v in job.weights.items()})
        self.model = model.eval()
        self.agent = NeuralAgent(job.rules, 0, model=self.model, greedy=True)
        self.heuristic = HeuristicAgent(job.rules, 0) if job.base == "heuristic" else None
        self.central = self.model.critic_extra > 0
        self.rng = deal_rng(job.seed)
        # A generator of its own for the scores: with zero scores the deals are those of before.
        self.score_rng = np.random.default_rng(job.seed) if job.starting_scores == "uniform" else None
        self.start_deal(None)
        width = self.model.spec()["obs_size"] + (len(self.table) if self.agent.adviser else 0)
        self.rows = DataRows(job.rules, job.seed, width, self.model.critic_extra)

    def start_deal(self, scores: list[int] | None) -> None:
        """The game scores of the next deal: its observations, its playouts' and its results see them."""
        self.scores = scores
        self.play_out = policy_play_out(self.rules, self.heuristic.act if self.heuristic else self.agent.act, scores)
        self.result = game_result(self.rules, scores, self.job.win_bonus) if scores and self.job.win_bonus else None

    def greedy(self, x: np.ndarray, mask: np.ndarray) -> int:
        """The network's greedy compact action for a policy input (what ``self.agent`` plays)."""
        with torch.inference_mode():
            logits = self.model.masked_logits(torch.from_numpy(x)[None], torch.from_numpy(mask)[None])[0]
        return int(torch.argmax(logits))

    def play_deal(self, index: int) -> None:
        """Deal ``index`` of the chunk, played to its end; its rows gathered."""
        if self.score_rng is not None:
            self.start_deal(draw_starting_scores(self.rules, self.score_rng))
        deal = Deal.new(self.rules, self.rng, dealer=self.rng.randrange(self.rules.num_players))
        rng = decision_rng(self.job.seed, index)
        value_rows: list[tuple[int, int]] = []  # (row, side) waiting for the deal's result
        while not deal.is_over:
            obs = self.encoder.encode_turn(deal, self.table, self.scores)
            x = policy_input(obs, self.agent.adviser)
            compact = self.heuristic.act(obs) if self.heuristic else self.greedy(x, obs["action_mask"])
            action = self.table.universal[compact]
            draw = draw_decision(self.job, rng, deal, action)
            if draw.critic:
                extra = hidden_cards(deal, deal.to_act) if self.central else np.zeros(0, np.int8)
                value_rows.append((self.rows.add_value(index, x, obs["action_mask"], extra),
                                   self.rules.side_of(deal.to_act)))
            if draw.candidates:
                self.rows.add_target(index, x, obs["action_mask"], draw.kind, action, self.candidate_values(deal, draw, rng))
            deal.apply_action(action)
        for row, side in value_rows:
            self.rows.set_return(row, deal_value(deal, side, self.result))

    def candidate_values(self, deal: Deal, draw: Draw, rng: random.Random) -> dict[int, float]:
        """The drawn candidates of one decision (universal ids), each scored by its playouts."""
        seat = deal.to_act
        if draw.pimc:
            return pimc_action_values(InfoSet.from_deal(deal, seat), draw.candidates, self.job.worlds, rng,
                                      self.play_out, self.job.solver_tricks, self.result)
        return world_action_values(deal, draw.candidates, self.rules.side_of(seat), self.play_out, result=self.result)


def generate_scalar_chunk(job: ChunkJob) -> dict[str, np.ndarray]:
    """The data of one chunk played by the scalar engine (every preset, every setting)."""
    with _single_torch_thread():
        chunk = _Chunk(job)
        for index in range(job.deals):
            chunk.play_deal(index)
        return chunk.rows.arrays()


def generate_chunk(job: ChunkJob) -> dict[str, np.ndarray]:
    """The data of one chunk (runs in a worker process; a module-level function for pickling): on
    the batched engine where it plays the job (:func:`.exit_batch.batch_plays`), else on the
    scalar one. Both make the same rows."""
    if batch_plays(job):
        with _single_torch_thread():
            return generate_batch_chunk(job)
    return generate_scalar_chunk(job)


def chunk_sizes(deals: int, chunk_deals: int) -> list[int]:
    """``deals`` split into chunks of ``chunk_deals`` (the last one shorter)."""
    return [chunk_deals] * (deals // chunk_deals) + ([deals % chunk_deals] if deals % chunk_deals else [])


def generate(jobs: list[ChunkJob], workers: int, timeout: float,
             on_done: Callable[[int], None] | None = None, backend: Backend = LOCAL) -> dict[str, np.ndarray]:
    """Every chunk's data, concatenated in job order (so the same whatever ``workers`` or
    ``backend``: local processes, or Ray tasks)."""
    parts = run_jobs(generate_chunk, jobs, workers, timeout, on_done=on_done, backend=backend)
    # One key at a time, each key's chunks dropped once joined: the peak is the data and one key's
    # copy, not the data twice (320,000 six-handed deals hold 7.5 GB).
    return {k: np.concatenate([p.pop(k) for p in parts]) for k in list(parts[0])}


def target_stats(data: dict[str, np.ndarray]) -> dict[str, float]:
    """Per decision kind: how many targets, the mean advantage of the best candidate over the
    policy's choice (points: what one improvement step could gain there) and how often the best
    candidate is not the policy's choice."""
    scored = np.where(data["candidates"].astype(bool), data["advantages"], -np.inf)
    best = scored.max(axis=1) if len(scored) else np.zeros(0)
    out: dict[str, float] = {"targets": float(len(best)), "value_samples": float(len(data["returns"]))}
    for k, name in enumerate(DECISION_KINDS):
        sel = data["kind"] == k
        out[f"{name}_targets"] = float(sel.sum())
        out[f"{name}_best_gain"] = float(best[sel].mean() * RESULT_SCALE) if sel.any() else 0.0
        out[f"{name}_improvable"] = float((best[sel] > 0).mean()) if sel.any() else 0.0
    out["best_gain"] = float(best.mean() * RESULT_SCALE) if len(best) else 0.0
    out["improvable"] = float((best > 0).mean()) if len(best) else 0.0
    return out


def read_cache(path: Path, key: str) -> dict[str, np.ndarray] | None:
    """The data cached at ``path`` if they were made for ``key`` (else ``None``: a stale or damaged
    cache is played again, never trusted)."""
    try:
        with np.load(path) as saved:
            if str(saved["key"]) != key:
                return None
            return {k: saved[k] for k in saved.files if k != "key"}
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
        return None


def write_cache(path: Path, key: str, data: dict[str, np.ndarray]) -> None:
    """Written whole or not at all, only to a regular file (:func:`five_hundred_env.files.write_atomic`):
    never a truncated cache. Compressed: the inputs are mostly zeros (a thirtieth of the size, for a
    tenth of a second per 4,000 decisions)."""
    write_atomic(path, lambda f: np.savez_compressed(f, key=np.array(key), **data))


def heuristic_rollouts(rules: Rules, model: ActorCritic, cfg: RolloutsConfig, seeds: list[int], cache: Path | None = None,
                       progress: bool = False, backend: Backend = LOCAL) -> dict[str, np.ndarray]:
    """The one-step rollout improvement over the heuristic (``pretrain.rollouts``): ``cfg.deals``
    deals in chunks of ``cfg.chunk_deals`` (one seed of ``seeds`` each) played by the heuristic,
    every candidate of the sampled decisions (``cfg.sample``) played out by the heuristic on the
    real deal, card plays included, in ``cfg.workers`` processes or on the Ray ``backend``.

    The data depend on the rules, the settings (not the workers), the seeds and the network's
    spec (its input and its critic's), not on its weights. With ``cache``, data made there for
    exactly these are read instead of played again, and fresh data are written there."""
    sizes = chunk_sizes(cfg.deals, cfg.chunk_deals)
    if len(seeds) != len(sizes):
        raise ValueError(f"{len(sizes)} chunks of deals need as many seeds, got {len(seeds)}")
    settings = cfg.model_dump(mode="json", include={"deals", "chunk_deals", "sample", "value_rate", "starting_scores",
                                                     "win_bonus"})
    key = json.dumps({"rules": rules.to_dict(), "rollouts": settings, "seeds": seeds, "model_spec": model.spec()},
                     sort_keys=True)
    weights = {k: v.detach().cpu().numpy().copy() for k, v in model.state_dict().items()}
    jobs = [ChunkJob(rules, seed, deals, model.spec(), weights, cfg.sample.rates(), cfg.value_rate, worlds=1,
                     solver_tricks=0, base="heuristic", play_targets="rollout", starting_scores=cfg.starting_scores,
                     win_bonus=cfg.win_bonus)
            for seed, deals in zip(seeds, sizes, strict=True)]
    return generate_cached(jobs, cfg.workers, cfg.chunk_timeout, cache, key, "rollouts", progress, backend)


def generate_cached(jobs: list[ChunkJob], workers: int, timeout: float, cache: Path | None, key: str, desc: str,
                    progress: bool = False, backend: Backend = LOCAL) -> dict[str, np.ndarray]:
    """:func:`generate` the jobs' data, unless ``cache`` holds data made for ``key`` (then read);
    fresh data are written to ``cache`` (``None``: no cache). A progress bar named ``desc``."""
    data = read_cache(cache, key) if cache is not None else None
    if data is not None:
        return data
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=sum(job.deals for job in jobs), unit="deal", desc=desc, dynamic_ncols=True)
    try:
        data = generate(jobs, workers, timeout, on_done=(lambda i: bar.update(jobs[i].deals)) if bar else None,
                        backend=backend)
    finally:
        if bar:
            bar.close()
    if cache is not None:
        write_cache(cache, key, data)
    return data


def targets_of_kinds(data: dict[str, np.ndarray], kinds: Sequence[str]) -> dict[str, np.ndarray]:
    """The data with only the targets of these decision kinds (the critic's samples all kept)."""
    keep = np.isin(data["kind"], [DECISION_KINDS.index(k) for k in kinds])
    if keep.all():
        return data
    per_target = {"x", "mask", "candidates", "advantages", "kind", "action", "chunk"}
    return {k: (v[keep] if k in per_target else v) for k, v in data.items()}


def anchor_rows(data: dict[str, np.ndarray], kinds: Sequence[str], rules: Rules) -> np.ndarray:
    """The critic's samples whose decision is of a kind not fitted (read from the observation's
    phase): the fit keeps the network's choice there, or the shared weights would drift them."""
    offset, (width,) = observation_layout(rules)["phase"]
    phases = data["value_x"][:, offset:offset + width].argmax(axis=1)
    kind_of = {int(phase): kind for phase, kind in KIND_OF_PHASE.items()}
    return np.flatnonzero([kind_of.get(int(p)) not in kinds for p in phases])
