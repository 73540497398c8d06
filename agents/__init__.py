"""Agents for Five Hundred: an observation and its action mask in, a legal action out."""

from agents.base import Agent, RandomAgent

__all__ = ["Agent", "RandomAgent"]
