"""Score tuning: a trained network taught to play at the game scores of a real game to 500.

A network trained on deals that all start from a game score of zero (the expert-iteration data
before ``generation.starting_scores``) never saw the observation's ``scores`` inputs move: their
first-layer weights kept their random initial values, so in a real game, where the scores grow to
±500, its decisions are perturbed by noise that grows with the scores (the shipped networks won
3–18% of their games to 500 against the heuristic while level with it per deal).

The fix is a distillation over positions of real games (docs/agents.md, "Pretrained agents"):

* **positions**: every decision of games to 500 played by the heuristic in every seat
  (:func:`game_positions`), with the game's scores in the observation, as a shipped agent meets
  them;
* **targets** (:func:`score_targets`): away from the game's end, the network's own decision with
  the score inputs zeroed (its zero-score play, which is what its training measured); near the
  end (a side within ``margin`` points of the target, or of the losing score), the heuristic's
  decision, whose bidding counts a contract's effect on winning or losing the game (§9, through
  :mod:`five_hundred_env.scoring`);
* **fit** (:func:`fit_targets`): the whole actor, by cross-entropy, starting from the network with
  its score weights zeroed (:func:`score_blind`) and the score inputs scaled like a PPO network's
  (``scores_at``), so that at a score of zero it plays exactly as before.

``python -m training.algorithms.score_tuning SOURCE OUT`` tunes the network of the checkpoint or policy file
``SOURCE`` and writes the policy file ``OUT`` (the same format, :func:`agents.policy_files.write_policy`).
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

from agents.heuristic import HeuristicAgent
from agents.neural import ActorCritic, load_agent, policy_input, read_checkpoint
from agents.policy_files import write_policy
from five_hundred_env.actions import ActionTable
from five_hundred_env.engine import Game
from five_hundred_env.observation import ObservationEncoder, observation_layout
from five_hundred_env.rules import Rules

MAX_GAME_DEALS = 100
"""A game that has not ended after this many deals is left unfinished (its positions are kept)."""


@dataclass
class Positions:
    """Decisions of real games: the network's inputs (the observation with the game's scores, and
    the heuristic's advice), the masks, the heuristic's choices, each position's side scores (the
    acting side first) and the game each came from."""

    x: np.ndarray
    mask: np.ndarray
    heuristic: np.ndarray
    scores: np.ndarray
    game: np.ndarray

    def __len__(self) -> int:
        return len(self.x)

    def arrays(self) -> dict[str, np.ndarray]:
        return dataclasses.asdict(self)

    def subset(self, rows: np.ndarray) -> Positions:
        """The positions of the rows ``rows`` selects (a boolean mask or indices)."""
        return Positions(**{name: value[rows] for name, value in self.arrays().items()})


def scores_offset(rules: Rules) -> int:
    """Where the observation's ``scores`` slice starts."""
    return observation_layout(rules)["scores"][0]


def game_positions(rules: Rules, games: int, seed: int) -> Positions:
    """Every decision of ``games`` games to 500 played by the heuristic in every seat (the network
    reads the heuristic's advice, so its input needs the heuristic's choice anyway)."""
    table, encoder = ActionTable(rules), ObservationEncoder(rules)
    heuristic = HeuristicAgent(rules, seed)
    advice = _Advice(heuristic)
    at, k = scores_offset(rules), rules.num_sides
    rows: dict[str, list[np.ndarray | int]] = {name: [] for name in ("x", "mask", "heuristic", "game")}
    rng = random.Random(seed)
    for g in range(games):
        game = Game(rules, rng=random.Random(rng.getrandbits(64)), max_deals=MAX_GAME_DEALS)
        while not game.is_over and not game.dealing_stopped:
            obs = encoder.encode_turn(game.deal, table, game.scores)
            x = policy_input(obs, advice)
            rows["x"].append(x)
            rows["mask"].append(obs["action_mask"])
            rows["heuristic"].append(advice.last)
            rows["game"].append(g)
            game.apply_action(table.universal[advice.last])
    x = np.stack(rows["x"])
    return Positions(x=x, mask=np.stack(rows["mask"]), heuristic=np.asarray(rows["heuristic"], dtype=np.int64),
                     scores=x[:, at:at + k].astype(np.int64) * 10, game=np.asarray(rows["game"], dtype=np.int64))


class _Advice:
    """The heuristic as the network's adviser (:func:`policy_input`), remembering its last choice."""

    def __init__(self, heuristic: HeuristicAgent) -> None:
        self.heuristic = heuristic
        self.last = -1

    def __call__(self, observation: dict[str, np.ndarray]) -> np.ndarray:
        self.last = self.heuristic.act(observation)
        onehot = np.zeros(len(observation["action_mask"]), dtype=np.int8)
        onehot[self.last] = 1
        return onehot


def near_game_end(rules: Rules, scores: np.ndarray, margin: int) -> np.ndarray:
    """Per row of side scores: whether a side is within ``margin`` points of the target or of the
    losing score (where one deal can end the game)."""
    return (scores.max(axis=1) >= rules.target - margin) | (scores.min(axis=1) <= rules.losing_score + margin)


def score_blind(model: ActorCritic, rules: Rules) -> ActorCritic:
    """A copy of ``model`` whose decisions ignore the game scores (the first layer's weights on the
    ``scores`` inputs zeroed), with the score inputs scaled as in PPO's networks (``scores_at``)."""
    spec = {**model.spec(), "scores_at": scores_offset(rules)}
    blind = ActorCritic(**spec, policy_only=model.critic is None)
    state = {k: v for k, v in model.state_dict().items() if k != "input_scale"}
    blind.load_state_dict(state, strict=False)
    at = scores_offset(rules)
    with torch.no_grad():
        blind.actor[0].weight[:, at:at + rules.num_sides] = 0
    return blind


