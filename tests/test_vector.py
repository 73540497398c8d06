"""The batched engine's API: seeding, explicit deals, illegal actions, buffers, zero-copy, the
optional numba dependency, and the single-agent Gymnasium vector environment."""

from __future__ import annotations

import random
import subprocess
import sys

import numpy as np
import pytest

import five_hundred_env
from five_hundred_env import IllegalActionError, make_rules
from five_hundred_env.cards import DECKS, kernel_card_ids, mask_to_cards
from five_hundred_env.engine import deal_to_cards
from five_hundred_env.vector.batch import VECTOR_PRESETS as PRESETS

pytest.importorskip("numba")
from five_hundred_env.vector import BatchEngine, SingleAgentVectorEnv
from five_hundred_env.vector._layout import kernel_mask


@pytest.mark.parametrize("preset", sorted(DECKS))
def test_a_kernel_mask_sets_each_cards_bit(preset: str) -> None:
    """``kernel_mask`` of any set of a pack's cards is the union of those cards' kernel bits (as a signed int64)."""
    bits = kernel_card_ids(DECKS[preset])
    pack = mask_to_cards(DECKS[preset])
    rng = random.Random(7)
    for _ in range(200):
        cards = rng.sample(pack, rng.randrange(len(pack) + 1))
        expected = sum(1 << bits[c] for c in cards)
        assert kernel_mask(bits, sum(1 << c for c in cards)) == (expected - (1 << 64) if expected >> 63 else expected)


def play(engine: BatchEngine, steps: int) -> None:
    for _ in range(steps):
        engine.step(engine.sample_actions())


def deck_bits(preset: str, width: int) -> np.ndarray:
    return np.array([DECKS[preset] >> c & 1 for c in range(width)], dtype=np.int8)


@pytest.mark.parametrize("preset", list(PRESETS))
def test_shuffled_deals_share_out_the_whole_deck(preset: str) -> None:
    """§3, §10.3: every card of the preset's deck is dealt once, 10 to each hand, 3 to the kitty and
    (``two_handed``) the rest to the dead hand, at reset and after the automatic resets of later deals."""
    rules = make_rules(preset)
    engine = BatchEngine(rules, 64, seed=3)
    n, width = rules.num_players, rules.card_slots
    parts = engine.encoder.state_layout
    fresh = np.ones(64, dtype=bool)
    checked = 0
    for _ in range(200):
        states = engine.state()
        for b in np.flatnonzero(fresh):
            hands = states[b, :n * width].reshape(n, width)
            kitty = states[b, n * width:(n + 1) * width]
            dead = states[b, parts["dead_hand"][0]:][:width] if "dead_hand" in parts else np.zeros(width, np.int8)
            assert (hands.sum(1) == rules.hand_size).all()
            assert kitty.sum() == rules.kitty_size and dead.sum() == rules.dead_hand_size
            np.testing.assert_array_equal(hands.sum(0) + kitty + dead, deck_bits(preset, width))
        checked += fresh.sum()
        fresh = engine.step(engine.sample_actions()).deal_done.copy()
    assert checked > 64 + 64


def test_a_seed_reproduces_every_deal_and_sampled_action() -> None:
    a, b = BatchEngine("australian", 16, seed=7), BatchEngine("australian", 16, seed=7)
    other = BatchEngine("australian", 16, seed=8)
    np.testing.assert_array_equal(a.obs, b.obs)
    assert not np.array_equal(a.state(), other.state())
    for _ in range(120):
        np.testing.assert_array_equal(a.step(a.sample_actions()).obs, b.step(b.sample_actions()).obs)
    a.reset(seed=7)
    fresh = BatchEngine("australian", 16, seed=7)
    np.testing.assert_array_equal(a.state(), fresh.state())
    a.reset()  # no seed: the streams go on, so new deals, the same in both
    fresh.reset()
    np.testing.assert_array_equal(a.state(), fresh.state())
    assert not np.array_equal(a.state(), BatchEngine("australian", 16, seed=7).state())


def test_sampled_actions_are_legal_and_cover_the_mask() -> None:
    engine = BatchEngine("french_46", 32, seed=1)
    for _ in range(100):
        actions = engine.sample_actions()
        assert engine.masks[np.arange(32), actions].all()
        engine.step(actions)


