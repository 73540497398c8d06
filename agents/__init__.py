"""Agents for Five Hundred: an observation and its action mask in, a legal action out."""

from agents.base import Agent, RandomAgent
from agents.heuristic import HeuristicAgent
from agents.registry import make_agent

__all__ = ["Agent", "HeuristicAgent", "RandomAgent", "make_agent"]
