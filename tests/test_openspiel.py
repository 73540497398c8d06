"""Five Hundred as an OpenSpiel game: OpenSpiel's own random-simulation test, the same results as
the PettingZoo environment, information states that hide what the rules hide, and the way back to
PettingZoo through Shimmy."""

from __future__ import annotations

import random

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

from five_hundred_env import env as make_env  # noqa: E402
from five_hundred_env import make_rules  # noqa: E402
from five_hundred_env.actions import ActionTable, action_card, is_card_action, is_joker_lead, parse_action  # noqa: E402
from five_hundred_env.cards import card_to_str, mask_to_cards  # noqa: E402
from five_hundred_env.openspiel import load_game, rules_of  # noqa: E402

PRESETS = ["australian", "italian_3p", "french_46", "two_handed", "five_handed", "six_handed"]


def _play(game, rng: random.Random, stop=lambda state: False):
    state = game.new_initial_state()
    while not state.is_terminal() and not stop(state):
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes(), strict=True)
            assert abs(sum(probs) - 1) < 1e-9
            state.apply_action(rng.choice(outcomes))
        else:
            state.apply_action(rng.choice(state.legal_actions()))
    return state


@pytest.mark.parametrize("preset", PRESETS)
def test_openspiel_random_simulation(preset: str) -> None:
    """OpenSpiel's C++ checks over random play (legal actions, returns, clones, observations)."""
    pyspiel.random_sim_test(load_game(preset), num_sims=4, serialize=False, verbose=False)


def test_rule_options_are_game_parameters() -> None:
    """§2: every option is a parameter; the preset's own values stand unless overridden."""
    game = load_game("french_46", both_jokers_min_bid=8)
    rules = rules_of(game.get_parameters())
    assert rules.preset == "french_46" and rules.both_jokers_min_bid == 8 and rules.kitty_size == 6
    assert rules_of(load_game("italian_3p").get_parameters()).bidding == "single_round"
    # an override equal to another preset's default still counts, and a partial parameter set
    # given to OpenSpiel by name keeps the preset's own options
    assert rules_of(load_game("italian_3p", slam_bonus=True).get_parameters()).slam_bonus is True
    assert rules_of(pyspiel.load_game("python_five_hundred", {"preset": "italian_3p"}).get_parameters()) \
        == make_rules("italian_3p")
    assert load_game("italian_3p").num_players() == 3


@pytest.mark.parametrize("preset", PRESETS)
def test_returns_match_the_environment(preset: str) -> None:
    """The same deal and actions through the AEC environment give the same rewards (in points)."""
    game = load_game(preset)
    for seed in range(5):
        state = _play(game, random.Random(seed))
        deal = state.deal
        env = make_env(rules=preset, reward_scale=1.0)
        two = deal.rules.two_jokers
        env.reset(options={"dealer": deal.dealer, "kitty": [card_to_str(c, two) for c in mask_to_cards(deal.kitty)],
                           "hands": [[card_to_str(c, two) for c in mask_to_cards(h)] for h in deal.dealt]})
        compact = ActionTable(deal.rules).compact
        history = list(deal.history)
        got = dict.fromkeys(env.possible_agents, 0.0)
        for agent in env.agent_iter():
            _obs, reward, term, trunc, _info = env.last()
            got[agent] += reward
            env.step(None if term or trunc else compact[history.pop(0)])
        assert not history
        assert np.allclose(state.returns(), [got[a] for a in env.possible_agents])


@pytest.mark.parametrize("preset", PRESETS)
def test_information_state_names_only_cards_the_player_saw(preset: str) -> None:
    """§5, §7: a player's information names its own cards, played cards, the kitty only if it is
    the contractor, and an exposed hand — never another hidden hand or a discard."""
    game = load_game(preset)
    for seed in range(8):
        rng = random.Random(seed)
        cut = rng.randrange(5, 40)
        state = _play(game, rng, stop=lambda s, cut=cut: s.deal is not None and len(s.deal.history) >= cut)
        deal = state.deal
        for player in range(deal.rules.num_players):
            seen = deal.dealt[player] | sum(deal.played)
            if deal.contractor == player and deal.phase.name != "BIDDING":
                seen |= deal.kitty
            if deal.exposed:
                seen |= deal.dealt[deal.contractor] | deal.kitty
            if deal.called_card >= 0:  # §10.5: the called card is announced (not where it is)
                seen |= 1 << deal.called_card
            for word in state.information_state_string(player).replace(":", " ").split():
                try:
                    action = parse_action(word, deal.rules)
                except ValueError:
                    continue
                if not (is_card_action(action) or is_joker_lead(action)):
                    continue  # a bid such as 10D
                card = action_card(action)
                assert seen >> card & 1, f"{word} leaks to player {player}"


def test_shimmy_turns_it_back_into_pettingzoo() -> None:
    shimmy = pytest.importorskip("shimmy")
    from pettingzoo.test import api_test

    game = load_game("australian")
    api_test(shimmy.OpenSpielCompatibilityV0(env=game, config=game.get_parameters()), num_cycles=50)


def test_information_state_tensor_is_the_observation() -> None:
    """The v1 observation serves as the information state: two players' tensors differ, and the
    tensor changes with every action (perfect recall of the play)."""
    game = load_game("australian")
    state = _play(game, random.Random(3), stop=lambda s: s.deal is not None and len(s.deal.history) >= 20)
    seat = state.current_player()
    before = np.array(state.information_state_tensor(seat))
    assert np.array_equal(before, state.observation_tensor(seat))
    assert not np.array_equal(before, state.information_state_tensor((seat + 1) % 4))
    state.apply_action(state.legal_actions()[0])
    assert not np.array_equal(before, state.information_state_tensor(seat))
