"""Search distillation (training.algorithms.distill, configs/distill_australian.yaml): the datasets
it plays once and reads again, the targets it fits, the run's resume, and a network that makes
every decision itself."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("numba")
pytest.importorskip("pyarrow")
pytest.importorskip("torch")

import torch

import five_hundred_env
from agents.base import DECISION_KINDS
from agents.heuristic import agent as heuristic_agent
from agents.heuristic import compiled as heuristic_compiled
from agents.neural import PolicyOnlyError, load_agent, load_training_weights, read_checkpoint
from agents.policy_files import export_policy
from agents.search import pimc
from agents.weights_files import DISTILL_FORMAT
from five_hundred_env.dataset import DatasetError, open_dataset
from five_hundred_env.observation import ObservationEncoder
from five_hundred_env.rules import make_rules
from training.algorithms.distill import chunk_folder, decision_kinds, search_targets, train_distill
from training.settings.config import ConfigError, load_config
from training.settings.distill_config import DatasetSource, DistillConfig

RECIPE = Path(__file__).parent.parent / "configs" / "distill_australian.yaml"


def tiny(tmp_path: Path, *more: str) -> DistillConfig:
    """The recipe made tiny: a few deals of each source, a small network, short evaluations."""
    overrides = [f"data.dir={tmp_path / 'data'}", "data.imitation.agent=pretrained",
                 "data.imitation.deals=150", "data.imitation.chunk_deals=100",
                 "data.search.agent=pimc:worlds=2", "data.search.deals=8", "data.search.chunk_deals=4",
                 "network.hidden_sizes=[32]", "fit.imitation_decisions=3000", "fit.search_epochs=2",
                 "fit.batch_size=256", "evaluation.deals=6", "evaluation.games=1", "evaluation.interval=1",
                 f"logging.dir={tmp_path / 'runs'}",
                 "logging.run_name=tiny", "logging.tensorboard=false", *more]
    return load_config(RECIPE, overrides, model=DistillConfig)


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, DistillConfig, list[str]]:
    folder = tmp_path_factory.mktemp("distill")
    config = tiny(folder)
    lines: list[str] = []
    train_distill(config, log=lines.append)
    return folder, config, lines


def test_the_recipe_names_the_search_and_chooses_on_games() -> None:
    config = load_config(RECIPE, model=DistillConfig)
    bids_file = "agents/pretrained/stages/australian_bids.pt"  # the network shipped before the distilled one
    assert config.data.search.agent == f"pimc:base={bids_file}" and config.data.imitation.agent == bids_file
    assert config.evaluation.games > 0 and config.evaluation.opponent == "heuristic"
    # the bids stay the imitation's: fitted to the search's deal values they win points and lose games
    assert sorted(config.fit.kinds) == sorted(set(DECISION_KINDS) - {"bid"})


def test_a_run_plays_each_chunk_once_and_a_second_run_reads_them(tiny_run, tmp_path: Path) -> None:
    folder, _, lines = tiny_run
    chunks = sorted(p.name for p in (folder / "data").iterdir())
    assert chunks == sorted(["australian-pretrained-uniform-s7-100", "australian-pretrained-uniform-s8-50",
                             "australian-pimc_worlds=2-uniform-s1000-4", "australian-pimc_worlds=2-uniform-s1001-4"])
    assert sum(line.startswith("played ") for line in lines) == 4
    again: list[str] = []
    train_distill(tiny(folder, "logging.run_name=again", "fit.search_epochs=1"), log=again.append)
    assert not any(line.startswith("played ") for line in again)  # the chunks were there


def test_a_chunk_of_another_agent_under_the_same_name_is_refused(tiny_run, tmp_path: Path) -> None:
    import shutil

    folder, config, _ = tiny_run
    source, rules = config.data.search, make_rules("australian")
    theirs = chunk_folder(folder / "data", rules, source, "uniform", source.seed, source.chunk_deals)
    ours = chunk_folder(tmp_path / "data", rules, source, "uniform", source.seed, source.chunk_deals)
    shutil.copytree(theirs, ours)
    manifest = json.loads((ours / "manifest.json").read_text())
    (ours / "manifest.json").write_text(json.dumps({**manifest, "agent": "heuristic"}))
    with pytest.raises(DatasetError, match="other rules or agent"):
        train_distill(tiny(tmp_path), log=lambda _: None)


def test_the_final_network_is_the_stage_that_won_most_and_names_its_recipe(tiny_run) -> None:
    folder, _, _ = tiny_run
    run = folder / "runs" / "tiny"
    report = json.loads((run / "final_eval.json").read_text())
    stages = report["evaluations"]
    assert [s["fit"] for s in stages] == ["imitation", "search", "search"]
    best = max(stages, key=lambda s: (s["report"]["games"]["win_rate_a"], s["report"]["score_diff_per_deal"]["mean"]))
    assert report["chosen_stage"] == best["stage"]
    data = torch.load(run / "final.pt", weights_only=True)
    assert data["provenance"]["config"]["data"]["search"]["agent"] == "pimc:worlds=2"
    budget = data["provenance"]["budget"]
    manifests = [json.loads(m.read_text()) for m in (folder / "data").glob("*/manifest.json")]
    assert budget["decisions"] > 3000 and budget["data_cpu_s"] == round(sum(m["cpu_seconds"] for m in manifests), 3) > 0
    assert data["model_spec"]["advice"] == "none"


def test_evaluations_come_every_interval_epochs_and_after_the_last(tiny_run) -> None:
    folder, _, _ = tiny_run
    train_distill(tiny(folder, "logging.run_name=sparse", "fit.search_epochs=3", "evaluation.interval=2"),
                  log=lambda _: None)
    report = json.loads((folder / "runs" / "sparse" / "final_eval.json").read_text())
    assert [(s["fit"], s["epoch"]) for s in report["evaluations"]] == [("imitation", 0), ("search", 1), ("search", 2)]


def test_a_stopped_run_resumes_to_the_same_network(tmp_path: Path, tiny_run) -> None:
    folder, _, _ = tiny_run
    whole = tiny(folder, "logging.run_name=whole", "evaluation.deals=0")
    train_distill(whole, log=lambda _: None)
    parts = tiny(folder, "logging.run_name=parts", "evaluation.deals=0")
    stopped: list[str] = []
    train_distill(parts, stop_after_stages=2, log=stopped.append)
    assert any("continue with --resume" in line for line in stopped)
    train_distill(parts, resume=True, log=lambda _: None)
    a = torch.load(folder / "runs" / "whole" / "final.pt", weights_only=True)["model"]
    b = torch.load(folder / "runs" / "parts" / "final.pt", weights_only=True)["model"]
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_a_runs_latest_checkpoint_plays_and_exports_before_the_run_ends(tiny_run) -> None:
    folder, _, _ = tiny_run
    train_distill(tiny(folder, "logging.run_name=midway", "evaluation.deals=0"), stop_after_stages=1,
                  log=lambda _: None)
    latest = folder / "runs" / "midway" / "checkpoints" / "latest.pt"
    saved = torch.load(latest, weights_only=True)
    assert saved["format"] == DISTILL_FORMAT and saved["counters"]["stage"] == 1
    agent = load_agent(latest, "australian")  # the imitation stage, playing as it stands
    assert all(torch.equal(agent.model.state_dict()[k], saved["model"][k]) for k in saved["model"])
    out = folder / "midway.pt"
    export_policy(latest, out, dtype="float32")
    exported = read_checkpoint(out, "australian")
    assert exported["policy_only"] and exported["provenance"]["source"] == "latest.pt"
    assert all(torch.equal(exported["model"][k], saved["model"][k]) for k in saved["model"])
    # a learner that needs a critic (PPO's warm start, expert iteration) is told where to go instead
    with pytest.raises(PolicyOnlyError, match=r"search distillation's checkpoint .* network\.init"):
        load_training_weights(agent.model, read_checkpoint(latest), latest)


def test_a_chunk_of_a_long_agent_spec_is_named_within_a_file_names_length_and_by_the_whole_spec() -> None:
    rules = make_rules("australian")
    short = DatasetSource(agent="pimc:base=heuristic,worlds=8", deals=10)
    assert chunk_folder("data", rules, short, "uniform", 3, 10).name == "australian-pimc_base=heuristic_worlds=8-uniform-s3-10"
    net = "agents/pretrained/scratch/stages/australian_finetune.pt"
    spec = f"pimc:base={net},rollout={net},play_inference=false,min_gain=100000,worlds=8,bid_worlds=8,kitty_worlds="
    names = {chunk_folder("data", rules, DatasetSource(agent=spec + str(w), deals=10), "uniform", 3, 10).name
             for w in (4, 8)}
    assert len(names) == 2 and all(len(name) <= 160 for name in names)  # the ends differ: so do the names


def test_search_targets_put_the_soft_share_on_the_best_candidates_and_only_the_choice_elsewhere() -> None:
    values = torch.full((2, 5), float("nan"))
    values[0, 1], values[0, 3] = 10.0, 40.0  # a searched decision: candidates 1 and 3
    batch = {"action": torch.tensor([1, 2]), "values": values}
    target = search_targets(batch, 5, temperature=10.0, soft_weight=0.5)
    assert torch.allclose(target.sum(1), torch.ones(2))
    soft = torch.softmax(torch.tensor([10.0, 40.0]) / 10.0, 0)
    assert torch.allclose(target[0, [1, 3]], 0.5 * soft + torch.tensor([0.5, 0.0]))
    assert target[0, [0, 2, 4]].sum() == 0
    assert target[1].tolist() == [0, 0, 1, 0, 0]  # not searched: the choice alone


class FixedQ:
    """A stand-in Q-network whose legal Q-values are given."""

    def __init__(self, q: torch.Tensor) -> None:
        self.values = q

    def legal_q(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.values.masked_fill(~mask, -torch.inf)


def test_the_q_fit_matches_the_differences_between_searched_candidates_in_the_networks_units() -> None:
    from training.algorithms.distill_q import q_loss

    values = torch.full((3, 4), float("nan"))
    values[0, :3] = torch.tensor([100.0, -50.0, 20.0])  # three candidates searched, the fourth not
    values[1, 1] = 30.0  # one candidate: no difference to fit
    values[2, [0, 2]] = torch.tensor([0.0, 200.0])
    mask = torch.ones(3, 4, dtype=torch.bool)
    batch = {"obs": torch.zeros(3, 1), "mask": mask, "values": values}
    weight = torch.ones(3)
    # Q = value / 100 plus any constant per decision, anything where nothing was searched: no loss.
    exact = torch.nan_to_num(values / 100, nan=7.0) + torch.tensor([[3.0], [-1.0], [0.5]])
    loss, choice = q_loss(FixedQ(exact), batch, weight, value_scale=100.0)
    assert float(loss) == pytest.approx(0.0, abs=1e-9)
    assert choice.tolist() == exact.argmax(1).tolist()
    # Row 2's gap one unit too small: each candidate 0.5 off the centred target, over the 2 rows that count.
    off = exact.clone()
    off[2, 2] -= 1.0
    loss, _ = q_loss(FixedQ(off), batch, weight, value_scale=100.0)
    assert float(loss) == pytest.approx(0.25 / 2)
    loss, _ = q_loss(FixedQ(off), batch, torch.tensor([1.0, 1.0, 0.0]), value_scale=100.0)
    assert float(loss) == pytest.approx(0.0, abs=1e-9)  # a row of weight 0 (a kind not fitted) is left out


@pytest.mark.parametrize("preset", ["australian", "five_handed"])
def test_decision_kinds_read_the_phase_of_each_observation(preset: str) -> None:
    """§10.5's partner call is a discard-kind decision (the contractor's, after the kitty)."""
    rules = make_rules(preset)
    encoder = ObservationEncoder(rules)
    env = five_hundred_env.env(rules=preset)
    seen = set()
    rng = np.random.default_rng(0)
    for deal in range(6):
        env.reset(seed=deal)
        for _ in env.agent_iter():
            obs, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            kind = DECISION_KINDS[int(decision_kinds(torch.from_numpy(obs["observation"][None]), rules)[0])]
            phase = int(np.argmax(encoder.decode(obs["observation"])["phase"]))
            expected = {0: "bid", 1: "discard", 2: "nominate", 3: "play", 5: "discard"}[phase]
            assert kind == expected
            seen.add(kind)
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert {"bid", "play"} <= seen


def forbid_the_heuristic_and_the_search(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every entry point of the heuristic (the Python agent, the compiled policy, its play-outs) and
    the search's ``act`` raise from now on."""
    def forbidden(*args, **kwargs):
        raise AssertionError("called at play")

    for owner, name in [(heuristic_agent.HeuristicAgent, "act"), (heuristic_compiled.HeuristicPolicy, "act_batch"),
                        (heuristic_compiled.HeuristicPolicy, "act_engine"), (heuristic_compiled, "play_out"),
                        (pimc.PIMCAgent, "act")]:
        monkeypatch.setattr(owner, name, forbidden)


