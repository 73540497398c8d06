"""Ensembles of networks (``agents.ensemble``, ``five-hundred export A.pt B.pt OUT.pt``): one
network whose logits are the mean of its members'."""

from __future__ import annotations

import hashlib

import pytest

torch = pytest.importorskip("torch")

from network_helpers import Comparing, trained_like, write_checkpoint  # noqa: E402

import five_hundred_env  # noqa: E402
from agents.ensemble import NEVER, ensemble_network  # noqa: E402
from agents.heuristic import HeuristicAgent  # noqa: E402
from agents.neural import ActorCritic, advice_weights, load_agent, read_checkpoint  # noqa: E402
from agents.play import play_deal  # noqa: E402
from agents.weights_files import save_checkpoint  # noqa: E402
from five_hundred_env.rules import make_rules  # noqa: E402
from training.cli import main  # noqa: E402

torch.set_num_threads(1)


def _inputs(model: ActorCritic, rows: int = 64) -> torch.Tensor:
    """Observation-like inputs: ones and zeros, with the advice one-hot at the end."""
    g = torch.Generator().manual_seed(1)
    x = (torch.rand(rows, model.spec()["obs_size"], generator=g) < 0.2).float()
    advice = torch.nn.functional.one_hot(torch.randint(model.num_actions, (rows,), generator=g), model.num_actions)
    return torch.cat([x, advice.float()], 1)


def test_an_ensembles_logits_are_the_mean_of_its_members_whatever_their_widths():
    members = [trained_like("australian", seed, hidden) for seed, hidden in ((0, (32, 16)), (1, (8, 24)), (2, (16, 16)))]
    merged = ensemble_network(members, make_rules("australian"))
    assert merged.spec()["hidden_sizes"] == [56, 56] and merged.critic is None
    x = _inputs(members[0])
    mean = torch.stack([m.residual_logits(x) for m in members]).mean(0)
    torch.testing.assert_close(merged.residual_logits(x), mean, rtol=1e-5, atol=1e-5)
    # not a coincidence of small numbers: the members disagree by more than the tolerance
    assert (members[0].residual_logits(x) - members[1].residual_logits(x)).abs().max() > 0.1


def test_an_ensemble_refuses_members_that_do_not_share_input_actions_and_depth():
    rules = make_rules("australian")
    with pytest.raises(ValueError, match="at least two"):
        ensemble_network([trained_like("australian")], rules)
    with pytest.raises(ValueError, match="number of hidden layers"):
        ensemble_network([trained_like("australian", 0, (32, 32)), trained_like("australian", 1, (32,))], rules)
    with pytest.raises(ValueError, match="obs_size"):
        ensemble_network([trained_like("australian"), trained_like("italian_3p")], rules)


def test_the_export_of_several_checkpoints_writes_their_ensemble(tmp_path, capsys):
    """``export A.pt B.pt OUT.pt --threshold bid=0``: the file plays the ensemble, its bids from the
    mean estimates and every kind not named the heuristic's choice; its provenance names each
    member and its sha256. Without ``--threshold``, or with members of other presets, nothing is
    written and the error says why."""
    rules = make_rules("australian")
    sources = [write_checkpoint(tmp_path / f"m{seed}.pt", "australian", seed) for seed in (0, 1)]
    out = tmp_path / "ens.pt"
    assert main(["export", *map(str, sources), str(out), "--threshold", "bid=0", "--dtype", "float32"]) == 0
    assert "the ensemble of 2 networks" in capsys.readouterr().out
    data = read_checkpoint(out)
    members = data["provenance"]["members"]
    assert [m["source"] for m in members] == ["m0.pt", "m1.pt"]
    assert members[1]["sha256"] == hashlib.sha256(sources[1].read_bytes()).hexdigest()
    agent = load_agent(out)
    assert advice_weights(agent.model) == {"bid": 0.0, "discard": NEVER, "nominate": NEVER, "play": NEVER}
    comparing = Comparing(agent, HeuristicAgent(rules, seed=0))
    env = five_hundred_env.env(rules=rules, episode="deal")
    for seed in range(3):
        play_deal(env, [comparing] * 4, seed=seed)
    agreed = comparing.agreed_by_kind
    assert agreed["play"] and all(agreed["play"]) and not all(agreed["bid"])
    assert main(["export", *map(str, sources), str(tmp_path / "no.pt")]) == 2
    assert "its networks take advice, and each one's threshold was chosen for it alone: give the ensemble's own " \
           "(export's --threshold" in capsys.readouterr().err
    other = write_checkpoint(tmp_path / "three.pt", "italian_3p")
    assert main(["export", str(sources[0]), str(other), str(tmp_path / "no.pt"), "--threshold", "30"]) == 2
    assert "other rules" in capsys.readouterr().err and not (tmp_path / "no.pt").exists()


def test_an_ensemble_of_networks_without_advice_needs_no_threshold_and_refuses_one(tmp_path, capsys):
    """Plain PPO networks (no heuristic input) have no threshold: their ensemble is exported
    without one, and ``--threshold`` is refused in one line that says why (not first "needs
    --threshold", then "takes no advice")."""
    rules = make_rules("australian")
    members = [ActorCritic(**{**trained_like("australian", seed).spec(), "advice": "none"}) for seed in (0, 1)]
    sources = []
    for seed, member in enumerate(members):
        path = tmp_path / f"ppo{seed}.pt"
        save_checkpoint(path, {"rules": rules.to_dict(), "model_spec": member.spec(), "model": member.state_dict()})
        sources.append(str(path))
    out = tmp_path / "ens.pt"
    assert main(["export", *sources, str(out), "--dtype", "float32"]) == 0
    assert "the ensemble of 2 networks" in capsys.readouterr().out
    merged = load_agent(out).model
    assert merged.advice == "none" and read_checkpoint(out)["provenance"]["advice_weight"] is None
    x = torch.randint(0, 2, (16, members[0].spec()["obs_size"])).float()
    mean = torch.stack([m.residual_logits(x) for m in members]).mean(0)
    torch.testing.assert_close(merged.residual_logits(x), mean, rtol=1e-5, atol=1e-5)
    assert main(["export", *sources, str(tmp_path / "no.pt"), "--threshold", "30"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "takes no advice" in err and "needs" not in err, err
    assert not (tmp_path / "no.pt").exists()
