"""§9 and §10.7 the game to 500: deals in turn, the dealer rotating, scores per side, and who wins."""

from __future__ import annotations

import operator
import random
from collections.abc import Sequence

from five_hundred_env.engine.deal import Deal
from five_hundred_env.engine.phase import IllegalActionError, Phase
from five_hundred_env.rules import Rules, make_rules

MAX_THROWN_IN_IN_ROW = 20
"""A game stops dealing (unfinished) after this many thrown-in deals in a row (§4: all passed)."""


class Game:
    """A game to 500 (docs/rules.md §9): deals in turn, the dealer rotating, scores per side.

    ``Game(rules, seed=s)`` draws the first dealer and every shuffle from one seeded generator;
    ``first_deal`` (a :class:`Deal`) and ``scores`` set up any position instead. ``deal`` is the
    deal in progress; ``legal_actions``/``apply_action`` act on it and move on to the next deal
    when one ends, until the game is over (or :attr:`dealing_stopped`: ``max_deals`` deals have
    been played, or :data:`MAX_THROWN_IN_IN_ROW` deals in a row were thrown in; then the last deal
    stays the current one, over, with nobody to act).
    """

    def __init__(
        self,
        rules: Rules | str | None = None,
        seed: int | None = None,
        *,
        first_deal: Deal | None = None,
        scores: Sequence[int] | None = None,
        rng: random.Random | None = None,
        max_deals: int | None = None,
    ) -> None:
        if rules is None or isinstance(rules, str):
            rules = make_rules(rules or "australian")
        self.rules = rules
        self.rng = rng if rng is not None else random.Random(None if seed is None else whole_number(seed, "seed"))
        if max_deals is not None and whole_number(max_deals, "max_deals") < 1:
            raise ValueError(f"max_deals must be a positive integer or None, got {max_deals!r}")
        self.max_deals = None if max_deals is None else operator.index(max_deals)
        """Stop dealing after this many deals (the game is then unfinished); None: play to the end."""
        self.scores = [0] * rules.num_sides if scores is None else check_scores(rules, scores)
        self.starting_scores = list(self.scores)
        self.winners: list[int] = []
        """The winning sides, once the game is over."""
        self.deals: list[Deal] = []
        """Every deal of the game, the current one last."""
        self._over = False
        self.upcoming_deals: list[Deal] = []
        """Deals to play next instead of shuffling (replays fill it); each must have the next dealer."""
        if first_deal is not None:
            if first_deal.rules != rules:
                raise ValueError("the first deal was made for other rules")
            self.deals.append(first_deal)
        else:
            self._start_deal(self.rng.randrange(rules.num_players))

    def clone(self) -> Game:
        """An independent copy of the game: the current deal cloned, finished deals shared (they
        no longer change), and the random generator copied so the copy deals the same next deals."""
        copy = Game.__new__(Game)
        copy.rules = self.rules
        copy.rng = random.Random()
        copy.rng.setstate(self.rng.getstate())
        copy.max_deals = self.max_deals
        copy.scores = self.scores.copy()
        copy.starting_scores = self.starting_scores.copy()
        copy.winners = self.winners.copy()
        copy.deals = [*self.deals[:-1], self.deals[-1].clone()] if self.deals else []
        copy._over = self._over
        copy.upcoming_deals = [d.clone() for d in self.upcoming_deals]
        return copy

    @property
    def deal(self) -> Deal:
        """The deal in progress (or the last one, once the game is over)."""
        return self.deals[-1]

    @property
    def is_over(self) -> bool:
        """Whether the game has been won (an unfinished game that stopped dealing is not over)."""
        return self._over

    @property
    def phase(self) -> Phase:
        """The current deal's phase, or ``GAME_OVER``."""
        return Phase.GAME_OVER if self._over else self.deal.phase

    @property
    def to_act(self) -> int:
        """The seat to act, or -1 when nobody is (the game over, or dealing stopped)."""
        return -1 if self._over else self.deal.to_act

    def legal_actions(self) -> list[int]:
        """The legal universal action ids of the seat to act (see :meth:`Deal.legal_actions`)."""
        return [] if self._over else self.deal.legal_actions()

    def apply_action(self, action: int) -> None:
        """Apply an action to the current deal; at its end score it and deal the next one."""
        if self._over:
            raise IllegalActionError(f"illegal action {action!r}: the game is over")
        deal = self.deal
        deal.apply_action(action)
        if deal.is_over:
            self._end_of_deal(deal)
            if not self._over and not self.dealing_stopped:
                self._start_deal((deal.dealer + 1) % self.rules.num_players)

    @property
    def dealing_stopped(self) -> bool:
        """Whether the game deals no more though it is not over (it is then unfinished): after
        ``max_deals`` deals, or after :data:`MAX_THROWN_IN_IN_ROW` thrown-in deals in a row (players
        who always pass would otherwise deal forever, keeping every deal in memory)."""
        deals = self.deals
        if not deals[-1].is_over or self._over:
            return False
        if self.max_deals is not None and len(deals) >= self.max_deals:
            return True
        return len(deals) >= MAX_THROWN_IN_IN_ROW and all(d.thrown_in for d in deals[-MAX_THROWN_IN_IN_ROW:])

    def _start_deal(self, dealer: int) -> None:
        if self.upcoming_deals:
            deal = self.upcoming_deals.pop(0)
            if deal.dealer != dealer:
                raise ValueError(f"the next deal must be dealt by seat {dealer}, not {deal.dealer}")
        else:
            deal = Deal.new(self.rules, self.rng, dealer)
        self.deals.append(deal)

    # -- §9 winning the game -----------------------------------------------------------------------
    def _end_of_deal(self, deal: Deal) -> None:
        if deal.thrown_in:
            return
        for side, change in enumerate(deal.score_change or ()):
            self.scores[side] += change
        self.winners = game_winners(self.rules, self.scores, deal)
        self._over = bool(self.winners)

    def winning_seats(self) -> list[int]:
        """The seats of the winning sides (both partners of a winning team)."""
        return [s for s in range(self.rules.num_players) if self.rules.side_of(s) in self.winners]


