"""The heuristic agent: decodes its observation and hands each decision to the module for its phase."""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.base import Agent
from agents.heuristic.bidding import Bidder
from agents.heuristic.evaluation import HandEvaluator
from agents.heuristic.kitty import KittyPlayer
from agents.heuristic.misere import misere_declarer, misere_defender
from agents.heuristic.play import follow, lead
from agents.heuristic.view import PHASE_BIDDING, PHASE_CALL, PHASE_DISCARD, PHASE_NOMINATE, TableView, ViewDecoder, card_tables
from five_hundred_env.actions import ActionTable
from five_hundred_env.rules import Rules
from five_hundred_env.scoring import is_misere


class HeuristicAgent(Agent):
    """A competent rule-based player for every preset and rule option (see :mod:`agents.heuristic`).

    A pure function of its observation (the seeded generator only backs up the impossible case
    of a chosen action missing from the mask), so identical seats play identically: this is what
    makes a duplicate match of the heuristic against itself come out at exactly zero.
    """

    name = "heuristic"

    def __init__(self, rules: Rules | str = "australian", seed: int | None = None) -> None:
        super().__init__(rules, seed)
        rules = self.rules
        self.table = ActionTable(rules)
        self._universal = np.array(self.table.universal, dtype=np.int64)
        self._compact = self.table.compact
        tables = card_tables(rules)
        self.decoder = ViewDecoder(rules, tables)
        self.evaluator = HandEvaluator(rules, tables)
        self.bidder = Bidder(rules, self.evaluator)
        self.kitty = KittyPlayer(rules, self.evaluator)

    def act(self, observation: dict[str, Any]) -> int:
        """The compact id of the chosen legal action."""
        mask = np.asarray(observation["action_mask"])
        legal_compact = np.flatnonzero(mask)
        if len(legal_compact) == 0:
            raise ValueError("no legal action in the mask: is it this agent's turn?")
        if len(legal_compact) == 1:
            return int(legal_compact[0])
        legal = self._universal[legal_compact].tolist()
        v = self.decoder.decode(observation["observation"])
        if v.phase == PHASE_BIDDING:
            action = self.bidder.bid(v, legal)
        elif v.phase == PHASE_DISCARD:
            action = self.kitty.discard(v, legal)
        elif v.phase == PHASE_NOMINATE:
            action = self.kitty.nominate(v, legal)
        elif v.phase == PHASE_CALL:
            action = self.kitty.call(v, legal)
        else:
            action = self._play(v, legal)
        if action not in legal:  # a safety net: a heuristic slip must never become an illegal move
            action = legal[int(self.rng.integers(len(legal)))]
        return int(self._compact[action])

    def _play(self, v: TableView, legal: list[int]) -> int:
        self.decoder.know_cards(v)
        if is_misere(v.contract):
            if v.contractor == 0:
                return misere_declarer(v, legal, self.evaluator)
            return misere_defender(v, legal)
        if v.trick:
            return follow(v, legal)
        return lead(v, legal)