def test_an_illegal_action_raises_naming_the_game_and_changes_nothing() -> None:
    engine = BatchEngine("australian", 4, seed=2)
    play(engine, 5)
    before_state, before_obs, before_masks = engine.state(), engine.obs.copy(), engine.masks.copy()
    actions = engine.sample_actions()
    illegal = int(np.flatnonzero(engine.masks[2] == 0)[0])
    actions[2] = illegal
    with pytest.raises(IllegalActionError, match=r"game 2: action .* is not legal .* legal actions: "):
        engine.step(actions)
    with pytest.raises(IllegalActionError, match="game 0: action 999"):
        engine.step(np.full(4, 999))
    with pytest.raises(ValueError, match="actions must be 4 integer action ids"):
        engine.step(np.zeros(3, dtype=np.int64))
    np.testing.assert_array_equal(engine.state(), before_state)
    np.testing.assert_array_equal(engine.obs, before_obs)
    np.testing.assert_array_equal(engine.masks, before_masks)


def test_output_buffers_and_seats_are_checked_before_any_write() -> None:
    engine = BatchEngine("australian", 4, seed=2)
    with pytest.raises(ValueError, match=rf"out must be a writable C-contiguous int8 array of shape \(4, {engine.state_size}\)"):
        engine.state(out=np.zeros((4, 10), dtype=np.int8))
    with pytest.raises(ValueError, match=r"seats must be 4 seats 0\.\.3"):
        engine.state(seats=np.array([0, 1, 2, -1]))
    with pytest.raises(ValueError, match="out must be a writable"):
        engine.observe(engine.seat, out=np.zeros((4, engine.obs_size), dtype=np.int16))
    with pytest.raises(ValueError, match=r"seats must be 4 seats 0\.\.3"):
        engine.observe(np.array([0, 1, 2, 4]))
    with pytest.raises(ValueError, match=r"game must be an index 0\.\.3, got 4"):
        engine.legal_actions(4)
    with pytest.raises(ValueError, match="final_obs must be"):
        engine.step(engine.sample_actions(), engine.seat, np.zeros((2, engine.obs_size), dtype=np.int8))
    out = np.zeros((4, engine.obs_size), dtype=np.int8)
    assert engine.observe(engine.seat, out=out) is out
    np.testing.assert_array_equal(out, engine.obs)


def test_masks_only_mode_writes_the_same_masks_and_no_observations() -> None:
    full, masks_only = BatchEngine("french_46", 8, seed=3), BatchEngine("french_46", 8, seed=3, observations=False)
    for _ in range(60):
        actions = full.sample_actions()
        np.testing.assert_array_equal(actions, masks_only.sample_actions())
        full.step(actions)
        masks_only.step(actions)
        np.testing.assert_array_equal(full.masks, masks_only.masks)
    assert not masks_only.obs.any()
    np.testing.assert_array_equal(masks_only.observe(masks_only.seat), full.obs)


def test_a_negative_action_leaves_that_game_as_it_is() -> None:
    engine = BatchEngine("italian_3p", 3, seed=4)
    before = engine.state()
    actions = engine.sample_actions()
    actions[1] = -1
    engine.step(actions)
    after = engine.state()
    np.testing.assert_array_equal(after[1], before[1])
    assert not np.array_equal(after[0], before[0])


def test_an_explicit_deal_is_played_as_the_aec_env_plays_it() -> None:
    aec = five_hundred_env.env(rules="australian")
    aec.reset(seed=9, options={"dealer": 2})
    deal = aec.unwrapped.deal
    cards = deal_to_cards(aec.unwrapped.rules, deal.dealt, deal.kitty)
    engine = BatchEngine("australian", 2, seed=0)
    engine.set_deal(1, cards["hands"], cards["kitty"], dealer=2)
    assert engine.seat[1] == 3  # the dealer's left bids first (§4)
    np.testing.assert_array_equal(engine.obs[1], aec.observe("player_3")["observation"])
    np.testing.assert_array_equal(engine.state()[1], aec.state())


def test_bad_explicit_deals_are_refused_and_change_nothing() -> None:
    aec = five_hundred_env.env(rules="australian")
    aec.reset(seed=1)
    names = deal_to_cards(aec.unwrapped.rules, aec.unwrapped.deal.dealt, aec.unwrapped.deal.kitty)
    engine = BatchEngine("australian", 2, seed=0)
    before = engine.state()
    with pytest.raises(ValueError, match="hand 0 must hold 10 cards"):
        engine.set_deal(0, [h[:1] for h in names["hands"]], names["kitty"])
    with pytest.raises(ValueError, match=r"game must be an index 0\.\.1"):
        engine.set_deal(2, names["hands"], names["kitty"])
    with pytest.raises(ValueError, match="dealer must be a seat"):
        engine.set_deal(0, names["hands"], names["kitty"], dealer=4)
    with pytest.raises(ValueError, match="scores"):
        engine.set_deal(0, names["hands"], names["kitty"], scores=[10, 20, 30, 40])
    np.testing.assert_array_equal(engine.state(), before)


