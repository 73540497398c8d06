"""The heuristic's regression golden on the two-, five- and six-player presets (docs/rules.md §10):
tests/heuristic_golden/{two,five,six}_handed.json, written by ``python tests/make_heuristic_golden.py``
and replayed as tests/test_heuristic_golden.py replays the three earlier presets (kept apart so
that file, which a compiled form of the heuristic is checked against, stays as it was)."""

from __future__ import annotations

import pytest
from test_heuristic_golden import replay_mismatches


@pytest.mark.parametrize("preset", ["two_handed", "five_handed", "six_handed"])
def test_heuristic_plays_as_recorded(preset):
    """Every recorded heuristic decision of the preset's golden is chosen again (§10: the call and
    the partnership included)."""
    decisions, mismatches = replay_mismatches(preset)
    assert decisions > 1000
    assert not mismatches, f"{len(mismatches)} of {decisions} decisions changed:\n" + "\n".join(mismatches[:20])
