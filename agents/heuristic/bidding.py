"""Bidding (docs/rules.md §4): every legal bid gets an expected score, and the best one is bid when it
beats the expected score of passing.

The side's tricks in a strain are normal around the calibrated estimate
(:mod:`agents.heuristic.calibration`), moved by what the partner's bids showed and by the
opponents' strains. A contract's expected score is computed with the engine's §8 scoring
functions (:mod:`five_hundred_env.scoring`), so every scoring option is honoured: the contract's
value made or lost, a made slam, and the defence points the other sides take. With three players
an opponent's result is shared between the two other sides, so it counts half (the zero-sum
result is a side's score less the mean of the others'). The game's ends count too (§9).
"""

from __future__ import annotations

import math
from typing import NamedTuple

from agents.heuristic.calibration import calibration_for
from agents.heuristic.evaluation import HandEstimate, HandEvaluator
from agents.heuristic.view import TableView
from five_hundred_env.actions import FIRST_BID, NT, OPEN_MISERE, PASS, bid_strain, bid_tricks, is_trick_bid
from five_hundred_env.engine import bid_rank
from five_hundred_env.rules import Rules
from five_hundred_env.scoring import contract_score, defence_score, is_misere

_MISERE_PARTNER_TRICKS = 0.8
"""Tricks a partner who bid misère is short of an average hand."""
_SHOWN_EXTRA = 0.3
"""A trick bid shows this much more than the tricks bid (this agent bids what it expects to make)."""
_MISERE_PASS_SHARE = 0.3
"""Passing on a misère: this share of its value is expected for (the partner's) or against
(an opponent's) this side."""


def _phi(x: float) -> float:
    """The standard normal distribution function."""
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


class _ContractScores(NamedTuple):
    """A contract's §8 scores under the rules, from :mod:`five_hundred_env.scoring` (tabled once:
    the bidding weighs every legal bid at every decision)."""

    made: int  # the contracting side's score, made with the tricks bid
    slam: int  # made with every trick
    lost: int
    defence_made: int  # one other side's defence score when made: per trick it takes (trick
    defence_lost: int  # contracts), or in all with the contractor taking no trick / one (misère)


def _contract_scores(rules: Rules, contract: int) -> _ContractScores:
    misere = is_misere(contract)
    made = contract_score(rules, contract, True, 0 if misere else bid_tricks(contract))
    # defence: per trick the side takes in a trick contract; in a misère, in all, the contractor
    # having taken no trick (made) or one (lost)
    side_tricks, contractor_tricks_lost = (0, 1) if misere else (1, 0)
    return _ContractScores(
        made=made,
        slam=made if misere else contract_score(rules, contract, True, rules.hand_size),
        lost=contract_score(rules, contract, False, 0),
        defence_made=defence_score(rules, contract, True, side_tricks, 0),
        defence_lost=defence_score(rules, contract, False, side_tricks, contractor_tricks_lost),
    )


class _Auction(NamedTuple):
    """What the auction so far tells this seat (relative seats)."""

    high: int  # the highest bid so far (0: none)
    high_seat: int
    partner_best: int  # the partner's highest bid (0: none, or no partner)
    partner_passed: bool
    opponent_strains: frozenset[int]  # strains an opponent bid: they hold its high cards