def _card_rows(deals: list) -> np.ndarray:
    """``load_deals``' cards of scalar deals: each hand's ids, then the kitty's."""
    return np.array([[c for hand in d.dealt for c in mask_to_cards(hand)] + mask_to_cards(d.kitty) for d in deals])


@pytest.mark.parametrize("preset", list(PRESETS))
def test_deals_loaded_by_card_id_are_those_set_one_by_one(preset: str) -> None:
    """``load_deals`` (many games, card ids) leaves the games as ``load_position`` of the same deals
    and scores does, one by one: every acting seat's observation and mask and the global state."""
    from five_hundred_env.engine import Deal

    rules = make_rules(preset)
    rng = random.Random(8)
    deals = [Deal.new(rules, rng, dealer=rng.randrange(rules.num_players)) for _ in range(5)]
    scores = np.array([[10 * (g + side) for side in range(rules.num_sides)] for g in range(5)])
    batched, single = BatchEngine(rules, 7, seed=0), BatchEngine(rules, 7, seed=0)
    games = np.array([6, 0, 3, 1, 4])
    batched.load_deals(games, _card_rows(deals), [d.dealer for d in deals], scores)
    for game, deal, row in zip(games.tolist(), deals, scores.tolist(), strict=True):
        single.load_position(game, deal, scores=row)
    np.testing.assert_array_equal(batched.obs[games], single.obs[games])
    np.testing.assert_array_equal(batched.masks[games], single.masks[games])
    np.testing.assert_array_equal(batched.state()[games], single.state()[games])
    np.testing.assert_array_equal(batched.scores[games], scores)


def test_bad_deals_by_card_id_are_refused_naming_the_game_and_change_nothing() -> None:
    from five_hundred_env.engine import Deal

    rules = make_rules("australian")
    rng = random.Random(2)
    deals = [Deal.new(rules, rng, dealer=0) for _ in range(2)]
    cards, games = _card_rows(deals), np.array([0, 1])
    engine = BatchEngine(rules, 3, seed=0)
    before = engine.state()
    repeated = cards.copy()
    repeated[1, 5] = repeated[1, 20]
    foreign = cards.copy()
    foreign[1, 0] = next(c for c in range(66) if not rules.deck >> c & 1)  # a card of no Australian pack
    for bad, message in (
        ({"cards": repeated}, "game 1: a card is dealt twice"),
        ({"cards": foreign}, f"game 1: card id {foreign[1, 0]} is not in the australian pack"),
        ({"cards": cards[:, :40]}, r"cards must be \[2, 43\] card ids \(4 hands of 10, then the kitty of 3\)"),
        ({"dealers": [0, 4]}, r"dealers must be 2 seats 0\.\.3"),
        ({"scores": [[0, 0], [-600, 0]]}, "game 1: starting scores"),
        ({"games": np.array([1, 1])}, "games must be distinct"),
    ):
        arguments = {"games": games, "cards": cards, "dealers": [0, 0], **bad}
        with pytest.raises(ValueError, match=message):
            engine.load_deals(**arguments)
    np.testing.assert_array_equal(engine.state(), before)


def test_games_rotate_the_deal_to_the_left_and_keep_scores() -> None:
    """§3 the deal passes to the left after each deal; §9 scores accumulate over a game."""
    # Random bids sink a side to -500 within a deal or two: far targets keep the games going.
    engine = BatchEngine("australian", 32, episode="game", seed=6, target=10_000, losing_score=-10_000)
    dealer_slice = engine.encoder.layout["dealer"][0]
    offset = engine.encoder.state_layout["observation"][0] + dealer_slice  # seat 0's view: its dealer
    dealers = engine.state()[:, offset:offset + 4].argmax(1)
    rotations = 0
    for _ in range(300):
        engine.step(engine.sample_actions())
        now = engine.state()[:, offset:offset + 4].argmax(1)
        moved = engine.deal_done & ~engine.episode_done
        np.testing.assert_array_equal(now[moved], (dealers[moved] + 1) % 4)
        rotations += moved.sum()
        dealers = now
    assert rotations > 32
    assert (engine.scores != 0).any()


def test_buffers_are_zero_copy_for_torch() -> None:
    torch = pytest.importorskip("torch")
    engine = BatchEngine("australian", 8, seed=1)
    obs, masks = torch.from_numpy(engine.obs), torch.from_numpy(engine.masks)
    engine.step(engine.sample_actions())
    assert obs.data_ptr() == engine.obs.ctypes.data
    assert torch.equal(obs, torch.from_numpy(engine.obs.copy()))
    assert torch.equal(masks, torch.from_numpy(engine.masks.copy()))


