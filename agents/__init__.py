"""Agents for Five Hundred: an observation and its action mask in, a legal action out."""

from agents.base import Agent, RandomAgent
from agents.heuristic import HeuristicAgent
from agents.play import Turn, play_deal, play_game
from agents.registry import agent_factory, make_agent, register_agent

__all__ = [
    "Agent",
    "HeuristicAgent",
    "RandomAgent",
    "Turn",
    "agent_factory",
    "make_agent",
    "play_deal",
    "play_game",
    "register_agent",
]
