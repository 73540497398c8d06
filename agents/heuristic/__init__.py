"""A rule-based Five Hundred player: hand evaluation for bidding, sensible discards and card play.

The agent sees only its own observation (decoded with the layout of
:class:`~five_hundred_env.observation.ObservationEncoder`) and chooses among the actions its mask
allows. It uses the engine's *rule tables* (the card order of each trump context: which cards are
trumps, what beats what) and its §8 scoring functions, never the environment's state.

How it thinks, the way a decent club player does, one module each:

* :mod:`~agents.heuristic.view` — the observation decoded into ints and card masks (relative
  seats, the partnership from the rules), and what may be known of the other seats' cards.
* :mod:`~agents.heuristic.evaluation` — an estimate of the tricks a hand takes in each strain,
  from the jokers, bowers, trump length, side aces and kings, voids and singletons, as contractor
  and as defender; and its misère "danger": a card is dangerous when the opponents hold more low
  cards of its suit than they can spend before it has to be played.
* :mod:`~agents.heuristic.bidding` — the side's tricks from that estimate, with the partner's
  average help and the kitty's expected help folded in (:mod:`~agents.heuristic.calibration`,
  fitted to this agent's own card play by ``benchmarks/calibrate_heuristic.py``), the partner's
  bids raising the estimate in its strain, the opponents' bids judged by this hand's defence.
  Every legal bid gets an expected score through :mod:`five_hundred_env.scoring` and the best is
  bid when it beats the expected score of passing.
* :mod:`~agents.heuristic.kitty` — discards that keep trumps and winners and throw short side
  suits to make voids; for misère the joker and the dangerous high cards. The joker is nominated
  (Australian rules) to the suit where it adds most tricks.
* :mod:`~agents.heuristic.play` — the contractor draws trumps while the opponents may still hold
  some; winners are cashed; defenders cash aces, lead the partner's suit or a singleton to ruff;
  second hand low, third hand high; a partner's safe winner is never overtaken; tricks are won as
  cheaply as is safe; losers are discarded. A suitless joker wins a trick when void in the suit
  led and is led naming the contractor side's long suit.
* :mod:`~agents.heuristic.misere` — the contractor ducks as high as it can and throws its
  dangerous cards, while the defenders lead low and stay under the contractor's card.

:mod:`~agents.heuristic.compiled` makes the same decisions over a batch in numba (the kernels:
``_kernels/``, one module per module above), and plays deals out on the batched engine; it needs
numba, so it is not imported here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from agents.heuristic.agent import HeuristicAgent
from five_hundred_env.rules import Rules

if TYPE_CHECKING:
    from agents.heuristic.compiled import HeuristicPolicy


class RowByRowHeuristic:
    """:class:`HeuristicAgent` behind the compiled heuristic's ``act_batch`` (a row at a time):
    what :func:`batch_heuristic` gives where numba is missing or the rules are not compiled."""

    compiled = False

    def __init__(self, rules: Rules) -> None:
        self.agent = HeuristicAgent(rules, seed=0)

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The heuristic's compact action for each row of ``obs`` and ``masks``."""
        return np.array([self.agent.act({"observation": o, "action_mask": m}) for o, m in zip(obs, masks, strict=True)],
                        dtype=np.int64)


def batch_heuristic(rules: Rules) -> HeuristicPolicy | RowByRowHeuristic:
    """The heuristic's choices over a batch (``act_batch(obs, masks)``): the compiled
    :class:`~agents.heuristic.compiled.HeuristicPolicy` where numba is installed and it covers
    ``rules``, else :class:`RowByRowHeuristic` (the same decisions, slower)."""
    try:
        from agents.heuristic.compiled import COMPILED_PRESETS, HeuristicPolicy  # numba: imported only when used
    except ImportError:
        return RowByRowHeuristic(rules)
    return HeuristicPolicy(rules) if rules.preset in COMPILED_PRESETS else RowByRowHeuristic(rules)


__all__ = ["HeuristicAgent", "RowByRowHeuristic", "batch_heuristic"]
