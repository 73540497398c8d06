"""Networks for the tests of policy files and ensembles (test_pretrained, test_ensemble), and a
byte flipped inside a file's weights (the tests of the tensors' digest)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

import five_hundred_env
from agents.base import DECISION_KINDS, KIND_OF_PHASE, Agent
from agents.central import central_size
from agents.neural import ActorCritic
from agents.weights_files import save_checkpoint
from five_hundred_env.engine import Phase
from five_hundred_env.observation import observation_layout
from five_hundred_env.rules import make_rules


def trained_like(preset: str, seed: int = 0, hidden: tuple[int, ...] = (32, 32)) -> ActorCritic:
    """A network with a central critic whose policy head is scaled up, so that its own logits
    (not only the heuristic's advice) decide, with gaps between actions like a trained one's."""
    torch.manual_seed(seed)
    rules = make_rules(preset)
    env = five_hundred_env.env(rules=preset)
    model = ActorCritic(env.unwrapped.encoder.size, int(env.action_space("player_0").n), list(hidden),
                        critic_extra=central_size(rules), num_sides=rules.num_sides, advice="heuristic")
    with torch.no_grad():
        model.actor[-1].weight.mul_(200.0)
    return model


def write_checkpoint(path, preset: str = "australian", seed: int = 0):
    model = trained_like(preset, seed)
    save_checkpoint(path, {"rules": make_rules(preset).to_dict(), "model_spec": model.spec(), "model": model.state_dict()})
    return path


def flip_a_byte(path: Path, tensor: torch.Tensor) -> None:
    """Flip the lowest bit of ``tensor``'s first element where the file at ``path`` stores it (a
    change too small to make the value non-finite, as a disk's or a copy's single bit error)."""
    raw = bytearray(path.read_bytes())
    stored = tensor.detach().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()
    at = raw.find(stored)
    assert at >= 0 and raw.find(stored, at + 1) < 0, "the tensor's bytes are not stored once in the file"
    raw[at] ^= 1
    path.write_bytes(bytes(raw))


class Comparing(Agent):
    """Plays ``first``'s choice and counts how often ``second`` chose the same (and, per decision
    kind, whether they agreed at each decision with a choice)."""

    def __init__(self, first: Agent, second: Agent) -> None:
        super().__init__(first.rules)
        self.first, self.second = first, second
        self.decisions = self.agreed = 0
        self.agreed_by_kind: dict[str, list[bool]] = {kind: [] for kind in DECISION_KINDS}
        offset, (width,) = observation_layout(first.rules)["phase"]
        self._phase = slice(offset, offset + width)

    def act(self, observation):
        action = self.first.act(observation)
        same = action == self.second.act(observation)
        self.decisions += 1
        self.agreed += same
        if observation["action_mask"].sum() > 1:
            kind = KIND_OF_PHASE[Phase(int(np.argmax(observation["observation"][self._phase])))]
            self.agreed_by_kind[kind].append(bool(same))
        return action
