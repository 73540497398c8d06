"""An sb3-contrib ``MaskablePPO`` ``.zip`` read as data: its policy's weights and architecture,
never its pickled objects.

``MaskablePPO.load`` unpickles (with cloudpickle) the ``:serialized:`` entries of the zip's
``data`` file — the policy class, the spaces, the schedules — before anything checks them, so a
crafted file runs its code on load. :func:`read_sb3_policy` reads instead:

* ``policy.pth`` with ``torch.load(weights_only=True)`` (tensors only, never code);
* from ``data`` (plain JSON), only the readable text SB3 writes beside each pickled entry
  (``policy_kwargs``' ``net_arch`` and the name of its ``activation_fn``), never the pickle.

It rebuilds the actor of SB3's default ``MlpPolicy`` (the flattened observation, the policy
network of ``net_arch``, ``action_net``) and plays as ``MaskablePPO.predict(...,
deterministic=True)``: the legal action with the highest logit. Anything else (a custom features
extractor, an activation it cannot name) is refused with an :class:`UntrustedModelError` (the
agent registry adds how to load the file through sb3-contrib when the user trusts it: the
``trusted:PATH`` spec).
"""

from __future__ import annotations

import io
import json
import os
import re
import zipfile
from types import SimpleNamespace
from typing import Any

import numpy as np
import torch
from torch import nn

MAX_DATA_BYTES = 16 * 2**20
"""The largest ``data`` JSON read (a real one is a few kB)."""
MAX_POLICY_BYTES = 1 * 2**30
"""The largest ``policy.pth`` read (a network of 250 million float32 weights)."""
ACTIVATIONS: dict[str, type[nn.Module]] = {
    cls.__name__: cls for cls in (nn.Tanh, nn.ReLU, nn.ELU, nn.LeakyReLU, nn.GELU, nn.SiLU, nn.Sigmoid, nn.Softplus)
}
"""The activations named in ``policy_kwargs`` that are rebuilt (with their default arguments)."""

_POLICY_LAYER = re.compile(r"^mlp_extractor\.policy_net\.(\d+)\.(weight|bias)$")
_PLAIN_KWARGS = ("net_arch", "activation_fn", "ortho_init", "share_features_extractor", "normalize_images",
                 "optimizer_class", "optimizer_kwargs")
"""The ``policy_kwargs`` that change nothing else in how the default ``MlpPolicy`` plays (the
layers are read from the weights; the optimizer and the initialisation only matter in training)."""
MASKABLE_POLICIES = "sb3_contrib.common.maskable.policies"
_IGNORED = re.compile(r"^(mlp_extractor\.value_net\.|value_net\.)")  # the critic: never used to play


class UntrustedModelError(ValueError):
    """A ``.zip`` whose policy cannot be rebuilt from its weights alone (only sb3-contrib's own
    loader, which runs the file's pickled code, could load it)."""


def _refuse(path: str, why: str) -> UntrustedModelError:
    return UntrustedModelError(f"{path}: {why}; it cannot be played from its weights alone, and loading it through "
                               "sb3-contrib runs code pickled inside the file")


class SB3Policy:
    """The actor of an sb3-contrib ``MaskablePPO`` ``MlpPolicy``, rebuilt from its weights: what
    :class:`agents.registry.SB3Agent` needs of a model (``observation_space.shape``,
    ``action_space.n``, ``predict``)."""

    def __init__(self, network: nn.Sequential, obs_size: int, num_actions: int) -> None:
        self.network = network.eval()
        self.observation_space = SimpleNamespace(shape=(obs_size,))
        self.action_space = SimpleNamespace(n=num_actions)

    def predict(self, observation: np.ndarray, action_masks: np.ndarray | None = None,
                deterministic: bool = True) -> tuple[np.ndarray, None]:
        """The legal action with the highest logit (``MaskablePPO.predict(..., deterministic=True)``)."""
        if not deterministic:
            raise ValueError("the weights-only SB3 policy plays deterministically only")
        with torch.inference_mode():
            obs = torch.as_tensor(np.asarray(observation, dtype=np.float32).reshape(1, -1))
            logits = self.network(obs)[0]
            if action_masks is not None:
                logits = logits.masked_fill(~torch.as_tensor(np.asarray(action_masks, dtype=bool)), -torch.inf)
        return np.asarray(int(torch.argmax(logits))), None


def _member(archive: zipfile.ZipFile, name: str, limit: int, path: str) -> bytes:
    try:
        info = archive.getinfo(name)
    except KeyError:
        raise ValueError(f"{path} is not a loadable sb3-contrib MaskablePPO model: it has no {name!r}") from None
    if info.file_size > limit:
        raise ValueError(f"{path}: its {name!r} is {info.file_size:,} bytes, more than an SB3 model's ({limit:,})")
    return archive.read(info)