def game_winners(rules: Rules, scores: Sequence[int], deal: Deal) -> list[int]:
    """§9 (and §10.7): the sides that win the game when ``deal`` (over, not thrown in) has just
    brought the side scores to ``scores``; empty while the game goes on."""
    # The contracting team's sides: the contractor's, and a five-handed partner's (§10.7).
    team = sorted({rules.side_of(seat) for seat in deal.contracting_seats()})
    return contract_winners(rules, scores, team, deal.contract_made())


def contract_winners(rules: Rules, scores: Sequence[int], team: Sequence[int], made: bool) -> list[int]:
    """:func:`game_winners` from what it needs of the deal: the contracting team's sides (sorted)
    and whether the contract was made (for a search that plays deals out where no ``Deal`` is kept)."""
    if rules.win_needs_contract:
        reached = [s for s in team if scores[s] >= rules.target] if made else []
    else:
        reached = [s for s in range(rules.num_sides) if scores[s] >= rules.target]
        if len(reached) > 1:
            reached = [s for s in reached if s in team] or _highest(scores, reached)
    if reached:
        return reached
    if any(s <= rules.losing_score for s in scores):
        sides = range(rules.num_sides)
        others = [s for s in sides if scores[s] > rules.losing_score]
        if rules.has_partners:  # the other team wins (§9, §10.7)
            return others or _highest(scores, sides)
        return _highest(scores, others or sides)  # players alone: the highest score among the others (§10.7, §10.9)
    return []


def _highest(scores: Sequence[int], sides: Sequence[int] | range) -> list[int]:
    best = max(scores[s] for s in sides)
    return [s for s in sides if scores[s] == best]


def whole_number(value: object, what: str) -> int:
    """``value`` as a plain ``int``: any integer type (numpy's included), never a bool, a float or
    text; anything else is a ``ValueError`` naming ``what`` and the value."""
    if not isinstance(value, bool):
        try:
            return operator.index(value)  # type: ignore[arg-type]
        except TypeError:
            pass
    raise ValueError(f"{what} must be whole numbers (integers), got {value!r} ({type(value).__name__})")


def check_scores(rules: Rules, scores: Sequence[int]) -> list[int]:
    """Validate starting scores given per seat (partners equal) or per side; return per side."""
    if isinstance(scores, str) or not isinstance(scores, Sequence):
        raise ValueError(f"scores must be a list of numbers, got {scores!r}")
    values = [whole_number(v, "scores") for v in scores]
    if len(values) == rules.num_players and rules.has_partners:
        for seat in range(rules.num_players):
            for partner in rules.partners_of(seat):
                if values[seat] != values[partner]:
                    raise ValueError(f"partners must have equal scores: seat {seat} has {values[seat]}, "
                                     f"its partner (seat {partner}) {values[partner]}")
        values = [values[rules.seats_of(side)[0]] for side in range(rules.num_sides)]
    if len(values) != rules.num_sides:
        raise ValueError(f"scores need one entry per seat ({rules.num_players}), got {len(values)}")
    # A side at the target from defence points alone has not won while a contract is needed (§9).
    top = float("inf") if rules.win_needs_contract else rules.target
    if any(v >= top or v <= rules.losing_score for v in values):
        raise ValueError(f"starting scores {values} end the game at once: each must be above "
                         f"{rules.losing_score}" + ("" if rules.win_needs_contract else f" and below {rules.target}"))
    return values
