"""The actor-critic network and the neural agent: masks, legality, checkpoints."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import numpy as np  # noqa: E402
from network_helpers import flip_a_byte  # noqa: E402

import five_hundred_env  # noqa: E402
from agents.central import central_features, central_size, hidden_cards  # noqa: E402
from agents.neural import (  # noqa: E402
    MAX_PARAMETERS,
    ActorCritic,
    NeuralAgent,
    advice_weights,
    load_agent,
    parameter_count,
    policy_input,
    set_advice_weights,
)
from agents.weights_files import TENSORS_DIGEST, CheckpointError, save_checkpoint, tensors_digest  # noqa: E402
from five_hundred_env import make_rules  # noqa: E402
from five_hundred_env.rules import PRESETS as RULE_PRESETS  # noqa: E402

torch.set_num_threads(1)
PRESETS = tuple(RULE_PRESETS)  # every preset, the two-, five- and six-player ones included


def network(preset: str = "australian", seed: int = 0, critic_extra: int = 0, advice: str = "none") -> ActorCritic:
    torch.manual_seed(seed)
    env = five_hundred_env.env(rules=preset)
    rules = make_rules(preset)
    return ActorCritic(env.unwrapped.encoder.size, int(env.action_space("player_0").n), [32, 32],
                       critic_extra=critic_extra, num_sides=rules.num_sides, advice=advice)


def peaked(model: ActorCritic) -> ActorCritic:
    """Blow up the policy head so the unmasked logits are extreme: masking must still win."""
    with torch.no_grad():
        model.actor[-1].weight.mul_(5000.0)
        model.actor[-1].bias.copy_(torch.linspace(-300, 300, model.actor[-1].bias.numel()))
    return model


def random_batch(model: ActorCritic, rows: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    g = np.random.default_rng(seed)
    spec = model.spec()
    obs = torch.from_numpy(g.integers(0, 2, (rows, spec["obs_size"]), dtype=np.int8))
    mask = g.random((rows, spec["num_actions"])) < 0.05
    mask[np.arange(rows), g.integers(0, spec["num_actions"], rows)] = True  # at least one legal action
    return obs, torch.from_numpy(mask)


def test_masked_sampling_never_picks_an_illegal_action():
    model = peaked(network())
    obs, mask = random_batch(model, 4000, seed=1)
    with torch.no_grad():
        actions, logp, _ = model.act(obs, mask)
        probs = torch.softmax(model.masked_logits(obs, mask), dim=-1)
    assert mask[torch.arange(len(actions)), actions].all()
    assert (probs[~mask] == 0).all()  # exactly zero, not merely small
    assert torch.allclose(probs.sum(-1), torch.ones(len(probs)))
    assert torch.isfinite(logp).all()


def test_the_update_recomputes_log_probs_under_the_same_mask():
    model = peaked(network())
    obs, mask = random_batch(model, 500, seed=2)
    with torch.no_grad():
        actions, logp, value = model.act(obs, mask)
        logp2, entropy, value2 = model.evaluate_actions(obs, mask, actions)
        illegal = torch.argmin(mask.int(), dim=-1)  # some action each row may not take
        logp_illegal, _, _ = model.evaluate_actions(obs, mask, illegal)
    assert torch.equal(logp, logp2) and torch.equal(value, value2)
    assert torch.isfinite(entropy).all() and (entropy >= 0).all()
    rows = ~mask[torch.arange(len(illegal)), illegal]
    assert (logp_illegal[rows] < -1e7).all()  # probability exp(-1e8): zero


def test_a_single_legal_action_is_certain():
    model = network()
    obs = torch.zeros(3, model.spec()["obs_size"], dtype=torch.int8)
    mask = torch.zeros(3, model.spec()["num_actions"], dtype=torch.bool)
    mask[:, 7] = True
    actions, logp, _ = model.act(obs, mask)
    _, entropy, _ = model.evaluate_actions(obs, mask, actions)
    assert (actions == 7).all() and torch.allclose(logp, torch.zeros(3)) and torch.allclose(entropy, torch.zeros(3))


def test_gradients_stay_finite_with_masks():
    model = peaked(network())
    obs, mask = random_batch(model, 64, seed=3)
    actions, _, _ = model.act(obs, mask)
    logp, entropy, value = model.evaluate_actions(obs, mask, actions)
    (-(logp.mean()) - entropy.mean() + value.pow(2).mean()).backward()
    assert all(torch.isfinite(p.grad).all() for p in model.parameters() if p.grad is not None)


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("greedy", [True, False])
def test_neural_agent_plays_only_legal_actions(preset, greedy):
    agent = NeuralAgent(preset, seed=5, model=peaked(network(preset)), greedy=greedy)
    env = five_hundred_env.env(rules=preset)  # raises on any illegal action
    for deal in range(6):
        env.reset(seed=deal)
        for _ in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            env.step(None if term or trunc else agent.act(obs))


@pytest.mark.parametrize("preset", PRESETS)
def test_a_fresh_network_with_heuristic_advice_plays_the_heuristic(preset):
    # Residual learning starts from the adviser: greedy play is the heuristic's, move for move,
    # and sampling still gives the other legal actions some probability (it explores).
    from agents.heuristic import HeuristicAgent

    model = network(preset, advice="heuristic")
    agent, heuristic = NeuralAgent(preset, seed=0, model=model), HeuristicAgent(preset, seed=0)
    env = five_hundred_env.env(rules=preset)
    decisions = 0
    for deal in range(6):
        env.reset(seed=deal)
        for _ in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            chosen = agent.act(obs)
            assert chosen == heuristic.act(obs)
            if obs["action_mask"].sum() > 1:
                x = torch.from_numpy(policy_input(obs, agent.adviser)).unsqueeze(0)
                probs = torch.softmax(model.masked_logits(x, torch.from_numpy(obs["action_mask"]).unsqueeze(0)), -1)[0]
                assert 0.3 < probs[chosen] < 0.999
                decisions += 1
            env.step(chosen)
    assert decisions > 60


def test_advice_is_part_of_the_checkpointed_network(tmp_path):
    model = network(advice="heuristic")
    with torch.no_grad():
        model.advice_weight.fill_(1.5)
    path = tmp_path / "advised.pt"
    save_checkpoint(path, {"rules": make_rules("australian").to_dict(), "model_spec": model.spec(), "model": model.state_dict()})
    agent = load_agent(path)
    assert agent.model.advice == "heuristic" and agent.adviser is not None
    assert agent.model.advice_weight.item() == 1.5
    with pytest.raises(ValueError, match="advice must be one of"):
        network(advice="oracle")


@pytest.mark.parametrize("preset", PRESETS)
def test_central_features_are_oriented_to_the_seat(preset):
    env = five_hundred_env.env(rules=preset)
    env.reset(seed=3)
    rules, enc = make_rules(preset), env.unwrapped.encoder
    width = rules.card_slots
    for seat in range(rules.num_players):
        feats = central_features(env.unwrapped.state(f"player_{seat}"), rules)
        assert feats.shape == (central_size(rules),)
        own = enc.decode(env.unwrapped.observe(f"player_{seat}")["observation"])["hand"]
        assert np.array_equal(feats[:width], own)  # the seat's own hand comes first
        assert np.array_equal(hidden_cards(env.unwrapped.deal, seat), feats)  # the trainer's fast path


@pytest.mark.parametrize("preset", PRESETS)
def test_hidden_cards_match_the_state_through_a_deal(preset):
    # RULES.md §10.8: the dead hand (two_handed) and the called partner (five_handed) are hidden facts
    # that only the global state shows; the critic's features carry them.
    env = five_hundred_env.env(rules=preset)
    env.reset(seed=4)
    rules = make_rules(preset)
    agent = NeuralAgent(preset, seed=0, model=network(preset), greedy=False)
    hidden_seen = False
    for name in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        feats = hidden_cards(env.unwrapped.deal, int(name.split("_")[-1]))
        assert np.array_equal(feats, central_features(env.unwrapped.state(name), rules))
        beyond = feats[(rules.num_players + 2) * rules.card_slots:]  # the dead hand, the partner
        hidden_seen |= bool(beyond.any())
        env.step(agent.act(obs))
    assert hidden_seen == (rules.dead_hand_size > 0 or (rules.has_partner_call and env.unwrapped.deal.partner >= 0))


# -- checkpoints -------------------------------------------------------------------------------

def save(tmp_path, preset: str = "australian", name: str = "agent.pt"):
    model = network(preset)
    path = tmp_path / name
    save_checkpoint(path, {"rules": make_rules(preset).to_dict(), "model_spec": model.spec(), "model": model.state_dict()})
    return path, model


def test_checkpoint_round_trip(tmp_path):
    path, model = save(tmp_path)
    agent = load_agent(path, seed=0)
    assert agent.rules == make_rules("australian")
    for a, b in zip(agent.model.state_dict().values(), model.state_dict().values(), strict=True):
        assert torch.equal(a, b)
    assert not list(tmp_path.glob("*.tmp"))  # the atomic write left nothing behind


def test_a_checkpoint_for_another_preset_is_refused(tmp_path):
    path, _ = save(tmp_path, "australian")
    with pytest.raises(CheckpointError, match=r"trained for the 'australian' preset and cannot play 'italian_3p'"):
        load_agent(path, rules="italian_3p")
    with pytest.warns(UserWarning, match="other rule options"):
        load_agent(path, rules=make_rules("australian", slam_bonus=False))


def test_corrupt_and_foreign_files_are_refused(tmp_path):
    path, _ = save(tmp_path)
    data = path.read_bytes()
    (tmp_path / "truncated.pt").write_bytes(data[: len(data) // 2])
    (tmp_path / "noise.pt").write_bytes(np.random.default_rng(0).bytes(5000))
    (tmp_path / "text.pt").write_text("not a checkpoint")
    for name in ("truncated.pt", "noise.pt", "text.pt"):
        with pytest.raises(CheckpointError, match="not a readable checkpoint"):
            load_agent(tmp_path / name)
    torch.save({"weights": torch.zeros(3)}, tmp_path / "other.pt")
    with pytest.raises(CheckpointError, match="not a five-hundred training checkpoint"):
        load_agent(tmp_path / "other.pt")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_agent(tmp_path / "missing.pt")


def test_a_byte_flipped_in_a_checkpoints_weights_is_refused_in_one_line_naming_the_file(tmp_path):
    path, model = save(tmp_path)
    flip_a_byte(path, model.state_dict()["actor.2.weight"])
    with pytest.raises(CheckpointError) as e:
        load_agent(path)
    assert str(e.value).startswith(f"{path}: its tensors do not match the sha256 recorded when it was written")
    assert "\n" not in str(e.value)


def test_a_checkpoint_without_a_recorded_digest_still_loads(tmp_path):
    # as every file written before digests were recorded (the shipped agents/pretrained/*.pt)
    path, model = save(tmp_path)
    data = torch.load(path, weights_only=True)
    assert data.pop(TENSORS_DIGEST) == tensors_digest(data)
    torch.save(data, path)
    loaded = load_agent(path).model.state_dict()
    assert all(torch.equal(loaded[k], v) for k, v in model.state_dict().items())


def test_the_digest_covers_each_tensors_place_and_bytes_not_the_order_of_the_dicts():
    a, b = torch.arange(6.0).reshape(2, 3), torch.ones(3, dtype=torch.float16)
    digest = tensors_digest({"model": {"a": a, "b": b}, "pool": [{"a": a}], "note": "text"})
    assert digest == tensors_digest({"pool": [{"a": a.clone()}], "note": "other text", "model": {"b": b, "a": a}})
    assert digest != tensors_digest({"model": {"a": b, "b": a}, "pool": [{"a": a}]})  # two tensors swapped
    assert digest != tensors_digest({"model": {"a": a.reshape(3, 2), "b": b}, "pool": [{"a": a}]})  # reshaped
    assert digest != tensors_digest({"model": {"a": a, "b": b.float()}, "pool": [{"a": a}]})  # another dtype
    changed = a.clone()
    changed.view(-1).view(torch.uint8)[0] ^= 1
    assert digest != tensors_digest({"model": {"a": changed, "b": b}, "pool": [{"a": a}]})


class Payload:
    """Any class: loading it would mean running code, which weights_only=True refuses."""


def test_checkpoints_never_unpickle_code(tmp_path):
    torch.save({"format": "five-hundred-ppo/1", "rules": {}, "model": {}, "model_spec": Payload()}, tmp_path / "evil.pt")
    with pytest.raises(CheckpointError, match="not a readable checkpoint"):
        load_agent(tmp_path / "evil.pt")


def save_payload(tmp_path, name: str = "crafted.pt", **changes):
    """A valid checkpoint's payload with some entries replaced, saved to ``name``."""
    model = network()
    payload = {"rules": make_rules("australian").to_dict(), "model_spec": model.spec(), "model": model.state_dict()}
    payload.update(changes)
    path = tmp_path / name
    save_checkpoint(path, payload)
    return path


