"""Behaviour cloning from a dataset: a network learns to choose the dataset agent's actions from
the observations the loader replays, then plays the heuristic in duplicate (docs/datasets.md).

    five-hundred dataset heuristic --deals 20000 --out heuristic-deals
    python docs/examples/behaviour_cloning.py heuristic-deals --epochs 2 --boards 200

It prints the share of the dataset's actions the network chooses after each epoch, then the
duplicate evaluator's table of the network against ``--opponent`` (default the heuristic).
Needs the ``train`` and ``data`` extras.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import torch
from torch.utils.data import DataLoader

from agents.neural import ActorCritic, NeuralAgent
from training.evaluation.evaluate import EvaluationReport, duplicate_match
from training.rollouts.decision_dataset import DecisionDataset
from training.workers.threads import limit_threads


def clone(data: DecisionDataset, epochs: int, hidden: int, lr: float, seed: int) -> tuple[ActorCritic, float]:
    """A policy network trained by cross-entropy on the dataset's actions; returns it and the
    share of the last epoch's decisions where its greedy choice was the dataset's."""
    torch.manual_seed(seed)
    model = ActorCritic.for_rules(data.rules, [hidden, hidden], policy_only=True)
    optimiser = torch.optim.Adam(model.parameters(), lr=lr)
    accuracy = 0.0
    for epoch in range(epochs):
        data.set_epoch(epoch)
        agreed = seen = 0
        for batch in DataLoader(data, batch_size=None):
            logits = model.masked_logits(batch["obs"], batch["mask"])
            loss = torch.nn.functional.cross_entropy(logits, batch["action"])
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            agreed += int((logits.argmax(dim=1) == batch["action"]).sum())
            seen += len(batch["action"])
        accuracy = agreed / seen
        print(f"epoch {epoch + 1}: {seen:,} decisions, the dataset's action chosen in {accuracy:.1%}")
    return model.eval(), accuracy


def main(argv: Sequence[str] | None = None) -> tuple[float, EvaluationReport]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dataset", help="a dataset folder written by five-hundred dataset")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=1024)
    parser.add_argument("--hidden", type=int, default=256, help="the width of the network's two hidden layers")
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--boards", type=int, default=200, help="duplicate boards of the evaluation")
    parser.add_argument("--opponent", default="heuristic", help="the agent spec it plays in the evaluation")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", default="1", help="torch's threads: a number or auto (default 1: small "
                        "layers gain nothing from more, and lose much on a busy machine)")
    args = parser.parse_args(argv)
    limit_threads(int(args.threads) if args.threads.isdigit() else args.threads)
    data = DecisionDataset(args.dataset, args.batch_size, shuffle=True, seed=args.seed)
    model, accuracy = clone(data, args.epochs, args.hidden, args.lr, args.seed)
    agent = NeuralAgent(data.rules, model=model)
    agent.label = f"cloned {data.agent}"  # its name in the report
    report = duplicate_match(data.rules, agent, args.opponent, args.boards, seed=args.seed)
    print(report.format_table())
    return accuracy, report


if __name__ == "__main__":
    main()
