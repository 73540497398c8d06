"""Card-play inputs derived from an observation by the rules' card order (§6): an option of the networks.

The observation (:mod:`five_hundred_env.observation`) says which cards the observer holds, which
have been played and what trumps are, but not how those cards rank: whether the queen in hand is
now the highest heart left depends on the contract (a jack is a bower in trumps), the joker's
nomination and every card seen so far. An MLP has to learn that order from one-hots and data;
card play is where the search keeps the edge that the networks fitted to it do not learn (docs/distill.md).
With ``card_features`` a network reads, for each card slot ``c`` of the observer's hand (zero for
cards it does not hold), four numbers computed by the rules' own tables
(:data:`five_hundred_env.engine.WIN_KEY`), from nothing but the observation:

=============  ==================================================================================
``higher``     the cards *still out* (not in the observer's hand, not played, not its own
               discards: the others' discards, the kitty and a dead hand are unseen, so out)
               that rank above ``c`` in its effective suit, a suitless joker above every
               suited card (§6), ÷ 4
``suit_left``  the cards still out in ``c``'s effective suit, ÷ 8
``wins_now``   1 if ``c``, played now, would beat every card of the current trick (0 on a lead)
``trump``      1 if ``c`` is a trump of the contract (bowers and jokers included)
=============  ==================================================================================

The trump context is the observation's ``trump`` and ``joker_suit`` slices; before a contract
(the auction) the no-trumps order is used. The tables are rebuilt from the engine when a network
is built (they are not stored in its files), so a policy file holds the preset's rules instead.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from five_hundred_env.engine import EFFECTIVE_SUIT, NO_TRUMP_CTX, SUITLESS, WIN_KEY
from five_hundred_env.observation import ObservationEncoder
from five_hundred_env.rules import Rules

FEATURES_PER_CARD = 4
_CONTEXTS = len(WIN_KEY)  # 0-3 suit trumps, 4 no trumps, 5-8 no trumps with the joker nominated


def card_feature_count(rules_dict: dict[str, Any]) -> int:
    """How many inputs ``card_features`` adds for the rules of ``rules_dict`` (``Rules.to_dict``)."""
    return FEATURES_PER_CARD * Rules.from_dict(rules_dict).card_slots


def reads_observation_of(rules_dict: Any, obs_size: int) -> bool:
    """Whether ``rules_dict`` are rules (``Rules.to_dict``) whose observation has ``obs_size`` elements
    (what a network spec's ``card_features`` must be); a malformed dict is not."""
    try:
        return ObservationEncoder(Rules.from_dict(rules_dict)).size == obs_size
    except (ValueError, TypeError, KeyError):
        return False


def _order_tables(slots: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """``above[ctx, j, c]``: card ``j`` ranks above ``c`` in ``c``'s effective suit (or is a suitless
    joker over a suited card); ``same[ctx, j, c]``: the same effective suit, ``j ≠ c``;
    ``key[ctx·4 + led, c]``: ``c``'s strength in a trick led in ``led``; ``trump[ctx, c]``."""
    above = torch.zeros(_CONTEXTS, slots, slots)
    same = torch.zeros(_CONTEXTS, slots, slots)
    key = torch.zeros(_CONTEXTS * 4, slots)
    trump = torch.zeros(_CONTEXTS, slots)
    for ctx in range(_CONTEXTS):
        eff = EFFECTIVE_SUIT[ctx][:slots]
        for led in range(4):
            key[ctx * 4 + led] = torch.tensor(WIN_KEY[ctx][led][:slots])
        for c in range(slots):
            strength = WIN_KEY[ctx][eff[c] if eff[c] < 4 else 0]  # the order inside c's own suit
            trump[ctx, c] = float(ctx < 4 and eff[c] == ctx)
            for j in range(slots):
                if j != c and eff[j] == eff[c]:
                    same[ctx, j, c] = 1
                    above[ctx, j, c] = float(strength[j] > strength[c])
                elif eff[j] == SUITLESS:
                    above[ctx, j, c] = 1
    return above, same, key, trump


class CardFeatures(nn.Module):
    """The inputs of the module docstring for a batch of observations of the rules ``rules_dict``
    (``Rules.to_dict``): ``forward(obs)`` maps ``(batch, obs_size)`` to ``(batch, 4·W)`` floats,
    feature-major (the ``higher`` of every slot, then ``suit_left``, …)."""

    def __init__(self, rules_dict: dict[str, Any]) -> None:
        super().__init__()
        rules = Rules.from_dict(rules_dict)
        layout = ObservationEncoder(rules).layout
        self.slots = w = rules.card_slots
        self.at = {name: layout[name][0] for name in ("hand", "discards", "played", "trick", "trump", "joker_suit",
                                                       "led_suit")}
        self.players = rules.num_players
        above, same, key, trump = _order_tables(w)
        deck = torch.tensor([float(rules.deck >> c & 1) for c in range(w)])
        # Not saved with the weights: the engine's tables are the source, rebuilt with the network.
        for name, table in (("above", above.permute(1, 0, 2).reshape(w, -1)), ("same", same.permute(1, 0, 2).reshape(w, -1)),
                            ("key", key), ("trump", trump), ("deck", deck)):
            self.register_buffer(name, table, persistent=False)

    def _cards(self, obs: torch.Tensor, name: str, rows: int = 1) -> torch.Tensor:
        start = self.at[name]
        return obs[:, start:start + rows * self.slots].reshape(len(obs), rows, self.slots).sum(1)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        """The inputs of each row of ``obs`` (observation vectors, any dtype), zero off the hand."""
        obs = obs.float()
        b, w = len(obs), self.slots
        hand = self._cards(obs, "hand")
        unseen = (self.deck - hand - self._cards(obs, "played", self.players) - self._cards(obs, "discards")).clamp(min=0)
        t = self.at["trump"]
        suit_trump = obs[:, t:t + 4]
        nominated = obs[:, self.at["joker_suit"]:self.at["joker_suit"] + 4]
        # the context: the trump suit, or no trumps (5 + the joker's suit once nominated)
        ctx = torch.where(suit_trump.sum(1) > 0, suit_trump.argmax(1),
                          torch.where(nominated.sum(1) > 0, 5 + nominated.argmax(1), NO_TRUMP_CTX))
        columns = (ctx * w).unsqueeze(1) + torch.arange(w, device=obs.device)
        higher = (unseen @ self.above).gather(1, columns)
        suit_left = (unseen @ self.same).gather(1, columns)
        led = obs[:, self.at["led_suit"]:self.at["led_suit"] + 4]
        in_trick = self._cards(obs, "trick", self.players)
        key = self.key[ctx * 4 + led.argmax(1)]
        best = (key * in_trick).amax(1, keepdim=True)
        wins = ((key > best) & (led.sum(1, keepdim=True) > 0) & (in_trick.sum(1, keepdim=True) > 0)).float()
        features = torch.stack([higher / 4, suit_left / 8, wins, self.trump[ctx]], 1) * hand.unsqueeze(1)
        return features.reshape(b, FEATURES_PER_CARD * w)


__all__ = ["FEATURES_PER_CARD", "CardFeatures", "card_feature_count", "reads_observation_of"]
