"""Foreign files are data, never code: an SB3 ``.zip`` is read as weights (its pickled objects
never unpickled) unless the user says ``trusted:PATH``; crafted files whose pickles would write a
marker file never get to write it, through the registry or the command line."""

from __future__ import annotations

import base64
import io
import itertools
import json
import pickle
import zipfile
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from agents.registry import SB3Agent, agent_factory, load_sb3_model, make_agent  # noqa: E402
from agents.sb3_policy import SB3Policy, read_sb3_policy  # noqa: E402
from five_hundred_env.env import raw_env  # noqa: E402
from training.cli import main  # noqa: E402

OBS, ACTIONS = 1399, 80  # the australian preset's observation size and actions


class WritesMarker:
    """Unpickling this runs ``open(marker, "w")``: the payload of every crafted file here."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return exec, (f"open({str(self.marker)!r}, 'w').write('ran')",)


def serialized(payload: object) -> dict:
    """An SB3 ``data`` entry as ``data_to_json`` writes one for an object it cannot JSON-encode."""
    return {":type:": "<class 'abc.ABCMeta'>", ":serialized:": base64.b64encode(pickle.dumps(payload)).decode(),
            "__module__": "sb3_contrib.common.maskable.policies"}


def policy_weights(hidden: tuple[int, ...] = (16,), extra: dict | None = None) -> dict:
    torch.manual_seed(0)
    sizes, weights = [OBS, *hidden], {}
    for i, (a, b) in enumerate(itertools.pairwise(sizes)):
        weights[f"mlp_extractor.policy_net.{2 * i}.weight"] = torch.randn(b, a) * 0.1
        weights[f"mlp_extractor.policy_net.{2 * i}.bias"] = torch.randn(b) * 0.1
    weights["action_net.weight"] = torch.randn(ACTIONS, sizes[-1])
    weights["action_net.bias"] = torch.randn(ACTIONS)
    weights["value_net.weight"], weights["value_net.bias"] = torch.randn(1, sizes[-1]), torch.randn(1)
    return weights | (extra or {})


def crafted_zip(path: Path, marker: Path, *, policy: object | None = None, policy_kwargs: object = None) -> Path:
    """A MaskablePPO-shaped zip whose every pickled ``data`` entry writes ``marker`` when unpickled."""
    data = {"policy_class": serialized(WritesMarker(marker)), "observation_space": serialized(WritesMarker(marker)),
            "action_space": serialized(WritesMarker(marker)), "lr_schedule": serialized(WritesMarker(marker)),
            "policy_kwargs": policy_kwargs if policy_kwargs is not None else {}}
    buffer = io.BytesIO()
    torch.save(policy_weights() if policy is None else policy, buffer)
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("data", json.dumps(data))
        archive.writestr("policy.pth", buffer.getvalue())
        archive.writestr("pytorch_variables.pth", pickle.dumps(WritesMarker(marker)))
    return path


@pytest.fixture
def marker(tmp_path) -> Path:
    return tmp_path / "marker"


def test_a_crafted_zip_plays_from_its_weights_and_its_pickles_never_run(tmp_path, marker):
    path = crafted_zip(tmp_path / "evil.zip", marker)
    agent = make_agent(str(path), "australian")
    assert isinstance(agent, SB3Agent) and isinstance(agent.model, SB3Policy)
    env = raw_env(rules="australian")
    env.reset(seed=1)
    observation = env.observe(env.agent_selection)
    assert observation["action_mask"][agent.act(observation)]  # a legal action, chosen by the weights
    assert not marker.exists()


def test_a_policy_pth_that_is_a_pickle_of_code_is_refused_and_never_run(tmp_path, marker):
    path = crafted_zip(tmp_path / "evil.zip", marker, policy={"action_net.weight": WritesMarker(marker)})
    with pytest.raises(ValueError, match=r"its policy\.pth is not plain weights"):
        make_agent(str(path), "australian")
    assert not marker.exists()


@pytest.mark.parametrize(("policy_kwargs", "extra", "why"), [
    ({":type:": "<class 'dict'>", ":serialized:": "", "features_extractor_class": "<class 'x.Mine'>"}, None,
     "its policy_kwargs set features_extractor_class"),
    ({":type:": "<class 'dict'>", ":serialized:": "", "activation_fn": "<class 'x.MyActivation'>"}, None,
     "its activation"),
    (None, {"features_extractor.cnn.0.weight": torch.zeros(1)}, "a part the default MlpPolicy has not"),
])
def test_a_policy_it_cannot_rebuild_is_refused_naming_the_trusted_spec(tmp_path, marker, policy_kwargs, extra, why):
    path = crafted_zip(tmp_path / "custom.zip", marker, policy=policy_weights(extra=extra), policy_kwargs=policy_kwargs)
    with pytest.raises(ValueError, match=why) as e:
        make_agent(str(path), "australian")
    assert f"give the agent as trusted:{path}" in str(e.value) and "runs code pickled inside the file" in str(e.value)
    assert not marker.exists()


def test_the_commands_never_run_a_crafted_zip(tmp_path, marker, capsys):
    path = crafted_zip(tmp_path / "evil.zip", marker, policy_kwargs={":type:": "<class 'dict'>", ":serialized:": "",
                                                                     "activation_fn": "<class 'os.system'>"})
    assert main(["evaluate", str(path), "random", "--deals", "1", "--no-progress"]) == 2
    assert "trusted:" in capsys.readouterr().err
    assert main(["watch", str(path), "random"]) == 2
    assert not marker.exists()


def test_not_a_zip_is_a_clear_error(tmp_path):
    bad = tmp_path / "bad.zip"
    bad.write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="not a loadable sb3-contrib MaskablePPO model"):
        read_sb3_policy(bad)


def test_trusted_names_sb3_files_only(tmp_path):
    checkpoint = tmp_path / "final.pt"
    checkpoint.write_bytes(b"x")
    with pytest.raises(ValueError, match=r"trusted: is for SB3 \.zip files only"):
        agent_factory(f"trusted:{checkpoint}")


# -- a real MaskablePPO --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def real_zip(tmp_path_factory):
    sb3_contrib = pytest.importorskip("sb3_contrib")
    from torch import nn

    from five_hundred_env import SingleAgentEnv

    model = sb3_contrib.MaskablePPO("MlpPolicy", SingleAgentEnv(seat=0, rules="australian"), n_steps=64, batch_size=32,
                                    seed=0, device="cpu", policy_kwargs={"net_arch": {"pi": [32], "vf": [16]},
                                                                         "activation_fn": nn.ReLU})
    path = tmp_path_factory.mktemp("sb3") / "relu.zip"
    model.save(path)
    return path, model


def test_the_weights_only_policy_plays_as_maskableppo_predict(real_zip):
    path, model = real_zip
    policy = read_sb3_policy(path)
    env = raw_env(rules="australian")
    compared = 0
    for seed in range(3):
        env.reset(seed=seed)
        for _agent in env.agent_iter():
            observation, _reward, over, cut, _info = env.last()
            if over or cut:
                env.step(None)
                continue
            mask = observation["action_mask"].astype(bool)
            expected, _ = model.predict(observation["observation"], action_masks=mask, deterministic=True)
            assert int(policy.predict(observation["observation"], action_masks=mask)[0]) == int(expected)
            compared += 1
            env.step(int(expected))
    assert compared > 100


def test_trusted_loads_through_sb3_contrib(real_zip):
    path, _model = real_zip
    import sb3_contrib

    assert isinstance(load_sb3_model(path, trusted=True), sb3_contrib.MaskablePPO)
    agent = make_agent(f"trusted:{path}", "australian")
    assert isinstance(agent.model, sb3_contrib.MaskablePPO)
    assert agent_factory(f"trusted:{path}@play").label == f"trusted:{path}@play"


def test_the_crafted_payload_is_live_through_sb3_contribs_own_loader(tmp_path, marker):
    # What the default never does: sb3-contrib unpickles the data entries first (so these tests'
    # markers would appear without the weights-only reader).
    pytest.importorskip("sb3_contrib")
    with pytest.raises(ValueError):
        load_sb3_model(crafted_zip(tmp_path / "evil.zip", marker), trusted=True)
    assert marker.read_text() == "ran"
