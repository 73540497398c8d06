"""The tabula-rasa recipe (configs/scratch_australian.yaml, training.algorithms.dmc's curriculum):
no heuristic anywhere in its training, the last-bidder rule and the trick reward it learns under,
and the shipped ``scratch`` agent."""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("numba")
pytest.importorskip("torch")

from agents.heuristic import agent as heuristic_agent
from agents.heuristic import compiled as heuristic_compiled
from five_hundred_env.actions import MISERE, OPEN_MISERE, PASS
from five_hundred_env.observation import ObservationEncoder
from five_hundred_env.rules import make_rules
from five_hundred_env.vector import BatchEngine
from training.algorithms.dmc import train_dmc
from training.evaluation import dmc_evaluation
from training.rollouts.curriculum import Auction, TrickCredit, uniform_legal
from training.settings.config import load_config
from training.settings.dmc_config import DmcConfig

RECIPE = Path(__file__).parent.parent / "configs" / "scratch_australian.yaml"


def pass_when_allowed(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Every seat passes whenever PASS is legal, else plays a random legal action."""
    return np.where(masks[:, PASS] != 0, PASS, uniform_legal(masks, rng))


def play_deals(engine: BatchEngine, auction: Auction, share: float, steps: int, seed: int) -> np.ndarray:
    """Step ``engine`` under the curriculum's mask with seats that pass whenever they may; the
    contract bid of every deal that ended (-1 when thrown in)."""
    rng = np.random.default_rng(seed)
    contracts = []
    for _ in range(steps):
        actions = pass_when_allowed(auction.masks(engine.masks), rng)
        auction.record(engine.masks, actions)
        result = engine.step(actions)
        contracts += engine.last_deal[result.deal_done, 0].tolist()
        auction.new_deals(result.deal_done, share, rng)
    return np.array(contracts)


@pytest.mark.parametrize("preset", ["australian", "italian_3p", "two_handed", "six_handed"])
def test_under_the_last_bidder_rule_no_deal_is_thrown_in(preset: str) -> None:
    """RULES.md §4: "If every player passes without a bid, the deal is thrown in". The curriculum
    takes PASS from the last seat that could bid, so seats that pass whenever they may still
    play every deal; without the rule (share 0) every such deal is thrown in."""
    rules = make_rules(preset)
    engine = BatchEngine(rules, 16, seed=3)
    engine.reset(seed=3)
    stuck = play_deals(engine, Auction(16, rules.num_players, 1.0), 1.0, 600, seed=1)
    assert len(stuck) > 20 and (stuck > PASS).all()
    engine.reset(seed=3)
    free = play_deals(engine, Auction(16, rules.num_players, 0.0), 0.0, 200, seed=1)
    assert len(free) > 20 and (free < 0).all()


def test_the_rule_takes_pass_only_from_the_last_bidder_before_any_bid() -> None:
    auction = Auction(3, 4, 1.0)
    masks = np.zeros((3, 80), dtype=np.int8)
    masks[:, :28] = 1  # the opening of an auction: PASS and every bid
    auction.passes[:] = [3, 2, 3]
    auction.bid[:] = [False, False, True]
    out = auction.masks(masks)
    assert out[:, PASS].tolist() == [0, 1, 1]  # three passes and no bid: the fourth must bid
    assert (out[:, 1:28] == 1).all() and masks[0, PASS] == 1  # the bids stay; the engine's mask is untouched
    auction.must_bid[0] = False  # a deal the rule does not hold in
    assert auction.masks(masks)[0, PASS] == 1


def test_the_rules_share_of_deals_and_the_trick_reward_fall_to_nothing() -> None:
    config = load_config(RECIPE, model=DmcConfig)
    cc = config.curriculum
    assert cc.last_bidder_bids(0) == 1.0 and cc.trick_reward_at(0) == cc.trick_reward > 0
    half_rule, half_trick = cc.last_bidder_bids_steps // 2, cc.trick_reward_steps // 2
    assert cc.last_bidder_bids(half_rule) == pytest.approx(0.5)
    assert cc.trick_reward_at(half_trick) == pytest.approx(cc.trick_reward / 2)
    assert cc.last_bidder_bids(cc.last_bidder_bids_steps) == 0.0 == cc.trick_reward_at(cc.trick_reward_steps)
    assert config.train.total_steps > max(cc.last_bidder_bids_steps, cc.trick_reward_steps)  # the real game at the end


def test_uniform_legal_draws_every_legal_action_and_nothing_else() -> None:
    masks = np.zeros((4000, 6), dtype=np.int8)
    masks[:, [1, 3, 4]] = 1
    masks[::2, 4] = 0
    drawn = uniform_legal(masks, np.random.default_rng(0))
    assert set(drawn[::2].tolist()) == {1, 3} and set(drawn[1::2].tolist()) == {1, 3, 4}
    counts = np.bincount(drawn[1::2], minlength=6)[[1, 3, 4]]
    assert counts.min() > 0.28 * 2000  # about a third each


def absolute_tricks(encoder: ObservationEncoder, obs: np.ndarray, seat: int) -> np.ndarray:
    """Tricks won by each absolute seat, from the observation of ``seat`` (its slices are relative)."""
    relative = encoder.decode(obs)["tricks_won"].sum(axis=1)
    return np.roll(relative, seat)


def test_each_trick_rewards_its_winners_side_and_a_misere_the_other_way() -> None:
    """§7: the trick's winner takes it; §8: a misère contractor must take no trick. Over random
    deals, the reward goes as each trick falls (nine of the ten seen), zero-sum between the
    sides, positive for the winner's side in a trick contract and negative in a misère."""
    rules = make_rules("australian")
    encoder = ObservationEncoder(rules)
    contract_at = encoder.layout["contract"][0]
    engine = BatchEngine(rules, 32, seed=5)
    engine.reset(seed=5)
    credit = TrickCredit(rules, 32)
    tricks_per_deal = np.zeros(32, dtype=np.int64)
    seen, misere_tricks = [], 0
    for _ in range(3000):
        contract = engine.obs[:, contract_at:contract_at + 27].copy()
        before = [absolute_tricks(encoder, engine.obs[b], int(engine.seat[b])) for b in range(32)]
        result = engine.step(engine.sample_actions())
        rewards = credit.won(result.obs, result.seat, result.deal_done)
        for b in np.flatnonzero(rewards.any(axis=1)):
            assert rewards[b].sum() == pytest.approx(0.0)  # zero-sum: +1 and -1 for the two sides of two seats
            assert rewards[b, 0] == rewards[b, 2] == -rewards[b, 1]
            misere = contract[b, MISERE - 1] or contract[b, OPEN_MISERE - 1]
            winner_side = int(np.argmax(rewards[b, :2]))
            # the side rewarded is the one that won (trick contract) or the one the misère suited
            winner = int(np.argmax(absolute_tricks(encoder, result.obs[b], int(result.seat[b])) - before[b]))
            assert (winner % 2 == winner_side) != bool(misere)
            misere_tricks += bool(misere)
            tricks_per_deal[b] += 1
        for b in np.flatnonzero(result.deal_done):
            if engine.last_deal[b, 0] >= 0:
                seen.append(int(tricks_per_deal[b]))
            tricks_per_deal[b] = 0
    assert len(seen) > 50 and set(seen) == {9}
    assert misere_tricks > 0


def test_trick_rewards_are_refused_where_the_sides_change_per_deal() -> None:
    from training.settings.config import ConfigError

    with pytest.raises(ConfigError, match="five-handed partner"):
        TrickCredit(make_rules("five_handed"), 4)


@contextlib.contextmanager
def heuristic_only_in_evaluation(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every entry point of the heuristic (the Python agent, the compiled policy and its
    play-outs) raises unless called from the run's evaluation; yields the calls made there."""
    calls: list[str] = []
    evaluating = [False]
    real = {"act": heuristic_agent.HeuristicAgent.act, "act_batch": heuristic_compiled.HeuristicPolicy.act_batch}

    def guarded(name: str):
        def call(*args, **kwargs):
            if not evaluating[0]:
                raise AssertionError(f"the heuristic's {name} was called in training")
            calls.append(name)
            return real[name](*args, **kwargs) if name in real else None
        return call

    def forbidden(name: str):
        def call(*args, **kwargs):
            raise AssertionError(f"the heuristic's {name} was called")
        return call

    real_evaluate = dmc_evaluation.evaluate

    def evaluation(*args, **kwargs):
        evaluating[0] = True
        try:
            return real_evaluate(*args, **kwargs)
        finally:
            evaluating[0] = False

    monkeypatch.setattr(heuristic_agent.HeuristicAgent, "act", guarded("act"))
    monkeypatch.setattr(heuristic_compiled.HeuristicPolicy, "act_batch", guarded("act_batch"))
    monkeypatch.setattr(heuristic_compiled.HeuristicPolicy, "act_engine", forbidden("act_engine"))
    monkeypatch.setattr(heuristic_compiled, "play_out", forbidden("play_out"))
    monkeypatch.setattr(dmc_evaluation, "evaluate", evaluation)
    yield calls


def test_a_tiny_run_of_the_recipe_uses_the_heuristic_only_to_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 34's rule: no heuristic anywhere in training (evaluations against it only report)."""
    overrides = ["train.total_steps=24000", "train.num_envs=16", "train.batch_size=2000", "train.minibatch_size=500",
                 "train.epsilon_decay_steps=10000", "curriculum.last_bidder_bids_steps=16000",
                 "curriculum.trick_reward_steps=16000", "network.hidden_sizes=[32,32]", "evaluation.interval=10000",
                 "evaluation.deals=4", "evaluation.final_deals=4", f"logging.dir={tmp_path}", "checkpoint.interval=8000"]
    config = load_config(RECIPE, overrides, model=DmcConfig)
    assert config.evaluation.opponents == ["random", "heuristic"]
    with heuristic_only_in_evaluation(monkeypatch) as calls:
        result = train_dmc(config, log=lambda _: None)
    assert result.global_step >= 24000
    assert "act" in calls  # the guard was live: the reports did play the heuristic


FINETUNE = Path(__file__).parent.parent / "configs" / "scratch_finetune_australian.yaml"
STAGE_ONE = Path(__file__).parent.parent / "agents" / "pretrained" / "scratch" / "stages" / "australian_dmc.pt"
STAGE_TWO = STAGE_ONE.with_name("australian_finetune.pt")


def test_the_second_phase_trains_the_first_phases_network_with_the_heuristic_only_to_report(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """configs/scratch_finetune_australian.yaml starts from the phase-1 network (no heuristic in its
    training either: this file's test above) and keeps the rule: the heuristic only reports."""
    import torch

    overrides = ["train.total_steps=6000", "train.num_envs=16", "train.batch_size=2000", "train.minibatch_size=500",
                 "evaluation.interval=4000", "evaluation.deals=4", "evaluation.final_deals=4", f"logging.dir={tmp_path}",
                 "checkpoint.interval=4000", f"network.init={STAGE_ONE}"]
    config = load_config(FINETUNE, overrides, model=DmcConfig)
    assert config.curriculum.last_bidder_bids(0) == 0 and config.curriculum.trick_reward_at(0) == 0  # the real game
    with heuristic_only_in_evaluation(monkeypatch) as calls:
        result = train_dmc(config, log=lambda _: None)
    assert result.global_step >= 6000 and "act" in calls
    start = torch.load(result.run_dir / "start.pt", weights_only=True)["model"]
    stage = torch.load(STAGE_ONE, weights_only=True)["model"]
    assert all(torch.equal(start[name], stage[name].float()) for name in stage)


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny run of the recipe (the network small), its folder."""
    folder = tmp_path_factory.mktemp("scratch_run")
    overrides = ["train.total_steps=8000", "train.num_envs=16", "train.batch_size=2000", "train.minibatch_size=500",
                 "curriculum.last_bidder_bids_steps=6000", "curriculum.trick_reward_steps=6000",
                 "network.hidden_sizes=[32,32]", "evaluation.interval=0", "evaluation.final_deals=0",
                 f"logging.dir={folder}", "logging.run_name=tiny", "checkpoint.interval=4000"]
    train_dmc(load_config(RECIPE, overrides, model=DmcConfig), log=lambda _: None)
    return folder / "tiny"


def q_values(agent: object, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
    import torch

    with torch.inference_mode():
        return agent.model.legal_q(torch.from_numpy(obs), torch.from_numpy(masks)).numpy()  # type: ignore[attr-defined]


def test_export_writes_a_dmc_policy_file_that_names_its_recipe_and_budget_and_plays_as_its_checkpoint(
        tiny_run: Path, tmp_path: Path) -> None:
    from agents.registry import make_agent
    from training.cli import main

    out = tmp_path / "scratch.pt"
    assert main(["export", str(tiny_run / "final.pt"), str(out), "--note", "tiny"]) == 0
    import torch

    data = torch.load(out, weights_only=True)
    provenance = data["provenance"]
    assert provenance["note"] == "tiny" and provenance["dtype"] == "float16"
    assert provenance["recipe"]["curriculum"]["last_bidder_bids_steps"] == 6000  # the recipe that made it
    assert provenance["budget"]["global_step"] >= 8000 and provenance["budget"]["cpu_s"] > 0
    assert all(t.dtype == torch.float16 for name, t in data["model"].items() if name != "input_scale")
    exported, trained = make_agent(str(out), "australian", 0), make_agent(str(tiny_run / "final.pt"), "australian", 0)
    engine = BatchEngine("australian", 64, seed=2)
    step = engine.reset(seed=2)
    for _ in range(60):  # every kind of decision: bids, discards, card play
        a, b = q_values(exported, step.obs, step.mask), q_values(trained, step.obs, step.mask)
        legal = step.mask.astype(bool)
        assert np.allclose(a[legal], b[legal], atol=2e-2)
        step = engine.step(exported.act_batch(step.obs, step.mask))


def test_the_scratch_agent_makes_every_decision_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    """The shipped network plays every decision kind (bids, discards, card play) with the heuristic made to raise."""
    import five_hundred_env
    from agents.pretrained import scratch_presets
    from agents.registry import make_agent

    assert "australian" in scratch_presets()
    encoder = ObservationEncoder(make_rules("australian"))
    phases = ("bidding", "discard", "nominate", "play")
    kinds: set[str] = set()
    with heuristic_only_in_evaluation(monkeypatch):
        agents = [make_agent("scratch", "australian", seat) for seat in range(4)]
        env = five_hundred_env.env(rules="australian")
        for deal in range(8):
            env.reset(seed=deal)
            for name in env.agent_iter():
                obs, _, terminated, truncated, _ = env.last()
                if terminated or truncated:
                    env.step(None)
                    continue
                phase = encoder.decode(obs["observation"])["phase"]
                if obs["action_mask"].sum() > 1:
                    kinds.add(phases[int(np.argmax(phase))])
                env.step(agents[env.possible_agents.index(name)].act(obs))
    assert {"bidding", "discard", "play"} <= kinds


def test_the_scratch_agent_is_a_vector_opponent_and_names_its_recipe() -> None:
    import torch

    from agents.pretrained import SCRATCH_DIR
    from agents.vector import vector_env

    env = vector_env("australian", num_envs=8, opponent="scratch", seed=0)
    env.reset(seed=0)
    deals = 0
    for _ in range(200):
        first_legal = np.argmax(env.action_masks(), axis=1)
        _, _, terminated, _, _ = env.step(first_legal)
        deals += int(terminated.sum())
    assert deals > 8  # the opponents played whole deals
    provenance = torch.load(SCRATCH_DIR / "australian.pt", weights_only=True)["provenance"]
    # the round (configs/scratch_dagger_australian.yaml) names phase 2, the network it started from, which
    # (configs/scratch_finetune_australian.yaml) names phase 1 in turn
    assert provenance["recipe"]["network"]["form"] == "q" and provenance["recipe"]["train"]["algorithm"] == "distill"
    assert provenance["budget"]["global_step"] > 0 and provenance["budget"]["data_cpu_s"] > 0
    phase_two = provenance["init"]
    assert phase_two["sha256"] == hashlib.sha256(STAGE_TWO.read_bytes()).hexdigest()
    assert phase_two["provenance"]["recipe"]["curriculum"]["last_bidder_bids_steps"] == 0
    phase_one = phase_two["provenance"]["init"]
    assert phase_one["sha256"] == hashlib.sha256(STAGE_ONE.read_bytes()).hexdigest()
    assert phase_one["provenance"]["recipe"]["curriculum"]["last_bidder_bids_steps"] > 0
    for budget in (phase_two["provenance"]["budget"], phase_one["provenance"]["budget"]):
        assert budget["cpu_s"] > 0 and budget["global_step"] > 0


def test_the_plot_of_a_dmc_run_draws_its_curves(tiny_run: Path, tmp_path: Path) -> None:
    from training.records.plot import plot_run

    out = plot_run(tiny_run, tmp_path / "curves.png")
    assert out.is_file() and out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 10_000


def test_the_trick_reward_goes_to_the_card_plays_alone() -> None:
    """The trick reward shapes card play: a bid or a discard of the same seat is left to the deal's result."""
    from training.algorithms.dmc import Decisions

    decisions = Decisions(num_games=1, obs_size=2)
    obs = np.zeros((1, 2), dtype=np.int8)
    decisions.add(obs, np.array([3]), np.array([0]), plays=np.array([False]))  # a bid of seat 0
    decisions.add(obs, np.array([40]), np.array([0]), plays=np.array([True]))  # a card of seat 0
    decisions.add(obs, np.array([41]), np.array([1]), plays=np.array([True]))  # a card of seat 1
    decisions.add_rewards(np.array([[0.5, -0.5, 0.5, -0.5]]))
    assert decisions.returns[:3].tolist() == [0.0, 0.5, -0.5]


def test_a_run_with_the_central_baseline_resumes_it_and_plays_without_it(tmp_path: Path) -> None:
    """``network.baseline: central``: the state's value network is saved in the training checkpoints
    and restored on resume; the agent (``final.pt``) is the Q-network alone."""
    import torch

    from agents.dmc import DMCAgent
    from agents.registry import make_agent

    overrides = ["train.total_steps=8000", "train.num_envs=16", "train.batch_size=2000", "train.minibatch_size=500",
                 "network.hidden_sizes=[32,32]", "network.baseline=central", "evaluation.interval=0",
                 "evaluation.final_deals=0", f"logging.dir={tmp_path}", "logging.run_name=central",
                 "checkpoint.interval=4000"]
    config = load_config(RECIPE, overrides, model=DmcConfig)
    stopped = train_dmc(config, stop_after_updates=2, log=lambda _: None)
    saved = torch.load(stopped.final_checkpoint, weights_only=True)
    assert saved["baseline_spec"]["obs_size"] > saved["model_spec"]["obs_size"]  # it reads the whole state
    messages: list[str] = []
    result = train_dmc(config, resume=True, log=messages.append)
    assert result.global_step >= 8000 and any("resumed" in m for m in messages)
    final = torch.load(result.final_checkpoint, weights_only=True)
    assert "baseline" not in final
    assert isinstance(make_agent(str(result.final_checkpoint), "australian", 0), DMCAgent)


SEARCH_RECIPE = Path(__file__).parent.parent / "configs" / "scratch_search_australian.yaml"


def test_the_second_stage_searches_and_distils_the_first_stage_network_alone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 34's rule for the recipe's second stage (the search over the stage-1 network,
    distilled): its data, its search's base and playouts, and the opponent that chooses the
    network are the stage-1 network; a tiny run calls no heuristic at all."""
    from training.algorithms.distill import train_distill
    from training.settings.distill_config import DistillConfig

    recipe = load_config(SEARCH_RECIPE, model=DistillConfig)
    stage_one = "agents/pretrained/scratch/stages/australian_dmc.pt"
    assert (Path(__file__).parent.parent / stage_one).is_file()
    search = recipe.data.search.agent
    assert search.startswith("pimc:") and f"base={stage_one}" in search and f"rollout={stage_one}" in search
    assert "play_inference=false" in search and "inference=true" not in search
    assert recipe.data.imitation.agent == stage_one and recipe.evaluation.opponent == stage_one
    small = search.replace("worlds=8,bid_worlds=8,kitty_worlds=8", "worlds=2,bid_worlds=2,kitty_worlds=2")
    assert small != search
    overrides = [f"data.dir={tmp_path / 'data'}", "data.imitation.deals=60", "data.imitation.chunk_deals=60",
                 f"data.search.agent={small}", "data.search.deals=2", "data.search.chunk_deals=2",
                 "network.hidden_sizes=[16]", "fit.imitation_decisions=600", "fit.search_epochs=1", "fit.batch_size=128",
                 "evaluation.deals=2", "evaluation.games=1", f"logging.dir={tmp_path / 'runs'}", "logging.run_name=tiny",
                 "logging.tensorboard=false"]
    monkeypatch.chdir(Path(__file__).parent.parent)  # the recipe names the stage-1 file from the project root
    config = load_config(SEARCH_RECIPE, overrides, model=DistillConfig)
    with heuristic_only_in_evaluation(monkeypatch) as calls:
        train_distill(config, log=lambda _: None)
    assert calls == [] and (tmp_path / "runs" / "tiny" / "final.pt").is_file()


DAGGER_RECIPE = Path(__file__).parent.parent / "configs" / "scratch_dagger_australian.yaml"


def test_a_round_of_search_over_the_network_refits_its_q_values_with_no_heuristic(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 34's rule for the round of search over the phase-2 network: the search's base and
    playouts, the network refitted and the opponent that chooses it are that network; a tiny run
    calls no heuristic at all, and its final.pt is a DMC network that exports and plays."""
    from agents.dmc import DMCAgent, export_dmc_policy
    from agents.registry import make_agent
    from training.algorithms.distill import train_distill
    from training.settings.distill_config import DistillConfig

    recipe = load_config(DAGGER_RECIPE, model=DistillConfig)
    network = "agents/pretrained/scratch/stages/australian_finetune.pt"
    root = Path(__file__).parent.parent
    assert (root / network).is_file()
    search = recipe.data.search.agent
    assert f"base={network}" in search and f"rollout={network}" in search and "play_inference=false" in search
    assert recipe.network.form == "q" and recipe.network.init == network and recipe.evaluation.opponent == network
    assert recipe.data.imitation.deals == 0 and recipe.fit.kinds == ["bid", "discard", "nominate", "play"]
    small = search.replace("worlds=8,bid_worlds=8,kitty_worlds=8", "worlds=2,bid_worlds=2,kitty_worlds=2")
    assert small != search
    overrides = [f"data.dir={tmp_path / 'data'}", f"data.search.agent={small}",
                 "data.search.deals=2", "data.search.chunk_deals=2", "data.workers=1", "fit.search_epochs=2",
                 "fit.batch_size=64", "evaluation.deals=2", "evaluation.games=1", f"logging.dir={tmp_path / 'runs'}",
                 "logging.run_name=tiny", "logging.tensorboard=false"]
    monkeypatch.chdir(root)  # the recipe names the network from the project root
    config = load_config(DAGGER_RECIPE, overrides, model=DistillConfig)
    with heuristic_only_in_evaluation(monkeypatch) as calls:
        result = train_distill(config, log=lambda _: None)
    assert calls == []
    assert isinstance(make_agent(str(result.final_checkpoint), "australian", 0), DMCAgent)
    provenance = export_dmc_policy(result.final_checkpoint, tmp_path / "round.pt", note="tiny")
    assert provenance["recipe"]["network"]["form"] == "q" and provenance["init"]["file"] == network
    assert provenance["budget"]["global_step"] > 0 and provenance["budget"]["data_cpu_s"] > 0
    assert isinstance(make_agent(str(tmp_path / "round.pt"), "australian", 0), DMCAgent)