def _activation(data: dict[str, Any], path: str) -> type[nn.Module]:
    """The activation ``policy_kwargs`` names (SB3's default ``Tanh`` when it names none), read
    from the text SB3 writes beside a pickled entry, never from the pickle."""
    kwargs = data.get("policy_kwargs") or {}
    if not isinstance(kwargs, dict):
        raise _refuse(path, "its policy_kwargs are not readable")
    unknown = sorted(k for k in kwargs if not k.startswith(":") and k not in _PLAIN_KWARGS)
    if unknown:
        raise _refuse(path, f"its policy_kwargs set {', '.join(unknown)}")
    named = kwargs.get("activation_fn")
    if named is None:
        return nn.Tanh
    match = re.fullmatch(r"<class 'torch\.nn\.modules\.activation\.(\w+)'>", str(named))
    if match is None or match.group(1) not in ACTIVATIONS:
        raise _refuse(path, f"its activation {named!r} is not one of {', '.join(ACTIVATIONS)}")
    return ACTIVATIONS[match.group(1)]


def _actor(weights: dict[str, Any], activation: type[nn.Module], path: str) -> tuple[nn.Sequential, int, int]:
    """The policy network and ``action_net`` as one ``nn.Sequential``, its input and output sizes."""
    if not isinstance(weights, dict) or not all(isinstance(v, torch.Tensor) for v in weights.values()):
        raise ValueError(f"{path} is not a loadable sb3-contrib MaskablePPO model: policy.pth holds no weights")
    layers: dict[int, dict[str, torch.Tensor]] = {}
    for key, tensor in weights.items():
        found = _POLICY_LAYER.match(key)
        if found:
            layers.setdefault(int(found.group(1)), {})[found.group(2)] = tensor
        elif key not in ("action_net.weight", "action_net.bias") and not _IGNORED.match(key):
            raise _refuse(path, f"its policy has a part the default MlpPolicy has not ({key})")
    if "action_net.weight" not in weights or "action_net.bias" not in weights:
        raise _refuse(path, "its policy has no action_net")
    if sorted(layers) != list(range(0, 2 * len(layers), 2)) or any(set(p) != {"weight", "bias"} for p in layers.values()):
        raise _refuse(path, "its policy network is not a chain of linear layers")
    modules: list[nn.Module] = []
    for index in sorted(layers):
        linear = nn.Linear(layers[index]["weight"].shape[1], layers[index]["weight"].shape[0])
        modules += [linear, activation()]
    out = weights["action_net.weight"]
    modules.append(nn.Linear(out.shape[1], out.shape[0]))
    network = nn.Sequential(*modules)
    state = {f"{2 * i}.{kind}": layers[index][kind] for i, index in enumerate(sorted(layers)) for kind in ("weight", "bias")}
    state |= {f"{2 * len(layers)}.weight": out, f"{2 * len(layers)}.bias": weights["action_net.bias"]}
    try:
        network.load_state_dict({k: v.float() for k, v in state.items()})
    except RuntimeError as e:
        raise ValueError(f"{path}: its policy's layers do not fit together: {' '.join(str(e).split())}") from None
    first = network[0]
    assert isinstance(first, nn.Linear)
    return network, first.in_features, out.shape[0]


def read_sb3_policy(path: str | os.PathLike[str]) -> SB3Policy:
    """The actor of a ``MaskablePPO`` ``.zip`` read as data (see the module docstring). A file
    that is not such a zip is a ``ValueError``; a policy it cannot rebuild an
    :class:`UntrustedModelError` saying why."""
    name = os.fspath(path)
    try:
        with zipfile.ZipFile(path) as archive:
            data_bytes = _member(archive, "data", MAX_DATA_BYTES, name)
            policy_bytes = _member(archive, "policy.pth", MAX_POLICY_BYTES, name)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError) as e:
        raise ValueError(f"{name} is not a loadable sb3-contrib MaskablePPO model: {e}") from None
    try:
        data = json.loads(data_bytes)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as e:
        raise ValueError(f"{name} is not a loadable sb3-contrib MaskablePPO model: its data is not JSON ({e})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{name} is not a loadable sb3-contrib MaskablePPO model: its data is not a JSON object")
    policy_class = data.get("policy_class")
    if not isinstance(policy_class, dict) or policy_class.get("__module__") != MASKABLE_POLICIES:
        raise _refuse(name, "its policy is not an sb3-contrib maskable policy")
    activation = _activation(data, name)
    try:
        weights = torch.load(io.BytesIO(policy_bytes), map_location="cpu", weights_only=True)
    except Exception as e:  # torch raises many types for a damaged or foreign file; weights_only refuses code
        raise ValueError(f"{name}: its policy.pth is not plain weights ({type(e).__name__}: "
                         f"{(str(e).splitlines() or [''])[0]})") from None
    network, obs_size, num_actions = _actor(weights, activation, name)
    return SB3Policy(network, obs_size, num_actions)


__all__ = ["SB3Policy", "UntrustedModelError", "read_sb3_policy"]
