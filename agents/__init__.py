"""Agents for Five Hundred: an observation and its action mask in, a legal action out."""
