"""A perfect-information Monte Carlo (PIMC) search agent for every decision of a deal.

At each decision of a searched kind (a bid, a discard, the joker's nomination, a card play)
:class:`PIMCAgent` rebuilds its information set from its observations
(:class:`~agents.search.tracking.ObservationTracker`: nothing but what the vectors showed), draws
worlds uniformly among the deals consistent with it (:class:`~five_hundred_env.sampling.WorldSampler`),
and scores every candidate action in every world with common random numbers: the world is played
out to the end of the deal after the action by the rollout policy (the heuristic by default,
acting on each seat's own encoded observation), or, in the card play with ``solver_tricks``
tricks or fewer left, solved exactly (:func:`~agents.search.solver.action_values`). The candidate
with the best mean zero-sum result for the agent's side (plus ``win_bonus`` points for a deal that
wins the game, :class:`~agents.search.values.GameStakes`) wins, if it beats the base agent's own
choice by ``min_gain`` points; otherwise the base agent's choice stands. Decisions of kinds not
searched, and any the tracker cannot reconstruct (the agent joined a deal after its first
trick), are the base agent's.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any

import numpy as np

from agents.base import DECISION_KINDS, KIND_OF_PHASE, Agent, parse_kinds
from agents.heuristic import HeuristicAgent
from agents.pretrained import strongest_plain_agent
from agents.search.game_values import GameValues
from agents.search.inference import DEFAULT_BUDGET, AuctionInference
from agents.search.play_inference import inferred_sampler, play_exclusions
from agents.search.tracking import ObservationTracker
from agents.search.values import (
    BatchPlayOut,
    GameStakes,
    PlayOut,
    batch_play_out,
    bid_candidates,
    play_candidates,
    policy_play_out,
    world_action_values,
    worlds_action_values,
)
from five_hundred_env.actions import MISERE, ActionTable
from five_hundred_env.engine import Deal
from five_hundred_env.rules import Rules
from five_hundred_env.sampling import InfoSet, WorldSampler

DEFAULT_MIN_GAIN = MappingProxyType({"bid": 160.0, "discard": 40.0, "nominate": 40.0, "play": 0.0})
"""Points a searched candidate's mean must beat the base agent's choice by, per kind: the bids'
and the discards' sampled means are noisy (the one-step measurement of docs/search.md §3)."""

DEFAULT_WORLDS = 80
"""Worlds per card play: with the defaults of the other kinds and one card rolled out per run of
equal cards, about 0.72 CPU-s per duplicate board against the heuristic, within the 1 CPU-s budget
of docs/search.md §4 (*Fifth round: equal cards*: the CPU the equal cards free buys 80 worlds
for what 64 cost, +37.3 per deal on the issue's 1,000 boards)."""
DEFAULT_BASE = "auto"
"""The default base agent: the preset's shipped network where it can play
(:func:`agents.pretrained.strongest_plain_agent`), else the heuristic (docs/search.md §4, *Seventh
round*: +12 to +14 per deal over the heuristic as the base, on boards of seeds 7 and 11)."""
DEFAULT_AUCTION_WORLDS = 32
"""Worlds per bid, discard and nomination (docs/search.md §4, *Fourth round: the defaults
doubled*); their ``min_gain`` margins keep the heuristic's choice at about nine searched bids in ten."""


@dataclass
class KindStats:
    """What the search did at one kind of decision."""

    searches: int = 0
    """Decisions decided by search (with more than one legal action)."""
    deviations: int = 0
    """Searched decisions where the chosen action is not the base agent's."""
    fallbacks: int = 0
    """Decisions left to the base agent because the information set could not be rebuilt (or a
    world disagreed with the mask): none in a deal the agent saw from its start."""
    seconds: float = 0.0
    """Time spent in the searches."""


@dataclass(frozen=True)
class SearchRecord:
    """One searched decision: what the worlds said of each candidate (universal action ids)."""

    kind: str
    base_action: int
    means: dict[int, float]
    """Each candidate's mean zero-sum result for the agent's side over the worlds, in points."""
    worlds: int
    chosen: int

    @property
    def best(self) -> int:
        """The candidate with the best mean (the first of equals, in the order of the legal actions)."""
        return max(self.means, key=lambda a: self.means[a])

    @property
    def gain(self) -> float:
        """How many points the best mean beats the base agent's choice by."""
        return self.means[self.best] - self.means[self.base_action]


_spec_resolver: Callable[[str], Callable[[Rules, int | None], Agent]] | None = None