def phases_played(spec: str, preset: str, deals: int, seats: set[int]) -> set[int]:
    """The phases (the observation's one-hot index) in which ``spec`` decided, playing ``seats``
    (random legal play in the others) over ``deals`` deals."""
    from agents.registry import make_agent

    agent = make_agent(spec, preset, 0)
    encoder = ObservationEncoder(make_rules(preset))
    env = five_hundred_env.env(rules=preset)
    rng = np.random.default_rng(1)
    phases = set()
    for deal in range(deals):
        env.reset(seed=deal)
        for name in env.agent_iter():
            obs, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
            elif env.possible_agents.index(name) in seats:
                if obs["action_mask"].sum() > 1:
                    phases.add(int(np.argmax(encoder.decode(obs["observation"])["phase"])))
                env.step(agent.act(obs))
            else:
                env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    return phases


def test_the_distilled_network_plays_with_the_heuristic_and_the_search_made_to_raise(
        tiny_run, monkeypatch: pytest.MonkeyPatch) -> None:
    folder, _, _ = tiny_run
    forbid_the_heuristic_and_the_search(monkeypatch)
    # the network in seat 0, random play in the others (so that deals are played out): it bid and played cards
    assert {0, 3} <= phases_played(str(folder / "runs" / "tiny" / "final.pt"), "australian", 12, {0})


