"""Five Hundred as an OpenSpiel game: OpenSpiel's own random-simulation test, the same results as
the PettingZoo environment, information states that hide what the rules hide, and the way back to
PettingZoo through Shimmy."""

from __future__ import annotations

import random
import re

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


# -- checked moves, plain-text states, resampling ------------------------------------------------

def _dealt(game, seed: int = 0, actions: int = 0):
    """A state after the deal and ``actions`` random player actions."""
    rng = random.Random(seed)
    return _play(game, rng, stop=lambda s: not s.is_chance_node() and s.move_number() >= 47 + actions)


@pytest.mark.parametrize(("prefix", "bad", "message"), [
    ([], 9, "the dealer must be a seat 0..3"),
    ([0], 63, "not a card of the australian pack"),
    ([0, 5], 5, r"chance outcome 5 \(.*\): dealt already"),
])
def test_a_bad_chance_outcome_is_refused_and_changes_nothing(prefix, bad, message) -> None:
    state = load_game("australian").new_initial_state()
    for action in prefix:
        state.apply_action(action)
    before = (state.history(), str(state), state.chance_outcomes())
    with pytest.raises(ValueError, match=message):
        state.apply_action(bad)
    assert (state.history(), str(state), state.chance_outcomes()) == before


@pytest.mark.parametrize("bad", [9999, 80])
def test_an_action_id_out_of_range_is_refused_and_changes_nothing(bad) -> None:
    state = _dealt(load_game("australian"), actions=3)
    before = (state.history(), str(state), state.legal_actions())
    with pytest.raises(ValueError, match=f"action {bad} is not an action id of this game"):
        state.apply_action(bad)
    illegal = next(a for a in range(80) if a not in state.legal_actions())
    with pytest.raises(ValueError, match="illegal action"):
        state.apply_action(illegal)
    assert (state.history(), str(state), state.legal_actions()) == before


@pytest.mark.parametrize(("bad", "message"), [
    (-1, r"action -1 is not an action id of this game \(0\.\.79\)"),  # was OpenSpiel's CHECK text
    (True, r"apply_action\(True\): an action must be a whole number"),  # was action 1, applied
    (3.0, r"apply_action\(3\.0\): an action must be a whole number"),  # was pybind11's page of overloads
])
def test_what_is_not_an_action_id_is_refused_in_python_and_changes_nothing(bad, message) -> None:
    state = _dealt(load_game("australian"), actions=3)
    before = (state.history(), str(state))
    for apply in (state.apply_action, state.apply_action_with_legality_check, state.child):
        with pytest.raises(ValueError, match=message.replace("apply_action", apply.__name__)):
            apply(bad)
    assert (state.history(), str(state)) == before


@pytest.mark.parametrize("method", ["information_state_string", "information_state_tensor", "observation_string",
                                    "observation_tensor", "legal_actions", "legal_actions_mask", "player_return",
                                    "player_reward"])
@pytest.mark.parametrize("player", [7, 4, -3, np.int64(9)])
def test_a_player_outside_the_seats_is_refused_in_python_naming_it(method, player) -> None:
    # OpenSpiel's C++ stopped these with its CHECK text (information_state_string(7)) or answered
    # as if nothing were wrong (legal_actions(9) was [])
    state = _dealt(load_game("australian"), actions=3)
    with pytest.raises(ValueError, match="^" + re.escape(f"{method}({player!r}): the player must be a seat 0..3 of this "
                                                         "4-player game")):
        getattr(state, method)(player)
    assert getattr(state, method)(np.int64(2)) == getattr(state, method)(2)  # a numpy seat is a seat


def test_the_checked_methods_keep_their_other_forms() -> None:
    game = load_game("italian_3p")
    state = game.new_initial_state()
    assert state.legal_actions(pyspiel.PlayerId.CHANCE) == state.legal_actions() == [0, 1, 2]
    state = _dealt(game, actions=2)
    seat = state.current_player()
    assert state.legal_actions() == state.legal_actions(seat) and state.legal_actions((seat + 1) % 3) == []
    assert state.information_state_string() == state.information_state_string(seat)
    first = state.action_to_string(seat, state.legal_actions()[0])
    assert state.string_to_action(seat, first) == state.string_to_action(first) == state.legal_actions()[0]
    assert state.action_to_string(pyspiel.PlayerId.CHANCE, 0) == "deal " + card_to_str(0)
    with pytest.raises(ValueError, match=r"string_to_action\(5\): the player must be a seat 0\.\.2"):
        state.string_to_action(5, first)
    with pytest.raises(ValueError, match=r"action_to_string\(3\): .* or the chance player \(-1\)"):
        state.action_to_string(3, 0)