def set_spec_resolver(resolver: Callable[[str], Callable[[Rules, int | None], Agent]]) -> None:
    """Let ``base`` and ``rollout`` be agent spec strings, built by ``resolver(spec)(rules, seed)``:
    :mod:`agents.registry` installs its ``agent_factory`` as it is imported (``agents/__init__``
    imports it, so it is there before any agent is built). The registry imports this module, so
    this one does not import the registry."""
    global _spec_resolver
    _spec_resolver = resolver


class _AgentSlot:
    """An agent given as an :class:`Agent`, or as a spec built on first use by the resolver of
    :func:`set_spec_resolver` (``agents.registry.agent_factory``)."""

    def __init__(self, agent: Agent | str | None, role: str, rules: Rules, seed: int | None) -> None:
        self.rules, self.seed = rules, seed
        self._agent: Agent | None = None
        self._build: Callable[[Rules, int | None], Agent] | None = None
        self.owned = not isinstance(agent, Agent)
        """Built here (so reseeded with the search agent), not handed in."""
        if agent is None:
            self._agent = HeuristicAgent(rules, seed)
        elif isinstance(agent, Agent):
            self._agent = agent
        elif isinstance(agent, str):
            if _spec_resolver is None:
                raise ValueError(f"{role} {agent!r} is an agent spec, but no spec resolver is installed: "
                                 "import agents.registry, or pass an Agent")
            self._build = _spec_resolver(agent)  # an unknown spec is refused now, a file is loaded on first use
        else:
            raise ValueError(f"{role} must be an Agent, an agent spec string or None, got {type(agent).__name__}")

    def get(self) -> Agent:
        """The agent (built now if it was given as a spec)."""
        if self._agent is None:
            assert self._build is not None
            self._agent = self._build(self.rules, self.seed)
        return self._agent

    def reseed(self, seed: int | None) -> None:
        self.seed = seed
        if self.owned and self._agent is not None:
            self._agent.seed(seed)


def parse_min_gain(min_gain: float | Mapping[str, float]) -> dict[str, float]:
    """Each kind's ``min_gain``: one number for every kind, or a mapping of some of :data:`DECISION_KINDS`
    (the others keep :data:`DEFAULT_MIN_GAIN`'s)."""
    given = min_gain if isinstance(min_gain, Mapping) else dict.fromkeys(DECISION_KINDS, min_gain)
    out = dict(DEFAULT_MIN_GAIN)
    for kind, value in given.items():
        if kind not in DECISION_KINDS:
            raise ValueError(f"min_gain takes kinds of {'+'.join(DECISION_KINDS)}, got {kind!r}")
        if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0:
            raise ValueError(f"min_gain must be a number of points >= 0 (or one per kind), got {value!r}")
        out[kind] = float(value)
    return out


def _check_worlds(name: str, value: Any, default: int | None = None) -> int:
    if value is None and default is not None:
        return default
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{name} must be a whole number >= 1, got {value!r}")
    return value


