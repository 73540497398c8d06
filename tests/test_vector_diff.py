"""Exactness of the batched engine: the same random legal actions through it and through the AEC
environment (and so the scalar engine), compared at every step: the acting seat, its legal set
(mask), its observation, the global state, and at each deal end the rewards and score changes
(docs/rules.md §4-§9 through the presets of §2 and §10 and random mixes of every option)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from five_hundred_env.rules import BOOL_OPTIONS, OPTION_CHOICES, make_rules
from five_hundred_env.vector.batch import VECTOR_PRESETS as PRESETS

pytest.importorskip("numba")
from vector_helpers import play_differential


@pytest.mark.parametrize("episode", ["deal", "game"])
@pytest.mark.parametrize("preset", list(PRESETS))
def test_presets_match_the_aec_env_at_every_step(preset: str, episode: str) -> None:
    """§2 and §10.2 presets, deals and whole games (§9 with the real target of 500)."""
    deals = play_differential(make_rules(preset), episode, num_games=6, steps=250, seed=11)
    assert deals >= 6  # deals did end, so the rewards and scores were compared too


@pytest.mark.parametrize("preset", list(PRESETS))
def test_heuristic_games_match_the_aec_env_at_every_step(preset: str) -> None:
    """Deals as players bid and play them (contracts made, misères played out, §10.5's partner
    called and revealed): every game's seats played by HeuristicAgent from the AEC env's views."""
    from agents.heuristic import HeuristicAgent

    agents = [HeuristicAgent(preset, seed=b) for b in range(3)]
    deals = play_differential(make_rules(preset), "game", num_games=3, steps=200, seed=13,
                              policy=lambda b, view: agents[b].act(view))
    assert deals >= 3


@st.composite
def option_mixes(draw: st.DrawFn) -> tuple[object, str]:
    """A preset with every option of §2 and §10.2 drawn at random (only the invalid combinations
    excluded: ``partner_call`` other than ``none`` needs five players)."""
    preset = draw(st.sampled_from(list(PRESETS)))
    options: dict[str, object] = {name: draw(st.sampled_from(choices)) for name, choices in OPTION_CHOICES.items()
                                  if name != "partner_call" or preset == "five_handed"}
    options.update({name: draw(st.booleans()) for name in BOOL_OPTIONS})
    two_jokers = preset == "french_46"
    if two_jokers:
        options["joker_nomination"] = "none"
        options["both_jokers_min_bid"] = draw(st.sampled_from([None, 6, 8, 10]))
    options["misere_value"] = draw(st.sampled_from([250, 150, 95, 255]))  # odd values: scores ÷ 10 round half-even
    options["target"] = draw(st.sampled_from([500, 150, 60]))  # low targets end games within a test
    options["losing_score"] = draw(st.sampled_from([-500, -150, -60]))
    episode = draw(st.sampled_from(["deal", "game"]))
    return make_rules(preset, **options), episode


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(option_mixes(), st.integers(0, 2**16))
def test_random_option_mixes_match_the_aec_env(mix: tuple[object, str], seed: int) -> None:
    rules, episode = mix
    play_differential(rules, episode, num_games=4, steps=100, seed=seed)  # type: ignore[arg-type]


@pytest.mark.parametrize("preset", list(PRESETS))
def test_starting_scores_show_in_observations_as_the_env_shows_them(preset: str) -> None:
    """Scores ÷ 10 rounded half to even (25 → 2, 35 → 4, -15 → -2), the observer's side first (§9)."""
    rules = make_rules(preset, misere_value=255)
    sides = {2: [25, -15], 3: [35, -5, 15], 5: [35, -5, 15, 45, -25]}[rules.num_sides]
    scores = [sides[rules.side_of(s)] for s in range(rules.num_players)]
    play_differential(rules, "deal", num_games=3, steps=80, seed=5, start_scores=scores)
