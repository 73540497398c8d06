"""Training of learning agents against the Five Hundred environment, driven by YAML configs.

Its rooms, highest first (a room imports only the rooms below it; ``lint-imports`` keeps it so):
:mod:`training.cli` (the command line), :mod:`training.web` (the table in the browser),
:mod:`training.table` (a person or a spectator at the terminal) beside :mod:`training.algorithms`
(PPO, DMC, expert iteration, warm starts, score tuning), :mod:`training.evaluation` (duplicate
matches and their reports), :mod:`training.records` (run folders, checkpoints, logs, curves),
:mod:`training.rollouts` (the games learners collect: self-play, search targets), and at the
bottom :mod:`training.settings` (the YAML configs) beside :mod:`training.workers` (threads,
worker pools, Ray). docs/layout.md maps them.
"""