class PIMCAgent(Agent):
    """Samples consistent deals at every searched decision and takes the candidate whose playouts
    score best (see the module docstring).

    ``worlds`` is the number of worlds per card play (:data:`DEFAULT_WORLDS`); ``bid_worlds`` and ``kitty_worlds`` (the
    discards and the nomination, :data:`DEFAULT_AUCTION_WORLDS`) those of the other kinds (``worlds`` if ``None``); ``seconds``
    bounds each decision's search (at least one world). ``search`` names the kinds searched
    (:data:`DECISION_KINDS`, a tuple or a ``+``-string). ``base`` decides what is not searched and is the
    reference of ``min_gain`` (points, one number or one per kind: see :data:`DEFAULT_MIN_GAIN`);
    ``rollout`` plays the worlds out (any stateless agent); each is an :class:`Agent`, an agent
    spec string (``"heuristic"``, ``"pretrained"``, a checkpoint path) or ``None`` for the
    heuristic; ``base`` defaults to :data:`DEFAULT_BASE` (the shipped network where it can play).
    ``solver_tricks`` is how many tricks left the exact solver takes over at.
    ``inference`` draws the worlds among those where the other seats bid as the heuristic would
    (:mod:`agents.search.inference`; ``inference_budget`` candidate worlds per decision, then
    uniform worlds, counted in :attr:`inference`); off, the worlds are uniform. The playouts' observations
    show the game scores the agent's own observation shows; ``win_bonus`` (points, 0: off) adds
    that many points to the value of a deal that wins the game for the agent's side (and takes
    them from one that wins it for another side: :class:`~agents.search.values.GameStakes`).
    ``misere_play=False`` leaves the card play of a closed misère (declarer and defenders) to the
    base agent (docs/search.md §4: the search's misère play measured behind the heuristic's).
    ``equal_cards`` (on by default) rolls out one card of each run of equal cards of the hand (the
    cards between them played or in the same hand: :func:`~agents.search.values.play_candidates`),
    not each of them. ``play_inference`` (on by default) draws a card play's worlds among those where
    the opponents' cards so far are the heuristic's (:mod:`agents.search.play_inference`: the
    lowest card when not winning, a winner when an enemy wins; uniform worlds where no deal is
    left; the auction ``inference``, when on, takes precedence). ``bid_weights`` (0: off) weights each
    world by the base network's probabilities of the other seats' bids in it, to that power
    (:mod:`agents.search.weighting`). A tie keeps the base agent's choice.
    """

    name = "pimc"

    def __init__(self, rules: Rules | str = "australian", seed: int | None = None, worlds: int = DEFAULT_WORLDS,
                 seconds: float | None = None, rollout: Agent | str | None = None, solver_tricks: int = 4,
                 search: str | Iterable[str] = DECISION_KINDS, base: Agent | str | None = DEFAULT_BASE,
                 min_gain: float | Mapping[str, float] = DEFAULT_MIN_GAIN, bid_worlds: int | None = DEFAULT_AUCTION_WORLDS,
                 kitty_worlds: int | None = DEFAULT_AUCTION_WORLDS, inference: bool = False,
                 inference_budget: int = DEFAULT_BUDGET, win_bonus: float = 0.0, misere_play: bool = True,
                 equal_cards: bool = True, play_inference: bool = True, bid_weights: float = 0.0,
                 game_values: GameValues | str | None = None) -> None:
        super().__init__(rules, seed)
        worlds = _check_worlds("worlds", worlds)
        if seconds is not None and not (isinstance(seconds, int | float) and seconds > 0):
            raise ValueError(f"seconds must be a positive number of seconds or None, got {seconds!r}")
        if not isinstance(solver_tricks, int) or not 0 <= solver_tricks <= self.rules.hand_size:
            raise ValueError(f"solver_tricks must be 0..{self.rules.hand_size}, got {solver_tricks!r}")
        self.search = parse_kinds(search)
        kitty = _check_worlds("kitty_worlds", kitty_worlds, worlds)
        self.worlds_of = {"bid": _check_worlds("bid_worlds", bid_worlds, worlds), "discard": kitty,
                          "nominate": kitty, "play": worlds}
        """Worlds drawn per decision of each kind."""
        self.worlds = worlds
        self.seconds = seconds
        self.solver_tricks = solver_tricks
        self.min_gain = parse_min_gain(min_gain)
        if not isinstance(inference, bool):
            raise ValueError(f"inference must be true or false, got {inference!r}")
        self.inference = AuctionInference(self.rules, inference_budget) if inference else None
        """The auction inference of the worlds and its counts (``None``: uniform worlds)."""
        if isinstance(win_bonus, bool) or not isinstance(win_bonus, int | float) or not win_bonus >= 0:
            raise ValueError(f"win_bonus must be a number of points >= 0, got {win_bonus!r}")
        self.win_bonus = float(win_bonus)
        """Points a deal that wins the game is worth beyond its own (0: the deal's points only)."""
        if isinstance(game_values, str):
            game_values = GameValues.load(game_values, self.rules)
        if game_values is not None and self.win_bonus:
            raise ValueError("win_bonus and game_values are two ways to value the game: give one")
        self.game_values = game_values
        """The chance to win the game from each pair of scores, when deals are valued by it (``None``: by their points)."""
        if not isinstance(misere_play, bool):
            raise ValueError(f"misere_play must be true or false, got {misere_play!r}")
        self.misere_play = misere_play
        """Whether the card play of a (closed) misère is searched (else it is the base agent's)."""
        if not isinstance(equal_cards, bool):
            raise ValueError(f"equal_cards must be true or false, got {equal_cards!r}")
        self.equal_cards = equal_cards
        """Whether a card play rolls out one card of each run of equal cards (:func:`~agents.search.values.play_candidates`)."""
        if not isinstance(play_inference, bool):
            raise ValueError(f"play_inference must be true or false, got {play_inference!r}")
        self.play_inference = play_inference
        """Whether a card play's worlds also respect what the opponents' card play showed if they play
        as the heuristic (:mod:`agents.search.play_inference`)."""
        if isinstance(bid_weights, bool) or not isinstance(bid_weights, int | float) or not 0 <= bid_weights <= 10:
            raise ValueError(f"bid_weights must be a power from 0 (off) to 10, got {bid_weights!r}")
        self.bid_weights = float(bid_weights)
        """The power on the base network's probabilities of the other seats' bids that weights each world
        (:mod:`agents.search.weighting`; 0: every world counts the same)."""
        self._likelihood: Any = None
        self.play_inferred = [0, 0]
        """Card plays whose worlds kept the play inference, and those where it left no deal (uniform worlds)."""
        if base == DEFAULT_BASE:
            base = strongest_plain_agent(self.rules)
        self.base_spec = base if isinstance(base, str) else type(base).__name__ if base is not None else "heuristic"
        """What the base agent is: a spec string, or the class name of an agent handed in."""
        self._base = _AgentSlot(base, "base", self.rules, seed)
        self._rollout = _AgentSlot(rollout, "rollout", self.rules, seed)
        self._play_out: PlayOut | BatchPlayOut | None = None
        self._play_out_scores: tuple[int, ...] | None = None
        """The scores the scalar ``_play_out``'s observations show (it is rebuilt when they change)."""
        self.table = ActionTable(self.rules)
        self.tracker = ObservationTracker(self.rules)
        self._random = random.Random(seed)
        self.stats = {kind: KindStats() for kind in DECISION_KINDS}
        """Per kind of decision: searches, deviations from the base agent, fallbacks, seconds."""
        self.last_search: SearchRecord | None = None
        """The latest searched decision (``None`` until one is made)."""
        self._searched: SearchRecord | None = None
        """The search of the latest :meth:`act` (``None`` where it did not search)."""

    @property
    def base(self) -> Agent:
        """The agent of the decisions not searched, of the fallbacks, and of ``min_gain``'s reference."""
        return self._base.get()

    @property
    def rollout(self) -> Agent:
        """The policy that plays the sampled worlds out, in every seat."""
        return self._rollout.get()

    @property
    def searches(self) -> int:
        """Decisions decided by search, of every kind."""
        return sum(s.searches for s in self.stats.values())

    @property
    def fallbacks(self) -> int:
        """Searched-kind decisions left to the base agent, of every kind (see :class:`KindStats`)."""
        return sum(s.fallbacks for s in self.stats.values())

    @property
    def search_seconds(self) -> float:
        """Time spent in searches, in all."""
        return sum(s.seconds for s in self.stats.values())

    def seed(self, seed: int | None) -> None:
        super().seed(seed)
        self._random = random.Random(seed)
        self._base.reseed(seed)
        self._rollout.reseed(seed)

    def act(self, observation: dict[str, Any]) -> int:
        """The compact id of the chosen legal action."""
        legal_compact = np.flatnonzero(np.asarray(observation["action_mask"]))
        if len(legal_compact) == 0:
            raise ValueError("no legal action in the mask: is it this agent's turn?")
        vector = observation["observation"]
        self._searched = None
        base_action = self.table.universal[self.base.act(observation)]
        kind = KIND_OF_PHASE.get(self.tracker.phase(vector))
        if kind not in self.search:
            return self.table.compact[base_action]
        info = self.tracker.info_set(vector)
        if info is None:
            self.stats[kind].fallbacks += 1
            return self.table.compact[base_action]
        legal = [self.table.universal[int(a)] for a in legal_compact]
        candidates = self._candidates(kind, info, legal, base_action)  # the base agent's action among them
        unsearched = len(candidates) == 1 or (kind == "play" and info.contract == MISERE and not self.misere_play)
        action = base_action if unsearched else self._search(kind, info, legal, candidates, base_action, vector)
        if kind == "play":
            self.tracker.record_own_play(vector, info, action)
        return self.table.compact[action]

    def candidate_values(self) -> dict[int, float] | None:
        """Each candidate's mean over the worlds of the latest :meth:`act` (compact ids; points for
        the agent's side, the ``win_bonus`` included), where it searched: its :class:`SearchRecord`'s
        ``means``. ``None`` for a decision left to the base agent."""
        if self._searched is None:
            return None
        return {self.table.compact[action]: mean for action, mean in self._searched.means.items()}

    def _candidates(self, kind: str, info: InfoSet, legal: list[int], base_action: int) -> list[int]:
        """The legal actions the worlds are played out after: some bids, one of each run of equal cards."""
        if kind == "bid":
            return bid_candidates(legal, base_action)
        if kind == "play" and self.equal_cards:
            return play_candidates(info, legal, base_action)
        return legal

    def _search(self, kind: str, info: InfoSet, legal: list[int], candidates: list[int], base_action: int,
                vector: np.ndarray) -> int:
        """The candidate with the best mean over the worlds, if it beats ``base_action`` by ``min_gain``."""
        start = time.perf_counter()
        stakes = GameStakes(tuple(self._scores(vector, info.seat)), self.win_bonus, self.game_values)
        if self._play_out is None:  # the heuristic's playouts run in batches where numba is installed
            self._play_out = batch_play_out(self.rules, self.rollout)
        if not isinstance(self._play_out, BatchPlayOut) and self._play_out_scores != stakes.scores:
            self._play_out = policy_play_out(self.rules, self.rollout.act, stakes.scores)
            self._play_out_scores = stakes.scores
        # batched playouts wait for every world, to play them all in one batch, unless the search
        # is bounded in time: then each world's are played as it is drawn
        batch = self._play_out if isinstance(self._play_out, BatchPlayOut) and self.seconds is None else None
        worlds: list[Deal] = []
        values: list[dict[int, float]] = []
        sampler = self._sampler(kind, info, stakes)
        side = self.rules.side_of(info.seat)
        stats = self.stats[kind]
        drawn = 0
        while drawn < self.worlds_of[kind] and not (drawn and self.seconds is not None
                                                    and time.perf_counter() - start > self.seconds):
            world = sampler.sample(self._random)
            if sorted(world.legal_actions()) != sorted(legal):  # a safety net: never trust a bad world
                stats.fallbacks += 1
                return base_action
            worlds.append(world)
            if batch is None:
                values.append(world_action_values(world, candidates, side, self._play_out, self.solver_tricks,
                                                  stakes=stakes))
            drawn += 1
        if batch is not None:
            values = worlds_action_values(worlds, candidates, side, batch, self.solver_tricks, stakes)
        weights = self._world_weights(worlds, info, stakes)
        totals = dict.fromkeys(candidates, 0.0)
        for weight, world_values in zip(weights, values, strict=True):  # world by world: the same sums either way
            for action, value in world_values.items():
                totals[action] += weight * value
        total_weight = float(sum(weights))
        record = SearchRecord(kind, base_action, {a: t / total_weight for a, t in totals.items()}, drawn, base_action)
        chosen = base_action  # a tie keeps the base choice: its own reasons break it better than the id order
        if record.gain > 0 and record.gain >= self.min_gain[kind]:
            chosen = record.best
        self.last_search = self._searched = replace(record, chosen=chosen)
        stats.searches += 1
        stats.deviations += chosen != base_action
        stats.seconds += time.perf_counter() - start
        return chosen

    def _world_weights(self, worlds: list[Deal], info: InfoSet, stakes: GameStakes) -> list[float]:
        """Each world's weight in the means: 1, or with ``bid_weights`` the base network's likelihood of the bids."""
        if not self.bid_weights:
            return [1.0] * len(worlds)
        if self._likelihood is None:
            from agents.search.weighting import BidLikelihood  # torch: only a weighted search needs it

            self._likelihood = BidLikelihood(self.rules, self.base, self.bid_weights)
        return self._likelihood.weights(worlds, info, stakes.scores).tolist()

    def _sampler(self, kind: str, info: InfoSet, stakes: GameStakes) -> WorldSampler:
        """The worlds of a decision: the auction inference's, or at a card play with ``play_inference``
        those the opponents' card play allows, else uniform."""
        if self.inference is not None:
            return self.inference.sampler(info, list(stakes.scores))
        if kind == "play" and self.play_inference:
            own = self.rules.side_of(info.seat)
            opponents = [s for s in range(self.rules.num_players) if self.rules.side_of(s) != own]
            exclusions = play_exclusions(info, opponents)
            if exclusions:
                sampler, kept = inferred_sampler(info, exclusions)
                self.play_inferred[not kept] += 1
                return sampler
        return WorldSampler(info)

    def _scores(self, vector: np.ndarray, seat: int) -> list[int]:
        """The game scores per side as ``vector`` shows them (tens of points, ``seat``'s side first)."""
        relative = self.tracker.encoder.decode(vector)["scores"].tolist()
        k = self.rules.num_sides
        own = self.rules.side_of(seat)
        return [10 * int(relative[(side - own) % k]) for side in range(k)]
