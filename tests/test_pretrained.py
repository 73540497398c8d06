"""Policy files (``five-hundred export``) and the shipped networks (``agents/pretrained``, the
builtin agent ``pretrained``). Only ``test_every_preset_ships_a_network`` reads the real files;
every other test exports tiny networks into a monkeypatched folder."""

from __future__ import annotations

import builtins
import hashlib
import subprocess
import sys
import warnings

import pytest

torch = pytest.importorskip("torch")

from network_helpers import Comparing, flip_a_byte, trained_like, write_checkpoint  # noqa: E402

import five_hundred_env  # noqa: E402
from agents import make_agent  # noqa: E402
from agents import pretrained as pretrained_module  # noqa: E402
from agents.heuristic import HeuristicAgent  # noqa: E402
from agents.neural import (  # noqa: E402
    NEVER,
    ActorCritic,
    NeuralAgent,
    PolicyOnlyError,
    load_agent,
    load_training_weights,
    read_checkpoint,
)
from agents.play import play_deal  # noqa: E402
from agents.policy_files import export_policy  # noqa: E402
from agents.pretrained import available_presets, load_pretrained, pretrained_path  # noqa: E402
from agents.weights_files import POLICY_FORMAT, TENSORS_DIGEST, CheckpointError, save_checkpoint  # noqa: E402
from five_hundred_env.rules import PRESETS, Rules, make_rules  # noqa: E402
from training.cli import main  # noqa: E402

torch.set_num_threads(1)


@pytest.fixture
def shipped(tmp_path, monkeypatch):
    """A pretrained folder holding tiny exported networks for australian and italian_3p only."""
    folder = tmp_path / "pretrained"
    folder.mkdir()
    for preset in ("australian", "italian_3p"):
        export_policy(write_checkpoint(tmp_path / f"{preset}_final.pt", preset), folder / f"{preset}.pt")
    (folder / "README.txt").write_text("not a network")
    monkeypatch.setattr(pretrained_module, "PRETRAINED_DIR", folder)
    return folder


def plays_a_deal(agent_spec: str, preset: str, seed: int = 0):
    rules = make_rules(preset)
    env = five_hundred_env.env(rules=rules, episode="deal")
    deal = play_deal(env, [make_agent(agent_spec, rules, seed=s) for s in range(rules.num_players)], seed=seed)
    assert deal.is_over  # the environment raises on an illegal action
    return deal


def test_every_preset_ships_a_network():
    """The real files: every preset's network loads from the package and plays a deal legally."""
    assert available_presets() == sorted(PRESETS)
    for preset in PRESETS:
        assert pretrained_path(preset).is_file(), f"agents/pretrained/{preset}.pt is missing"
        data = read_checkpoint(pretrained_path(preset), preset)
        assert data["policy_only"] and Rules.from_dict(data["rules"]) == make_rules(preset)
        assert isinstance(load_pretrained(preset), NeuralAgent)
        plays_a_deal("pretrained", preset, seed=1)


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_an_exported_network_plays_as_its_source(tmp_path, dtype):
    """Over every decision of random deals (some 300) the policy file chooses the source's action:
    always in float32; in float16 at least 99.5% of the time, as rounding may flip a near-tie
    (measured, docs/agents.md: none in 7,074 decisions of trained networks, one near-tie in 1,979
    of an untrained one)."""
    source = write_checkpoint(tmp_path / "final.pt")
    out = tmp_path / "policy.pt"
    export_policy(source, out, dtype=dtype)
    both = Comparing(load_agent(source), load_agent(out))
    env = five_hundred_env.env(rules="australian", episode="deal")
    for seed in range(8):
        play_deal(env, [both] * 4, seed=seed)
    assert both.decisions >= 250
    assert both.agreed == both.decisions if dtype == "float32" else both.agreed >= 0.995 * both.decisions
    assert out.stat().st_size < source.stat().st_size / (3.5 if dtype == "float16" else 1.8)
    assert not list(tmp_path.glob("*.tmp"))  # written atomically


