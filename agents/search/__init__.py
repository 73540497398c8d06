"""Search for Five Hundred: information-set sampling, an exact trick solver, and a PIMC agent (docs/search.md)."""

from agents.search.pimc import PIMCAgent
from agents.search.solver import action_values, side_scores, solve
from agents.search.tracking import ObservationTracker
from five_hundred_env.sampling import InfoSet, WorldSampler

__all__ = ["InfoSet", "ObservationTracker", "PIMCAgent", "WorldSampler", "action_values", "side_scores", "solve"]