DISTILLED = ["australian", "italian_3p", "french_46", "two_handed", "five_handed", "six_handed"]
"""The presets whose shipped network is distilled (configs/distill_<preset>.yaml)."""


@pytest.mark.parametrize("preset", DISTILLED)
def test_a_shipped_distilled_network_makes_every_decision_itself(monkeypatch: pytest.MonkeyPatch, preset: str) -> None:
    """The distilled `pretrained` networks bid, discard and play (and call a partner, §10's
    five-handed game) with the heuristic and the search made to raise."""
    from agents.pretrained import load_pretrained

    assert load_pretrained(preset, seed=0).model.advice == "none"  # no heuristic advice input
    forbid_the_heuristic_and_the_search(monkeypatch)
    rules = make_rules(preset)
    assert {0, 1, 3} <= phases_played("pretrained", preset, 16, set(range(rules.num_players)))


def test_a_run_can_start_from_a_network_and_refuses_one_that_differs(tiny_run, tmp_path: Path) -> None:
    from training.algorithms.distill import build_policy

    folder, _, _ = tiny_run
    final = folder / "runs" / "tiny" / "final.pt"
    rules = make_rules("australian")
    started = build_policy(tiny(tmp_path, f"network.init={final}"), rules)
    stored = torch.load(final, weights_only=True)["model"]
    assert all(torch.equal(started.state_dict()[k], stored[k].float()) for k in stored)
    fresh = build_policy(tiny(tmp_path), rules)
    assert not torch.equal(fresh.actor[0].weight, started.actor[0].weight)
    with pytest.raises(ValueError, match=r"differs from the config's in hidden_sizes \(\[32\], the config \[64\]\)"):
        build_policy(tiny(tmp_path, f"network.init={final}", "network.hidden_sizes=[64]"), rules)
    # a round over it: no imitation fit, the search's epochs from its weights, on the earlier search data and
    # (data.more_search) deals where the network plays and the search only values its candidates (DAgger)
    dagger = f"pimc:worlds=2,base={final},min_gain=100000"
    lines: list[str] = []
    train_distill(tiny(folder, f"network.init={final}", "logging.run_name=round2", "fit.imitation_decisions=0",
                       "fit.search_epochs=1", f"data.more_search=[{{agent: '{dagger}', deals: 4, seed: 2000}}]"),
                  log=lines.append)
    report = json.loads((folder / "runs" / "round2" / "final_eval.json").read_text())
    assert [s["fit"] for s in report["evaluations"]] == ["search"]
    assert sum(line.startswith("played ") for line in lines) == 1  # the new round's chunk; the earlier were there
    data = open_dataset(chunk_folder(folder / "data", rules, DatasetSource(agent=dagger, deals=4, chunk_deals=4),
                                     "uniform", 2000, 4))
    network = load_agent(final)
    for batch in data.batches(batch_size=512, seed=0):  # the network's own choices, each valued by the search
        assert np.array_equal(network.act_batch(batch.obs, batch.mask), batch.action)
        assert (~np.isnan(batch.values)).sum(1).max() >= 2
    # its export names the network it started from, with that file's own provenance (recipe, budget)
    exported = export_policy(folder / "runs" / "round2" / "final.pt", tmp_path / "round2.pt")
    assert exported["init"]["file"] == str(final)
    assert exported["init"]["sha256"] == hashlib.sha256(final.read_bytes()).hexdigest()
    assert exported["init"]["provenance"] == torch.load(final, weights_only=True)["provenance"]
    assert "init" not in export_policy(final, tmp_path / "round1.pt")  # a run from a random start


def test_configs_that_fit_nothing_or_mix_without_imitation_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="nothing to fit"):
        tiny(tmp_path, "fit.imitation_decisions=0", "fit.search_epochs=0")
    with pytest.raises(ConfigError, match=r"fit\.mix adds imitation batches"):
        tiny(tmp_path, "data.imitation.deals=0", "fit.mix=1")
    assert tiny(tmp_path, "data.imitation.deals=0", "fit.mix=0").fit.mix == 0
    with pytest.raises(ConfigError, match=r"network\.form q refits a DMC network"):
        tiny(tmp_path, "network.form=q", "network.init=agents/pretrained/scratch/australian.pt")  # an imitation fit
    with pytest.raises(ConfigError, match=r"network\.form q refits a DMC network"):
        tiny(tmp_path, "network.form=q", "fit.imitation_decisions=0", "fit.mix=0")  # no network.init