def test_the_package_works_without_numba_and_the_vector_import_names_the_extra() -> None:
    code = (
        "import sys\n"
        "sys.modules['numba'] = None\n"  # an import of numba now fails as if it were not installed
        "import five_hundred_env\n"
        "e = five_hundred_env.env(); e.reset(seed=0); e.step(int(e.observe(e.agent_selection)['action_mask'].argmax()))\n"
        "try:\n"
        "    import five_hundred_env.vector\n"
        "except ImportError as err:\n"
        "    print(err)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "pip install five-hundred-env[vector]" in out


@pytest.mark.parametrize("preset", list(PRESETS))
def test_the_single_agent_env_hands_the_learner_every_turn_and_its_side_s_results(preset: str) -> None:
    """The learner plays side 1: a seat alone, two partners, or (``six_handed``) three team-mates."""
    agents = pytest.importorskip("agents.base")
    learner = make_rules(preset).seats_of(1)
    env = SingleAgentVectorEnv(preset, 8, learner_seats=learner, opponent=agents.RandomAgent(seed=0), seed=2)
    obs, info = env.reset(seed=2)
    assert obs.shape == (8, env.engine.obs_size) and env.observation_space.shape == obs.shape
    rng = np.random.default_rng(0)
    episodes = 0
    for _ in range(200):
        assert np.isin(info["seat"], learner).all()
        masks = env.action_masks()
        np.testing.assert_array_equal(masks, info["action_mask"].astype(bool))
        assert masks.any(1).all()  # SAME_STEP autoreset: even a terminal step's mask is the next deal's
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        obs, rewards, terminated, truncated, info = env.step(actions)
        assert not truncated.any()
        assert (rewards[~terminated] == 0).all()  # rewards come only when a deal ends
        final = info["final_obs"][info["_final_obs"]]
        phase = env.engine.encoder.layout["phase"][0]
        assert (final[:, phase + 4] == 1).all()  # the finished deal, seen by the learner: deal over
        episodes += terminated.sum()
    assert episodes > 8


def test_the_single_agent_env_takes_batched_opponents_and_refuses_bad_seats() -> None:
    calls = []

    class FirstLegal:
        def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
            calls.append(len(obs))
            return masks.argmax(1)

    env = SingleAgentVectorEnv("italian_3p", 4, learner_seats=(0,), opponent=FirstLegal(), seed=1)
    env.reset(seed=1)
    env.step(env.action_masks().argmax(1))
    assert calls and max(calls) <= 4
    with pytest.raises(ValueError, match="must all be on one side"):
        SingleAgentVectorEnv("australian", 2, learner_seats=(0, 1))
    with pytest.raises(ValueError, match="unknown built-in opponent"):
        SingleAgentVectorEnv("australian", 2, opponent="heuristic")


@pytest.mark.parametrize("preset", list(PRESETS))
def test_positions_of_the_scalar_engine_load_in_every_phase(preset: str) -> None:
    """``load_position`` of deals stopped after random actions, in every phase (§10.5's call
    included): the acting seat's observation and mask, and the global state, are the scalar
    encoder's (six_handed's 12♥ and 13♥, whose ids pass 63, included)."""
    import random

    from five_hundred_env.actions import ActionTable
    from five_hundred_env.engine import Deal
    from five_hundred_env.observation import ObservationEncoder

    rules = make_rules(preset)
    encoder, table = ObservationEncoder(rules), ActionTable(rules)
    rng = random.Random(4)
    engine = BatchEngine(rules, 40, seed=0)
    phases = set()
    for game in range(40):
        deal = Deal.new(rules, rng, dealer=game % rules.num_players)
        for _ in range(rng.randrange(60)):
            if deal.is_over:
                break
            deal.apply_action(rng.choice(deal.legal_actions()))
        engine.load_position(game, deal, scores=[10 * (game % 7)] * rules.num_sides)
        phases.add(deal.phase)
        if deal.is_over:
            continue
        turn = encoder.encode_turn(deal, table, [10 * (game % 7)] * rules.num_sides)
        np.testing.assert_array_equal(engine.obs[game], turn["observation"], err_msg=f"game {game}")
        np.testing.assert_array_equal(engine.masks[game], turn["action_mask"], err_msg=f"game {game}")
        state = encoder.encode_state(deal, [10 * (game % 7)] * rules.num_sides)
        np.testing.assert_array_equal(engine.state()[game], state, err_msg=f"state of game {game}")
    assert len(phases) >= 3