@pytest.mark.parametrize(("rules", "words"), [
    ("australian", "unusable rules: rules must be a mapping"),
    ({"preset": "australian", "jokers": 2}, "unusable rules: unknown rule option 'jokers'"),
    ({"preset": "bridge"}, "unusable rules: unknown preset 'bridge'"),
])
def test_a_checkpoint_with_unusable_rules_is_refused(tmp_path, rules, words):
    path = save_payload(tmp_path, rules=rules)
    for use in (lambda: load_agent(path), lambda: load_agent(path, rules="australian")):
        with pytest.raises(CheckpointError, match=words) as info:
            use()
        assert "\n" not in str(info.value)


def test_a_crafted_network_size_is_refused_before_any_allocation(tmp_path, monkeypatch):
    spec = {**network().spec(), "hidden_sizes": [100_000, 100_000]}  # ~10 G parameters: 40 GB of float32
    path = save_payload(tmp_path, model_spec=spec)

    def never_built(*args, **kwargs):
        raise AssertionError("the network was built")

    monkeypatch.setattr("agents.neural.ActorCritic", never_built)
    with pytest.raises(CheckpointError, match=r"parameters, more than the 300,000,000 allowed") as info:
        load_agent(path)
    assert "\n" not in str(info.value)


def test_a_per_kind_network_adds_each_phases_advice_weight_and_round_trips(tmp_path):
    """``phase_slice``: one advice weight per phase of the observation's phase one-hot; a network
    whose weights are all one number plays as the network with that one weight; set per kind
    (``set_advice_weights``: the partner call is a discard) and read back after a checkpoint."""
    rules = make_rules("five_handed")
    env = five_hundred_env.env(rules=rules)
    encoder = env.unwrapped.encoder
    sizes = (encoder.size, int(env.action_space("player_0").n), [32, 32])
    torch.manual_seed(0)
    single = ActorCritic(*sizes, num_sides=rules.num_sides, advice="heuristic", advice_weight=0.7)
    torch.manual_seed(0)
    split = ActorCritic(*sizes, num_sides=rules.num_sides, advice="heuristic", advice_weight=0.7,
                        phase_slice=encoder.phase_slice())
    assert split.advice_weight.shape == (6,) and parameter_count(split.spec()) == parameter_count(single.spec()) + 5
    x = torch.randint(0, 2, (64, encoder.size + sizes[1]), dtype=torch.int8)
    phase = slice(*encoder.phase_slice())
    x[:, phase] = 0
    x[torch.arange(64), phase.start + torch.arange(64) % 6] = 1
    mask = torch.ones(64, sizes[1], dtype=torch.int8)
    assert torch.equal(single.masked_logits(x, mask), split.masked_logits(x, mask))
    set_advice_weights(split, {"bid": 2.0, "discard": 3.0})
    assert split.advice_weight.tolist() == pytest.approx([2.0, 3.0, 0.7, 0.7, 0.7, 3.0])  # CALL, numbered last
    bonus = split.advice_bonus(x.float()).squeeze(-1)
    assert bonus.tolist() == pytest.approx([[2.0, 3.0, 0.7, 0.7, 0.7, 3.0][i % 6] for i in range(64)])
    path = tmp_path / "split.pt"
    save_checkpoint(path, {"rules": rules.to_dict(), "model_spec": split.spec(), "model": split.state_dict()})
    assert advice_weights(load_agent(path).model) == pytest.approx({"bid": 2.0, "discard": 3.0, "nominate": 0.7,
                                                                    "play": 0.7})
    with pytest.raises(ValueError, match="give one number"):
        set_advice_weights(single, {"bid": 1.0})
    with pytest.raises(ValueError, match="unknown decision kind"):
        set_advice_weights(split, {"bids": 1.0})
    with pytest.raises(ValueError, match="finite"):
        set_advice_weights(split, {"bid": float("inf")})
    for outside in (1e300, -0.5, {"play": 100.5}):  # 1e300 overflowed float32: torch's RuntimeError
        with pytest.raises(ValueError, match="an advice weight must be from 0 to 100"):
            set_advice_weights(split, outside)
    assert split.advice_weight.tolist() == pytest.approx([2.0, 3.0, 0.7, 0.7, 0.7, 3.0])  # nothing was set


