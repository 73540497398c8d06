"""The heuristic's decisions as numba kernels: :class:`~agents.heuristic.HeuristicAgent` line by line.

One module per module of the Python form (:mod:`.view`, :mod:`.evaluation`, :mod:`.bidding`,
:mod:`.kitty`, :mod:`.play`, :mod:`.misere`, :mod:`.agent` for ``HeuristicAgent.act``).

Each function mirrors the method of :mod:`agents.heuristic` named in its docstring, with the same
floating-point operations in the same order and the same tie-breaks (the first of equals in the
order the Python form iterates), so the decisions are the same bit for bit; the differential tests
(``tests/test_heuristic_compiled.py``, ``tests/test_heuristic_compiled_presets.py``) hold the two
forms equal.

Inputs are arrays built once per rules object (:func:`agents.heuristic.compiled.policy_tables`):
``ct[ctx]`` the card tables of each trump context (:class:`~agents.heuristic.view.CardTables`:
columns ``C_*``), ``ri``/``rf`` the rules' and calibration's numbers (``R_*``/``K_*``), ``cs`` every
contract's §8 scores (``S_*``), ``off`` the observation's offsets. The view of one observation
is decoded into an ``int64`` scratch row ``v`` (``V_*``), relative seats as in
:class:`~agents.heuristic.view.TableView`; a set of cards is one ``int64`` of card bits
(:func:`agents.heuristic.compiled.policy_card_bits`: the ids' order kept), and the tables are by
bit. The legal actions are a word of bid ids, card bits, nominations or called seats, and apart
the joker leads (:func:`.agent.decide`).
"""

from __future__ import annotations

from pathlib import Path

from agents.heuristic._kernels import agent
from five_hundred_env.vector._cache import announce_compile

COMPILING_MESSAGE = "agents: compiling the heuristic for batches (HeuristicPolicy, play_out), once per install, about two minutes"

# numba checks only each cached function's own file: drop this package's cache when any of its
# modules or any engine kernel they call changes (before any kernel is loaded from the cache), and
# say so when the kernels must be compiled: the first call otherwise looks like a hang
announce_compile(agent.play_out_games._cache._cache_path, COMPILING_MESSAGE,
                 extra_sources=tuple(sorted(Path(__file__).parent.glob("*.py"))), entry="agent")
