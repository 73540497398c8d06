"""§8 and §10.6 scoring: what a finished deal is worth to each side, as pure functions.

The engine scores every deal through :func:`deal_score`; agents that reason about expected
scores (the heuristic's bidding) call the same functions, so a scoring rule lives here once.
"""

from __future__ import annotations

from collections.abc import Sequence

from five_hundred_env.actions import MISERE, NT, OPEN_MISERE, bid_strain, bid_tricks, bid_value
from five_hundred_env.rules import Rules

SLAM_VALUE = 250
"""A made slam below this value scores it instead (docs/rules.md §8, ``slam_bonus``)."""

CONTRACT_TYPES = ("suit", "no_trumps", "misere")


def zero_sum_result(change: Sequence[float], side: int) -> float:
    """``side``'s score ``change`` minus the mean change of the other sides: the environment's
    ``zero_sum`` reward before scaling (``Deal.zero_sum_result``)."""
    k = len(change)
    return float(change[side] - (sum(change) - change[side]) / (k - 1))


def win_bonus_share(num_sides: int, winners: Sequence[int], bonus: float, side: int) -> float:
    """``side``'s share of a game-winning ``bonus`` that each of the ``winners`` (sides) gains, made
    zero-sum like the points (:func:`zero_sum_result`); 0 while the game goes on (no winners). The
    search's and expert iteration's optional value of winning the game (§9)."""
    if not winners:
        return 0.0
    return zero_sum_result([bonus if s in winners else 0.0 for s in range(num_sides)], side)


def contract_type(contract: int) -> str:
    """``suit``, ``no_trumps`` or ``misere`` (open misère included) for a contract's bid id."""
    if contract in (MISERE, OPEN_MISERE):
        return "misere"
    return "no_trumps" if bid_strain(contract) == NT else "suit"


def is_misere(contract: int) -> bool:
    return contract in (MISERE, OPEN_MISERE)


def contract_made(contract: int, contractor_side_tricks: int, contractor_tricks: int) -> bool:
    """A trick contract is made when the contracting side takes at least the tricks bid; a
    misère when the contractor takes none (docs/rules.md §8)."""
    if is_misere(contract):
        return contractor_tricks == 0
    return contractor_side_tricks >= bid_tricks(contract)


def contract_score(rules: Rules, contract: int, made: bool, contractor_side_tricks: int) -> int:
    """The contracting side's score change: the bid's value won or lost, a made slam worth at
    least :data:`SLAM_VALUE` with ``slam_bonus``."""
    value = bid_value(contract, rules.misere_value)
    if (made and not is_misere(contract) and rules.slam_bonus
            and contractor_side_tricks == rules.hand_size and value < SLAM_VALUE):
        value = SLAM_VALUE
    return value if made else -value


def defence_score(rules: Rules, contract: int, made: bool, side_tricks: int, contractor_tricks: int) -> int:
    """A non-contracting side's score change: 10 per trick it took in a trick contract
    (``defence_tricks``), or 10 per trick the contractor took in a misère (``misere_defence``)."""
    if is_misere(contract):
        return 10 * contractor_tricks if rules.misere_defence == "10_per_declarer_trick" else 0
    if rules.defence_tricks == "10_per_trick" or (rules.defence_tricks == "only_when_lost" and not made):
        return 10 * side_tricks
    return 0


def deal_score(
    rules: Rules, contract: int, contractor: int, tricks_won: Sequence[int], partner: int = -1
) -> list[int]:
    """Each side's score change for a played-out contract, from the tricks each *seat* won.

    ``partner``: the five-handed contractor's called partner (§10.5), -1 for none. The contracting
    team (§10.6) is the contractor's side and, in a trick contract, the partner's; each of its
    sides scores the contract, each other side its defence on its own tricks.
    """
    sides = [0] * rules.num_sides
    for seat, won in enumerate(tricks_won):
        sides[rules.side_of(seat)] += won
    team = {rules.side_of(contractor)}
    if partner >= 0 and not is_misere(contract):
        team.add(rules.side_of(partner))
    team_tricks = sum(sides[side] for side in team)
    made = contract_made(contract, team_tricks, tricks_won[contractor])
    return [
        contract_score(rules, contract, made, team_tricks) if side in team
        else defence_score(rules, contract, made, sides[side], tricks_won[contractor])
        for side in range(rules.num_sides)
    ]