@pytest.mark.parametrize(("change", "words"), [
    ({"hidden_sizes": []}, "hidden_sizes must be a non-empty list"),
    ({"hidden_sizes": [32, -4]}, "hidden_sizes must be a non-empty list"),
    ({"hidden_sizes": "32"}, "hidden_sizes must be a non-empty list"),
    ({"obs_size": 3.5}, "obs_size must be a whole number"),
    ({"num_actions": True}, "num_actions must be a whole number"),
    ({"activation": "gelu"}, "activation must be one of"),
    ({"advice": "oracle"}, "advice must be one of"),
    ({"advice_weight": float("nan")}, "advice_weight must be a finite number"),
    ({"extra_layer": 1}, "model_spec must have the keys"),
    ({"phase_slice": [5, 3]}, "phase_slice must be none or"),
    ({"phase_slice": [1, 2, 3]}, "phase_slice must be none or"),
    ({"phase_slice": [0, 10**9]}, "phase_slice must be none or"),
])
def test_a_malformed_network_spec_is_refused(tmp_path, change, words):
    path = save_payload(tmp_path, model_spec={**network().spec(), **change})
    with pytest.raises(CheckpointError, match=words):
        load_agent(path)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_non_finite_weights_are_refused_at_load(tmp_path, bad):
    state = network().state_dict()
    state["actor.2.weight"][3, 5] = bad
    path = save_payload(tmp_path, model=state)
    with pytest.raises(CheckpointError, match=r"model holds non-finite weights \(NaN or inf\) in actor\.2\.weight"):
        load_agent(path)
    good = network().state_dict()
    pooled = save_payload(tmp_path, "pooled.pt", model=good, pool=[good, state])  # a resume would load the pool too
    with pytest.raises(CheckpointError, match=r"pool\[1\] holds non-finite weights"):
        load_agent(pooled)
    with pytest.raises(CheckpointError, match="not a state dict"):
        load_agent(save_payload(tmp_path, "listed.pt", model=[1, 2]))


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize(("critic_extra", "advice"), [(0, "none"), (276, "heuristic")])
def test_parameter_count_is_the_networks(preset, critic_extra, advice):
    model = network(preset, critic_extra=critic_extra, advice=advice)
    assert parameter_count(model.spec()) == sum(p.numel() for p in model.parameters())


def test_the_largest_network_a_config_allows_can_be_loaded():
    # training.settings.config allows at most 8 hidden layers of 4096; every preset's network must stay loadable.
    for preset in PRESETS:
        spec = {**network(preset, advice="heuristic").spec(), "hidden_sizes": [4096] * 8,
                "critic_extra": central_size(make_rules(preset))}
        assert parameter_count(spec) <= MAX_PARAMETERS
