"""The bidding's constants, per preset: what the hand estimates are worth in side tricks.

``"suit"``/``"nt"`` (a, b, sigma): the side's tricks ≈ a + b · own-hand estimate, with spread sigma;
``"own_avg"``, ``"own_avg_nt"``, ``"defence_avg"``: the estimates of an average hand;
``"misere"``/``"open_misere"`` (a, b): P(make) = 1 / (1 + exp(-(a - b · danger))). These are fitted
to the agent's own play by ``benchmarks/calibrate_heuristic.py`` (it prints them). The rest were
set by duplicate matches of variants against each other: ``"support"`` (a partner's hand is worth
this share of the contractor's own), ``"other_suit_help"``, ``"pass_penalty"``,
``"opponent_strain"`` (tricks), ``"defence_weight"``, ``"margin"`` (points a bid must beat passing
by) and ``"game_end"`` (what losing or winning the game is worth).
"""

from __future__ import annotations

from typing import Any

CALIBRATION: dict[str, dict[str, Any]] = {
    "australian": {
        "suit": (4.21, 0.62, 1.6), "nt": (3.82, 0.66, 1.78), "own_avg": 2.57, "own_avg_nt": 1.79,
        "defence_avg": 1.64, "defence_weight": 0.6, "support": 0.8, "other_suit_help": 0.3, "pass_penalty": 0.4,
        "opponent_strain": 0.8, "misere": (0.74, 0.7), "open_misere": (0.36, 0.71), "margin": 10.0, "game_end": 500.0,
    },
    "italian_3p": {
        "suit": (1.87, 0.85, 1.39), "nt": (0.64, 0.9, 1.97), "own_avg": 3.17, "own_avg_nt": 2.72,
        "defence_avg": 2.24, "defence_weight": 0.8, "support": 0.8, "other_suit_help": 0.0, "pass_penalty": 0.0,
        "opponent_strain": 0.8, "misere": (0.53, 1.32), "open_misere": (0.17, 1.34), "margin": 10.0, "game_end": 500.0,
    },
    "french_46": {
        "suit": (5.27, 0.52, 1.66), "nt": (3.26, 0.87, 1.75), "own_avg": 2.61, "own_avg_nt": 1.69,
        "defence_avg": 1.62, "defence_weight": 0.6, "support": 0.8, "other_suit_help": 0.3, "pass_penalty": 0.4,
        "opponent_strain": 0.8, "misere": (0.74, 0.7), "open_misere": (0.36, 0.71), "margin": 10.0, "game_end": 500.0,
    },
    # Fitted with benchmarks/calibrate_heuristic.py (500 deals, 150 misères each; a loaded machine).
    # five_handed's side is the contractor and its called partner (§10.6); six_handed's no-trumps
    # line keeps the australian one (its fit saw 13 no-trump deals).
    "two_handed": {
        "suit": (3.83, 0.72, 1.51), "nt": (4.38, 0.44, 2.08), "own_avg": 3.16, "own_avg_nt": 2.65,
        "defence_avg": 2.21, "defence_weight": 0.8, "support": 0.8, "other_suit_help": 0.0, "pass_penalty": 0.0,
        "opponent_strain": 0.8, "misere": (-0.22, 1.09), "open_misere": (-0.32, 1.2), "margin": 10.0, "game_end": 500.0,
    },
    "five_handed": {
        "suit": (3.96, 0.59, 1.41), "nt": (2.11, 0.96, 1.47), "own_avg": 2.33, "own_avg_nt": 1.26,
        "defence_avg": 1.4, "defence_weight": 0.6, "support": 0.8, "other_suit_help": 0.0, "pass_penalty": 0.0,
        "opponent_strain": 0.8, "misere": (1.36, 0.47), "open_misere": (1.0, 0.47), "margin": 10.0, "game_end": 500.0,
    },
    "six_handed": {
        "suit": (4.2, 0.68, 1.62), "nt": (3.82, 0.66, 1.78), "own_avg": 2.07, "own_avg_nt": 0.82,
        "defence_avg": 1.16, "defence_weight": 0.6, "support": 0.8, "other_suit_help": 0.3, "pass_penalty": 0.4,
        "opponent_strain": 0.8, "misere": (2.08, 0.49), "open_misere": (1.85, 0.58), "margin": 10.0, "game_end": 500.0,
    },
}


def calibration_for(preset: str) -> dict[str, Any]:
    """The constants of a preset (a preset without its own fit uses the Australian one)."""
    return CALIBRATION.get(preset, CALIBRATION["australian"])
