"""The one agent registry: names, Agent subclasses, functions, checkpoint and SB3 paths, SB3 models;
a factory's label is the agent's one name in every report."""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest

from agents import Agent, HeuristicAgent, RandomAgent, agent_factory, make_agent, register_agent
from agents.play import play_deal
from agents.registry import SB3Agent, registered_agents, unregister_agent
from five_hundred_env.env import raw_env
from five_hundred_env.rules import make_rules
from training.cli import main
from training.evaluation.evaluate import duplicate_match


class FirstLegalAgent(Agent):
    """Always the lowest legal action id."""

    name = "first_legal"

    def act(self, observation):
        return int(np.flatnonzero(observation["action_mask"])[0])


@pytest.fixture
def registered():
    """Names registered by a test are forgotten after it."""
    names: list[str] = []
    yield names
    for name in names:
        unregister_agent(name)


def test_a_registered_subclass_is_used_everywhere_a_spec_is(registered, tmp_path, capsys):
    register_agent("first", FirstLegalAgent)
    registered.append("first")
    assert "first" in registered_agents()
    agent = make_agent("First", "italian_3p", seed=2)
    assert isinstance(agent, FirstLegalAgent) and agent.rules == make_rules("italian_3p")
    factory = agent_factory("first")
    assert factory.label == "first"
    report = duplicate_match("australian", factory, agent_factory("random"), deals=2, seed=0)
    assert report.agent_a == "first" and report.agent_b == "random"
    assert main(["evaluate", "first", "heuristic", "--deals", "1", "--no-progress"]) == 0
    assert "first (A) vs heuristic (B)" in capsys.readouterr().out


def test_a_function_factory_gets_the_rules_and_seed(registered):
    calls = []

    def build(rules, seed):
        calls.append((rules.preset, seed))
        return RandomAgent(rules, seed)

    register_agent("logged_random", build)
    registered.append("logged_random")
    make_agent("logged_random", "french_46", seed=9)
    assert calls == [("french_46", 9)]


def test_bad_registrations_are_refused(registered):
    with pytest.raises(ValueError, match="already registered"):
        register_agent("heuristic", FirstLegalAgent)
    with pytest.raises(ValueError, match="already registered"):
        register_agent("random", FirstLegalAgent, replace=True)  # the builtins stay what they are
    with pytest.raises(ValueError, match="no spaces or slashes"):
        register_agent("runs/x", FirstLegalAgent)
    with pytest.raises(ValueError, match="no spaces or slashes"):
        register_agent("", FirstLegalAgent)
    with pytest.raises(ValueError, match="cannot register int"):
        register_agent("seven", 7)
    with pytest.raises(ValueError, match="is not a file"):
        register_agent("ghost", "/no/such/checkpoint.pt")
    register_agent("twice", FirstLegalAgent)
    registered.append("twice")
    with pytest.raises(ValueError, match="already registered"):
        register_agent("twice", RandomAgent)
    register_agent("twice", RandomAgent, replace=True)
    assert isinstance(make_agent("twice", "australian"), RandomAgent)
    with pytest.raises(ValueError, match="cannot be unregistered"):
        unregister_agent("heuristic")
    assert isinstance(make_agent("heuristic", "australian"), HeuristicAgent)


def test_a_factory_that_returns_no_agent_is_refused(registered):
    register_agent("broken", lambda rules, seed: "not an agent")
    registered.append("broken")
    with pytest.raises(ValueError, match="returned str, not an Agent"):
        make_agent("broken", "australian")


def test_a_checkpoint_path_is_registered_and_labelled_by_its_name(registered, tmp_path, monkeypatch):
    loaded = []
    fake = types.ModuleType("agents.dmc")  # what loads any checkpoint (a DMC one, or agents.neural's)

    def load_checkpoint_agent(path, rules=None, seed=None):
        loaded.append(path)
        return RandomAgent(rules, seed)

    fake.load_checkpoint_agent = load_checkpoint_agent
    monkeypatch.setitem(sys.modules, "agents.dmc", fake)
    ckpt = tmp_path / "final.pt"
    ckpt.write_bytes(b"weights")
    register_agent("champion", str(ckpt))
    registered.append("champion")
    assert isinstance(make_agent("champion", "australian"), RandomAgent)
    assert loaded == [str(ckpt)]
    assert agent_factory("champion").label == "champion"
    assert agent_factory(str(ckpt)).label == str(ckpt)  # unregistered: the path as given, in every table


@pytest.fixture(scope="module")
def sb3_zip(tmp_path_factory):
    """An untrained sb3-contrib MaskablePPO on the australian single-seat env, saved as a .zip."""
    sb3_contrib = pytest.importorskip("sb3_contrib")
    from five_hundred_env import SingleAgentEnv

    model = sb3_contrib.MaskablePPO("MlpPolicy", SingleAgentEnv(seat=0, rules="australian"), n_steps=64,
                                    batch_size=32, seed=0, device="cpu")
    path = tmp_path_factory.mktemp("sb3") / "maskable.zip"
    model.save(path)
    return path, model


def test_an_sb3_zip_plays_through_predict_with_the_mask(sb3_zip, registered):
    path, model = sb3_zip
    agent = make_agent(str(path), "australian")
    assert isinstance(agent, SB3Agent)
    env = raw_env(rules="australian")
    env.reset(seed=4)
    obs = env.observe(env.agent_selection)
    expected, _ = model.predict(obs["observation"], action_masks=obs["action_mask"].astype(bool), deterministic=True)
    assert agent.act(obs) == int(expected)
    factory = agent_factory(str(path))  # loads the model once, for every seat
    deal = play_deal(env, [factory("australian", s) for s in range(4)], seed=4)
    assert deal.is_over  # every action it chose was legal (the environment raises otherwise)
    register_agent("my_ppo", str(path))
    registered.append("my_ppo")
    register_agent("my_ppo_model", model)
    registered.append("my_ppo_model")
    assert isinstance(make_agent("my_ppo", "australian"), SB3Agent)
    assert make_agent("my_ppo_model", "australian").model is model


def test_an_sb3_model_for_another_preset_or_a_bad_zip_is_refused(sb3_zip, tmp_path):
    path, _model = sb3_zip
    with pytest.raises(ValueError, match="the italian_3p preset has"):
        make_agent(str(path), "italian_3p")
    bad = tmp_path / "bad.zip"
    bad.write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="not a loadable sb3-contrib MaskablePPO model"):
        make_agent(str(bad), "australian")


def test_unknown_specs_name_the_registered_agents():
    with pytest.raises(ValueError, match=r"unknown agent 'grandmaster': expected one of heuristic, pimc, pretrained, random"):
        agent_factory("grandmaster")