@pytest.mark.parametrize("preset", PRESETS)
def test_a_state_round_trips_through_its_plain_text(preset: str) -> None:
    game = load_game(preset)
    for actions in (0, 12, 30):
        state = _dealt(game, seed=actions, actions=actions)
        text = state.serialize()
        assert "__dict__" not in text and text.startswith("five_hundred_env.openspiel state v1\n")
        copy = game.deserialize_state(text)
        assert copy.history() == state.history() and str(copy) == str(state)
        assert copy.legal_actions() == state.legal_actions()


def test_deserialize_never_unpickles_and_checks_every_action(tmp_path) -> None:
    import base64
    import pickle

    class WritesMarker:
        def __reduce__(self):
            return exec, (f"open({str(tmp_path / 'marker')!r}, 'w').write('ran')",)

    game = load_game("australian")
    generic = (f"history=-1:0\nmove_number=1\n__dict__={base64.b64encode(pickle.dumps({'x': WritesMarker()})).decode()}")
    good = _dealt(game, actions=2).serialize()
    header, rules, actions = good.split("\n")
    for text, message in [
        (generic, "not a state of this game"),
        (f"{header}\n{rules}\nactions 0 5 5", r"action 3 of the state: chance outcome 5 \(.*\): dealt already"),
        (f"{header}\n{rules}\nactions 9", "action 1 of the state: chance outcome 9: the dealer must be a seat"),
        (f"{header}\n{rules}\nactions 0 63", "not a card of the australian pack"),
        (f"{header}\n{rules}\n{actions} 9999", "is not an action id"),
        (f"{header}\n{rules.replace('australian', 'french_46')}\n{actions}", "saved under other rules"),
        (f"{header}\n{rules}\nactions 1e3", "'1e3', is not an action id"),
    ]:
        with pytest.raises(ValueError, match=message):
            game.deserialize_state(text)
    assert not (tmp_path / "marker").exists()


@pytest.mark.parametrize("preset", PRESETS)
def test_resampling_keeps_the_information_state_and_varies_the_hidden_cards(preset: str) -> None:
    game = load_game(preset)
    uniform = np.random.RandomState(0).uniform
    states = [_dealt(game, seed=seed, actions=actions) for seed in range(6) for actions in (0, 7, 25)]
    states = [state for state in states if not state.is_terminal()]  # some auctions are all passes
    assert len(states) >= 6
    for state in states:
        player = state.current_player()
        worlds = [state.resample_from_infostate(player, uniform) for _ in range(6)]
        for world in worlds:
            assert world.information_state_string(player) == state.information_state_string(player)
            assert world.legal_actions() == state.legal_actions()
        assert len({str(w) for w in worlds}) > 1  # the hidden cards do move


def test_openspiels_ismcts_bot_plays_a_whole_deal() -> None:
    from open_spiel.python.algorithms import ismcts, mcts

    game = load_game("australian")
    evaluator = mcts.RandomRolloutEvaluator(1, np.random.RandomState(0))
    bot = ismcts.ISMCTSBot(game, evaluator, 2.0, 8, random_state=np.random.RandomState(1))
    state = _dealt(game, seed=4)
    while not state.is_terminal():
        state.apply_action(bot.step(state))
    assert sum(state.returns()) == 0 and any(state.returns())


def test_the_docs_snippet_plays_a_deal_with_a_result(capsys) -> None:
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "integrations.md").read_text()
    snippet = text.split("## OpenSpiel", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    exec(compile(snippet, "docs/integrations.md", "exec"), {})
    printed = capsys.readouterr().out.strip()
    returns = [float(x) for x in printed.strip("[]").split(",")]
    assert any(returns) and sum(returns) == 0  # a contract was played, not four passes
    assert snippet.split("print(state.returns())", 1)[1].split(":")[0].strip("# ") == printed  # the comment tells the truth
