"""The curriculum of learning from a random start (docs/scratch.md), for any collector on the batched engine.

* :class:`Auction`: per game, the current auction's passes and bids, and the rule of the curriculum
  ``last_bidder_bids``: the last seat that could bid must bid when every other seat passed before
  any bid, so no deal is thrown in (RULES.md §4 throws it in; the evaluations keep that rule);
* :class:`TrickCredit`: the tricks each seat has won so far in each game's deal, read from the
  acting seat's observation, so that each trick can be rewarded as it is won (``trick_reward``: the
  collector credits it to the card plays alone, so that it shapes card play and not the bids);
* :func:`uniform_legal`: a uniformly random legal action per row of a mask (the exploration of a
  collector whose masks the curriculum changed).
"""

from __future__ import annotations

import numpy as np

from five_hundred_env.actions import MISERE, OPEN_MISERE, PASS
from five_hundred_env.observation import ObservationEncoder
from five_hundred_env.rules import Rules
from training.settings.config import ConfigError


class Auction:
    """Per game, the passes and whether a bid was made in the current deal's auction, and whether
    the curriculum's rule holds in the deal: the last seat that could bid must bid when every
    other seat passed before any bid (``curriculum.last_bidder_bids_steps``)."""

    def __init__(self, num_games: int, num_players: int, share: float) -> None:
        self.passes = np.zeros(num_games, dtype=np.int64)
        self.bid = np.zeros(num_games, dtype=bool)
        self.must_bid = np.full(num_games, share >= 1.0)
        self.num_players = num_players

    def masks(self, masks: np.ndarray) -> np.ndarray:
        """``masks`` without PASS where the rule holds, every other seat passed, nobody bid and a bid is legal."""
        stuck = self.must_bid & ~self.bid & (self.passes == self.num_players - 1) & (masks[:, PASS] != 0) \
            & (masks[:, PASS + 1:OPEN_MISERE + 1] != 0).any(axis=1)
        if not stuck.any():
            return masks
        out = masks.copy()
        out[stuck, PASS] = 0
        return out

    def record(self, masks: np.ndarray, actions: np.ndarray) -> None:
        """Count the passes and bids of the actions about to be played (``masks`` the engine's)."""
        in_auction = masks[np.arange(len(actions)), PASS] != 0
        self.passes += in_auction & (actions == PASS)
        self.bid |= (actions > PASS) & (actions <= OPEN_MISERE)

    def new_deals(self, deal_done: np.ndarray, share: float, rng: np.random.Generator) -> None:
        """Start the auctions of the games whose deal ended, the rule holding in ``share`` of them."""
        done = np.flatnonzero(deal_done)
        self.passes[done] = 0
        self.bid[done] = False
        self.must_bid[done] = rng.random(len(done)) < share if 0.0 < share < 1.0 else share >= 1.0


class TrickCredit:
    """Per game, the tricks each seat has won this deal, read from the acting seat's observation
    (its ``tricks_won`` slice, relative seats), so that each trick can be rewarded as it is won
    (the curriculum's ``trick_reward``). The last trick of a deal is not seen (the next deal's
    observation follows it) and goes unrewarded; it is forced play."""

    def __init__(self, rules: Rules, num_games: int) -> None:
        if rules.has_partner_call:
            raise ConfigError("curriculum.trick_reward needs fixed sides: the five-handed partner is called per deal")
        layout = ObservationEncoder(rules).layout
        self.won_at, (n, max_tricks) = layout["tricks_won"]
        self.contract_at, self.contractor_at = layout["contract"][0], layout["contractor"][0]
        sides = np.array([rules.side_of(s) for s in range(n)])
        self.same_side = sides[:, None] == sides[None, :]  # [winner, seat]
        # Zero-sum: the winner's side gains 1 in all (shared by its seats' decisions equally as a
        # side's reward), every other side loses 1 / (sides - 1).
        self.gain = np.where(self.same_side, 1.0, -1.0 / (rules.num_sides - 1))
        self.counts = np.zeros((num_games, n), dtype=np.int64)
        self.n, self.max_tricks = n, max_tricks

    def won(self, obs: np.ndarray, seats: np.ndarray, deal_done: np.ndarray) -> np.ndarray:
        """``[B, n]``: each seat's reward (in units of ``trick_reward``) for a trick won since the last call."""
        n = self.n
        relative = obs[:, self.won_at:self.won_at + n * self.max_tricks].reshape(len(obs), n, self.max_tricks).sum(axis=2)
        absolute = np.empty_like(self.counts)
        order = (seats[:, None] + np.arange(n)[None, :]) % n  # relative seat r is absolute seat (seat + r) % n
        np.put_along_axis(absolute, order, relative.astype(np.int64), axis=1)
        absolute[deal_done] = 0
        gained = (absolute - self.counts) * ~deal_done[:, None]
        self.counts = absolute
        out = np.zeros((len(obs), n))
        for b in np.flatnonzero(gained.sum(axis=1)):
            winner = int(np.argmax(gained[b]))
            reward = self.gain[winner]
            contract = obs[b, self.contract_at:self.contract_at + 27]
            if contract[MISERE - 1] or contract[OPEN_MISERE - 1]:  # the misère contractor wants no trick
                reward = -reward
            out[b] = reward
        return out


def uniform_legal(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random legal action per row of ``masks``."""
    counts = np.cumsum(masks != 0, axis=1)
    pick = (rng.random(len(masks)) * counts[:, -1]).astype(np.int64)
    return (counts <= pick[:, None]).sum(axis=1)


__all__ = ["Auction", "TrickCredit", "uniform_legal"]