def test_a_policy_file_holds_the_actor_and_its_provenance(tmp_path):
    source = write_checkpoint(tmp_path / "final.pt")
    out = tmp_path / "policy.pt"
    export_policy(source, out, note="round 1")
    raw = torch.load(out, weights_only=True)
    assert raw["format"] == POLICY_FORMAT
    assert not [name for name in raw["model"] if name.startswith("critic.")]
    assert {t.dtype for name, t in raw["model"].items() if name != "input_scale"} == {torch.float16}
    provenance = raw["provenance"]
    assert provenance["source"] == "final.pt" and provenance["note"] == "round 1" and provenance["dtype"] == "float16"
    assert provenance["sha256"] == hashlib.sha256(source.read_bytes()).hexdigest()
    data = read_checkpoint(out)
    assert data["policy_only"] and not read_checkpoint(source)["policy_only"]
    assert {t.dtype for t in data["model"].values()} == {torch.float32}
    original = trained_like("australian").state_dict()
    for name, tensor in data["model"].items():  # float16 rounding only
        assert torch.allclose(tensor, original[name], rtol=1e-3, atol=1e-4), name
    exact = tmp_path / "exact.pt"
    export_policy(out, exact, dtype="float32")  # a policy file exports again
    assert read_checkpoint(exact)["model"].keys() == data["model"].keys()
    again = torch.load(exact, weights_only=True)["provenance"]
    assert again["source"] == "policy.pt" and again["from"] == provenance  # the recipe it was made by stays
    assert "from" not in provenance  # a checkpoint has no provenance to carry


def test_a_policy_file_has_no_critic(tmp_path):
    out = tmp_path / "policy.pt"
    export_policy(write_checkpoint(tmp_path / "final.pt"), out)
    agent = load_agent(out)
    assert agent.model.policy_only and agent.model.critic is None
    spec = agent.model.spec()
    obs = torch.zeros((1, spec["obs_size"] + spec["num_actions"]), dtype=torch.int8)
    with pytest.raises(PolicyOnlyError, match="holds the actor only: it has no critic"):
        agent.model.value(obs, torch.zeros((1, spec["critic_extra"])))
    with pytest.raises(PolicyOnlyError, match="no critic"):
        agent.model.act(obs, torch.ones((1, spec["num_actions"]), dtype=torch.bool))
    with pytest.raises(PolicyOnlyError, match=r"is a policy file .* training needs the critic"):
        load_training_weights(trained_like("australian"), read_checkpoint(out), out)


def test_policy_files_are_checked_like_checkpoints(tmp_path):
    out = tmp_path / "policy.pt"
    export_policy(write_checkpoint(tmp_path / "final.pt"), out)
    with pytest.raises(CheckpointError, match=r"trained for the 'australian' preset and cannot play 'italian_3p'"):
        load_agent(out, rules="italian_3p")
    with pytest.warns(UserWarning, match=r"other rule options than these: slam_bonus=False \(trained True\)"):
        load_agent(out, rules=make_rules("australian", slam_bonus=False))
    data = out.read_bytes()
    (tmp_path / "truncated.pt").write_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointError, match="not a readable checkpoint"):
        load_agent(tmp_path / "truncated.pt")
    raw = torch.load(out, weights_only=True)
    del raw[TENSORS_DIGEST]  # as a file from before digests were recorded: its weights are checked all the same
    raw["model"]["actor.0.weight"][0, 0] = float("nan")
    torch.save(raw, tmp_path / "nan.pt")
    with pytest.raises(CheckpointError, match=r"non-finite weights \(NaN or inf\) in actor\.0\.weight"):
        load_agent(tmp_path / "nan.pt")
    del raw["provenance"]
    torch.save(raw, tmp_path / "anonymous.pt")
    with pytest.raises(CheckpointError, match="missing 'provenance': not a complete five-hundred policy file"):
        load_agent(tmp_path / "anonymous.pt")
    with pytest.raises(CheckpointError, match="not a readable checkpoint"):
        export_policy(tmp_path / "truncated.pt", tmp_path / "never.pt")
    with pytest.raises(ValueError, match="dtype must be one of float16, float32"):
        export_policy(out, tmp_path / "never.pt", dtype="int8")
    assert not (tmp_path / "never.pt").exists()