def greedy_actions(model: ActorCritic, x: np.ndarray, mask: np.ndarray, batch: int = 4096) -> np.ndarray:
    """The network's greedy action of every row."""
    out = []
    with torch.inference_mode():
        for i in range(0, len(x), batch):
            logits = model.masked_logits(torch.from_numpy(x[i:i + batch]), torch.from_numpy(mask[i:i + batch]))
            out.append(logits.argmax(dim=1).numpy())
    return np.concatenate(out) if out else np.zeros(0, dtype=np.int64)


def score_targets(rules: Rules, blind: ActorCritic, positions: Positions, margin: int) -> np.ndarray:
    """The action each position should get: the heuristic's near the game's end
    (:func:`near_game_end`), else the score-blind network's (its zero-score decision)."""
    own = greedy_actions(blind, positions.x, positions.mask)
    return np.where(near_game_end(rules, positions.scores, margin), positions.heuristic, own)


def fit_targets(model: ActorCritic, positions: Positions, targets: np.ndarray, epochs: int, learning_rate: float,
                batch_size: int, seed: int) -> ActorCritic:
    """The actor fitted to ``targets`` by cross-entropy (in place; returned)."""
    generator = torch.Generator().manual_seed(seed)
    params = [p for name, p in model.named_parameters() if not name.startswith("critic.")]
    optimizer = torch.optim.Adam(params, lr=learning_rate)
    x, mask, y = torch.from_numpy(positions.x), torch.from_numpy(positions.mask), torch.from_numpy(targets)
    loss_fn = nn.CrossEntropyLoss()
    model.train()
    for _ in range(epochs):
        for idx in torch.randperm(len(y), generator=generator).split(batch_size):
            loss = loss_fn(model.masked_logits(x[idx], mask[idx]), y[idx])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return model.eval()


def agreement(rules: Rules, model: ActorCritic, positions: Positions, targets: np.ndarray, margin: int) -> dict[str, float]:
    """How often the network's greedy action is the target: overall, near the game's end and away from it."""
    same = greedy_actions(model, positions.x, positions.mask) == targets
    near = near_game_end(rules, positions.scores, margin)
    return {"all": float(same.mean()), "near_end": float(same[near].mean()) if near.any() else 1.0,
            "away": float(same[~near].mean()) if (~near).any() else 1.0, "near_share": float(near.mean())}


def cached_positions(rules: Rules, games: int, seed: int, cache: Path | None) -> Positions:
    """:func:`game_positions`, read from the ``.npz`` file ``cache`` if it holds exactly these
    (preset, games, seed), else played and written there (``None``: no cache)."""
    key = f"{rules.to_dict()}|{games}|{seed}"
    if cache is not None and cache.is_file():
        with np.load(cache) as saved:
            if str(saved["key"]) == key:
                return Positions(**{f: saved[f] for f in saved.files if f != "key"})
    positions = game_positions(rules, games, seed)
    if cache is not None:
        np.savez(cache, key=np.array(key), **positions.arrays())
    return positions


def tune(rules: Rules, model: ActorCritic, games: int, seed: int, margin: int, epochs: int = 8,
         learning_rate: float = 3e-4, batch_size: int = 512, cache: Path | None = None) -> tuple[ActorCritic, dict[str, float]]:
    """The score-tuned copy of ``model`` and its agreement with the targets on held-out games (a
    tenth of ``games``); the positions are read from, or written to, ``cache``."""
    positions = cached_positions(rules, games, seed, cache)
    blind = score_blind(model, rules)
    targets = score_targets(rules, blind, positions, margin)
    held = positions.game >= games - max(1, games // 10)
    train, test = positions.subset(~held), positions.subset(held)
    before = agreement(rules, blind, test, targets[held], margin)
    tuned = fit_targets(blind, train, targets[~held], epochs, learning_rate, batch_size, seed)
    after = agreement(rules, tuned, test, targets[held], margin)
    return tuned, {"positions": float(len(positions)), **{f"blind_{k}": v for k, v in before.items()},
                   **{f"tuned_{k}": v for k, v in after.items()}}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m training.algorithms.score_tuning", description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path, help="the checkpoint or policy file of the network to tune")
    parser.add_argument("out", type=Path, help="the policy file to write")
    parser.add_argument("--games", type=int, default=300, help="games to 500 whose decisions are the positions")
    parser.add_argument("--margin", type=int, default=200, help="points from the target or losing score that count as the end")
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--learning-rate", type=float, default=3e-4)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--positions", type=Path, default=None, help="an .npz file caching the positions")
    args = parser.parse_args(argv)
    source = load_agent(args.source)
    torch.manual_seed(args.seed)
    tuned, stats = tune(source.rules, source.model, args.games, args.seed, args.margin, args.epochs,
                        args.learning_rate, cache=args.positions)
    print(" ".join(f"{k}={v:.4g}" for k, v in stats.items()))
    note = (f"{args.source.name} score-tuned: python -m training.algorithms.score_tuning --games {args.games} "
            f"--margin {args.margin} --epochs {args.epochs} --learning-rate {args.learning_rate} --seed {args.seed}")
    earlier = read_checkpoint(args.source).get("provenance", {}).get("note")
    if earlier:  # a policy file's own history goes on
        note += f"; {args.source.name}: {earlier}"
    write_policy(tuned, source.rules, args.out, note=note,
                 origin={"source": args.source.name, "sha256": hashlib.sha256(args.source.read_bytes()).hexdigest()})


if __name__ == "__main__":
    main()