class Bidder:
    """Chooses bids for one rule set from the hand's estimates and the auction."""

    def __init__(self, rules: Rules, evaluator: HandEvaluator) -> None:
        self.rules = rules
        self.evaluator = evaluator
        self.fit = calibration_for(rules.preset)
        self.mates = rules.partners_of(0)  # the observer is relative seat 0; a called partner is unknown yet
        self.share = 1.0 / (rules.num_sides - 1)  # an opponent's result, shared by the other sides
        self._scores = {a: _contract_scores(rules, a) for a in range(FIRST_BID, OPEN_MISERE + 1)}

    def bid(self, v: TableView, legal: list[int]) -> int:
        """The legal bid with the best expected score, if it beats the expected score of passing.

        Passing is worth what the current contract is expected to score for (the partner's) or
        against (an opponent's) this side.
        """
        bids, pass_ev = self.expected_results(v, legal)
        best_action, best_ev = PASS, -1e9
        for a, e in bids.items():
            if e > best_ev:
                best_action, best_ev = a, e
        if best_action != PASS and (best_ev > pass_ev + self.fit["margin"] or PASS not in legal):
            return best_action
        return PASS if PASS in legal else best_action

    def expected_results(self, v: TableView, legal: list[int]) -> tuple[dict[int, float], float]:
        """The expected zero-sum result of each legal bid (in ``legal`` order), and of passing."""
        ev = self.evaluator.evaluate(v.hand)
        auction = self._read_auction(v)
        own_score = 10 * v.scores[0] if v.scores else 0
        bids = {}
        for a in legal:
            e = self._bid_expectation(a, ev, auction, own_score)
            if e is not None:
                bids[a] = e
        return bids, self._pass_expectation(ev, auction)

    def _read_auction(self, v: TableView) -> _Auction:
        rules = self.rules
        mates = self.mates
        high, high_seat = 0, -1
        for b, r in v.bids:
            if high == 0 or bid_rank(b, rules) > bid_rank(high, rules):
                high, high_seat = b, r
        partner_bids = [b for b, r in v.bids if r in mates]
        return _Auction(
            high=high,
            high_seat=high_seat,
            partner_best=max(partner_bids, key=lambda b: bid_rank(b, rules)) if partner_bids else 0,
            partner_passed=bool(mates) and all(v.passed >> m & 1 for m in mates),
            opponent_strains=frozenset(bid_strain(b) for b, r in v.bids if r != 0 and r not in mates and is_trick_bid(b)),
        )

    # -- tricks ------------------------------------------------------------------------------------
    def _tricks(self, own: float, strain: int) -> tuple[float, float]:
        """Expected side tricks (and their spread) for an own-hand estimate, partner unknown."""
        a, b, sigma = self.fit["nt"] if strain == NT else self.fit["suit"]
        return a + b * own, sigma

    def _shown_own(self, bid: int) -> float:
        """The own-hand estimate a trick bid shows (this agent bids about what it expects to make)."""
        a, b, _sigma = self.fit["nt"] if bid_strain(bid) == NT else self.fit["suit"]
        return (bid_tricks(bid) - a) / b + _SHOWN_EXTRA

    def _support(self, own: float, strain: int) -> float:
        """The tricks a partner's hand of estimate ``own`` adds beyond an average one in ``strain``."""
        fit = self.fit
        avg = fit["own_avg_nt"] if strain == NT else fit["own_avg"]
        slope = fit["nt"][1] if strain == NT else fit["suit"][1]
        return fit["support"] * slope * (own - avg)

    def _side_tricks(self, ev: HandEstimate, auction: _Auction, strain: int) -> tuple[float, float]:
        """This side's expected tricks (and spread) in ``strain``, from the hand and the auction:
        the partner's bids add what they showed (in their strain), a pass or a misère subtracts."""
        fit = self.fit
        tricks, sigma = self._tricks(ev.own[strain], strain)
        if strain in auction.opponent_strains:
            tricks -= fit["opponent_strain"]
        if not self.mates:
            return tricks, sigma
        shown = auction.partner_best
        if shown and is_trick_bid(shown):
            if bid_strain(shown) == strain:
                tricks += self._support(self._shown_own(shown), strain)
            else:
                tricks += fit["other_suit_help"]
        elif shown:
            tricks -= _MISERE_PARTNER_TRICKS
        elif auction.partner_passed:
            tricks -= fit["pass_penalty"]
        return tricks, sigma

    # -- expected scores -----------------------------------------------------------------------------
    def _expected_contract_score(self, contract: int, p_made: float) -> float:
        """The contracting side's expected §8 contract score (a slam aside)."""
        scores = self._scores[contract]
        return scores.lost + p_made * (scores.made - scores.lost)

    def _expected_defence(self, contract: int, p_made: float, defence_tricks: float) -> float:
        """The §8 defence score one other side expects against ``contract``, the defenders sharing
        ``defence_tricks`` (a lost misère: the contractor took one trick)."""
        scores = self._scores[contract]
        made, lost = scores.defence_made, scores.defence_lost
        if not is_misere(contract):  # defence points are per trick: times the side's share of them
            tricks = defence_tricks * self.share
            made, lost = made * tricks, lost * tricks
        return lost + p_made * (made - lost)

    def _trick_contract(self, contract: int, tricks: float, sigma: float) -> tuple[float, float]:
        """P(make) of a trick contract for a side expecting ``tricks``, and its expected result
        (its contract score less the defence points the other sides take)."""
        p = _phi((tricks + 0.5 - bid_tricks(contract)) / sigma)
        defence = max(0.0, self.rules.hand_size - tricks)
        return p, self._expected_contract_score(contract, p) - self._expected_defence(contract, p, defence)

    def _slam_gain(self, contract: int, tricks: float, sigma: float) -> float:
        """What taking every trick is expected to add to the contract's score (``slam_bonus``)."""
        scores = self._scores[contract]
        gain = scores.slam - scores.made
        return gain * _phi((tricks - (self.rules.hand_size - 0.5)) / sigma) if gain else 0.0

    def _misere_probability(self, danger: float, open_: bool) -> float:
        """P(make) of a (open) misère for a hand of this danger: the calibrated logistic."""
        a, b = self.fit["open_misere"] if open_ else self.fit["misere"]
        return 1.0 / (1.0 + math.exp(-(a - b * danger)))

    def _bid_expectation(self, a: int, ev: HandEstimate, auction: _Auction, own_score: int) -> float | None:
        """The expected result of bidding ``a`` (``None`` for a pass): the contract's, with a lost
        game (the score sinking to the losing score) and a won one (reaching the target) counted."""
        rules = self.rules
        if is_trick_bid(a):
            tricks, sigma = self._side_tricks(ev, auction, bid_strain(a))
            p, e = self._trick_contract(a, tricks, sigma)
            e += self._slam_gain(a, tricks, sigma)
        elif is_misere(a):
            p = self._misere_probability(ev.open_danger if a == OPEN_MISERE else ev.danger, open_=a == OPEN_MISERE)
            e = self._expected_contract_score(a, p) - self._expected_defence(a, p, 0.0)
        else:
            return None
        scores = self._scores[a]
        if own_score + scores.lost <= rules.losing_score:
            e -= self.fit["game_end"] * (1 - p)
        if own_score + scores.made >= rules.target:
            e += 0.5 * self.fit["game_end"] * p
        return e

    def _pass_expectation(self, ev: HandEstimate, auction: _Auction) -> float:
        """The expected result of passing: the current contract's, for or against this side."""
        high = auction.high
        if not high:
            return 0.0
        value = self._scores[high].made
        if auction.high_seat in self.mates:
            if not is_trick_bid(high):
                return _MISERE_PASS_SHARE * value
            s = bid_strain(high)
            tricks, sigma = self._tricks(self._shown_own(high), s)
            tricks += self._support(ev.own[s], s)
            return self._trick_contract(high, tricks, sigma)[1]
        if not is_trick_bid(high):
            return -_MISERE_PASS_SHARE * value * self.share
        s = bid_strain(high)
        _t, sigma = self._tricks(0.0, s)
        # they bid what they expect to make; this hand's defence beyond the average spoils it
        theirs = bid_tricks(high) + _SHOWN_EXTRA - self.fit["defence_weight"] * (ev.defence[s] - self.fit["defence_avg"])
        p = _phi((theirs + 0.5 - bid_tricks(high)) / sigma)
        defence = max(0.0, self.rules.hand_size - theirs)
        return -self._expected_contract_score(high, p) * self.share + self._expected_defence(high, p, defence)