def test_a_byte_flipped_in_a_policy_files_weights_is_refused_by_every_command(tmp_path, capsys):
    out = tmp_path / "policy.pt"
    export_policy(write_checkpoint(tmp_path / "final.pt"), out)
    flip_a_byte(out, torch.load(out, weights_only=True)["model"]["actor.0.weight"])
    with pytest.raises(CheckpointError, match="its tensors do not match the sha256 recorded when it was written"):
        load_agent(out)
    assert main(["evaluate", str(out), "random", "--deals", "1", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"five-hundred: error: {out}: its tensors do not match") and err.count("\n") == 1, err
    assert main(["export", str(out), str(tmp_path / "again.pt")]) == 2
    assert "do not match the sha256" in capsys.readouterr().err and not (tmp_path / "again.pt").exists()


def test_the_export_command(tmp_path, capsys):
    source = write_checkpoint(tmp_path / "final.pt")
    assert main(["export", str(source), str(tmp_path / "p.pt"), "--note", "from the CLI"]) == 0
    assert "wrote " + str(tmp_path / "p.pt") in capsys.readouterr().out
    assert read_checkpoint(tmp_path / "p.pt")["provenance"]["note"] == "from the CLI"
    assert main(["export", str(source), str(tmp_path / "p32.pt"), "--dtype", "float32"]) == 0
    assert (tmp_path / "p32.pt").stat().st_size > (tmp_path / "p.pt").stat().st_size
    assert main(["export", str(tmp_path / "missing.pt"), str(tmp_path / "x.pt")]) == 2
    assert main(["export", str(source), str(tmp_path / "no" / "nor" / "x.pt")]) == 2
    err = capsys.readouterr().err
    assert "missing.pt does not exist" in err and "does not exist" in err.splitlines()[-1]
    with pytest.raises(SystemExit):
        main(["export", str(source), str(tmp_path / "x.pt"), "--dtype", "bfloat16"])
    assert not (tmp_path / "x.pt").exists()


def test_an_exported_threshold_replaces_the_fits_and_changes_what_the_network_plays(tmp_path):
    """``export --threshold POINTS``: the advice weight (in units of 100 points) is the one given,
    kept in the provenance; a threshold no estimate beats leaves every decision to the advice
    (the heuristic's action), a threshold of 0 leaves it to the network's own estimates."""
    source = write_checkpoint(tmp_path / "final.pt")
    assert main(["export", str(source), str(tmp_path / "own.pt")]) == 0
    assert main(["export", str(source), str(tmp_path / "high.pt"), "--threshold", "10000"]) == 0
    assert main(["export", str(source), str(tmp_path / "zero.pt"), "--threshold", "0"]) == 0
    own, high = read_checkpoint(tmp_path / "own.pt"), read_checkpoint(tmp_path / "high.pt")
    assert own["provenance"]["advice_weight"] is None and high["provenance"]["advice_weight"] == NEVER
    assert float(high["model"]["advice_weight"]) == NEVER
    rules = make_rules("australian")
    env = five_hundred_env.env(rules=rules, episode="deal")
    for name, follows in (("zero.pt", False), ("high.pt", True)):
        agent = Comparing(load_agent(tmp_path / name), HeuristicAgent(rules, seed=0))
        for seed in range(3):
            play_deal(env, [agent] * 4, seed=seed)
        assert (agent.agreed == agent.decisions) == follows, name
    with pytest.raises(ValueError, match="finite"):
        export_policy(source, tmp_path / "nan.pt", advice_weight=float("nan"))


def test_an_exported_threshold_per_kind_sets_each_kinds_and_refuses_what_does_not_fit(tmp_path, capsys):
    """``export --threshold bid=0,play=10000`` on a network with one advice weight per phase:
    the bids follow the network's own estimates, the card play the heuristic (the kinds not named
    keep theirs); a scalar network refuses per-kind thresholds, and a malformed one is one line."""
    rules = make_rules("australian")
    model = trained_like("australian")
    split = ActorCritic(**{**model.spec(), "phase_slice": five_hundred_env.env(rules=rules).unwrapped.encoder.phase_slice()})
    split.load_state_dict({**model.state_dict(), "advice_weight": torch.full((5,), 4.0)})
    source = tmp_path / "split.pt"
    save_checkpoint(source, {"rules": rules.to_dict(), "model_spec": split.spec(), "model": split.state_dict()})
    assert main(["export", str(source), str(tmp_path / "kinds.pt"), "--threshold", "bid=0,play=10000"]) == 0
    assert read_checkpoint(tmp_path / "kinds.pt")["provenance"]["advice_weight"] == \
        {"bid": 0.0, "discard": 4.0, "nominate": 4.0, "play": NEVER}
    agent = Comparing(load_agent(tmp_path / "kinds.pt"), HeuristicAgent(rules, seed=0))
    env = five_hundred_env.env(rules=rules, episode="deal")
    for seed in range(3):
        play_deal(env, [agent] * 4, seed=seed)
    agreed = agent.agreed_by_kind
    assert agreed["play"] and all(agreed["play"]) and not all(agreed["bid"])
    single = write_checkpoint(tmp_path / "single.pt")
    assert main(["export", str(single), str(tmp_path / "no.pt"), "--threshold", "bid=20"]) == 2
    assert "give one number" in capsys.readouterr().err
    assert main(["export", str(source), str(tmp_path / "no.pt"), "--threshold", "bid=lots"]) == 2
    assert "expected POINTS or KIND=POINTS" in capsys.readouterr().err and not (tmp_path / "no.pt").exists()


@pytest.mark.parametrize(("threshold", "words"), [
    ("1e300", "1e+300 is not from 0 to 10000 points"),  # was torch's overflow traceback
    ("10001", "10001 is not from 0 to 10000 points"),
    ("-5", "-5 is not from 0 to 10000 points"),
    ("bid=20,play=-0.5", "play=-0.5 is not from 0 to 10000 points"),
    ("nan", "nan is not from 0 to 10000 points"),
    ("bid=1,bid=2", "bid given twice in 'bid=1,bid=2'; give each kind once"),
    ("bid=1,play=2,play=3,bid=4", "bid and play given twice"),
])
def test_export_refuses_a_threshold_out_of_range_or_a_kind_given_twice_in_one_line(tmp_path, capsys, threshold, words):
    source = write_checkpoint(tmp_path / "final.pt")
    assert main(["export", str(source), str(tmp_path / "out.pt"), f"--threshold={threshold}"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"five-hundred: error: --threshold: {words}") and err.count("\n") == 1, err
    assert not (tmp_path / "out.pt").exists()


def test_the_shipped_folder_is_read_through_importlib_resources(shipped):
    assert available_presets() == ["australian", "italian_3p"]
    assert pretrained_path("australian").name == "australian.pt"
    agent = make_agent("pretrained", "italian_3p", seed=3)
    assert isinstance(agent, NeuralAgent) and agent.rules == make_rules("italian_3p")
    plays_a_deal("pretrained", "australian", seed=2)
    plays_a_deal("pretrained@play", "italian_3p", seed=2)


def test_a_preset_without_a_network_names_those_with_one(shipped):
    with pytest.raises(ValueError, match=r"no pretrained network for the 'french_46' preset: the presets with one are "
                                         r"australian, italian_3p"):
        make_agent("pretrained", "french_46")


def test_other_rule_options_load_with_a_warning_naming_them(shipped):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the preset's own options: no warning
        load_pretrained("australian")
    with pytest.warns(UserWarning, match=r"slam_bonus=False \(trained True\)"):
        agent = load_pretrained(make_rules("australian", slam_bonus=False))
    assert agent.rules == make_rules("australian", slam_bonus=False)


def test_pretrained_works_from_every_command(shipped, capsys, monkeypatch):
    assert main(["evaluate", "pretrained", "heuristic", "--deals", "1", "--no-progress"]) == 0
    assert "pretrained (A) vs heuristic (B)" in capsys.readouterr().out
    assert main(["watch", "pretrained", "heuristic", "--seed", "3"]) == 0
    assert "player_0 (pretrained), player_1 (heuristic)" in capsys.readouterr().out
    monkeypatch.setattr(builtins, "input", lambda prompt="": "quit")
    assert main(["play", "--opponents", "pretrained", "--seed", "1"]) == 0
    assert "the others are pretrained agents" in capsys.readouterr().out


def test_the_registry_imports_no_torch_until_pretrained_is_built():
    code = ("import sys; from agents.registry import agent_factory, make_agent; agent_factory('pretrained'); "
            "agent_factory('pretrained@play'); make_agent('heuristic@play', 'australian'); print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
