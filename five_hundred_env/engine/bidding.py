"""§4 bidding: the bid order, the bids open to the player to act, and who bids next.

Pure functions over plain values; :class:`~five_hundred_env.engine.Deal` keeps the auction's
state and calls them.
"""

from __future__ import annotations

from five_hundred_env.actions import LAST_BID, MISERE, OPEN_MISERE, PASS, bid_action, bid_tricks, is_trick_bid
from five_hundred_env.rules import Rules

# Trick bids rank 0, 2, … 48 (by tricks, then S < C < D < H < NT); misère sits at 19, between
# every 7-trick bid (≤ 18) and every 8-trick bid (≥ 20); open misère at 45, between 10D (44)
# and 10H (46), or at 50 above everything.
NO_BID_RANK = -1
MISERE_RANK = 19
OPEN_MISERE_RANKS = {"between_10D_10H": 45, "highest": 50}


def bid_rank(action: int, rules: Rules) -> int:
    """The position of a bid in the bid order of docs/rules.md §4 (higher outranks lower)."""
    if action == MISERE:
        return MISERE_RANK
    if action == OPEN_MISERE:
        return OPEN_MISERE_RANKS[rules.open_misere]
    return 2 * (action - 1)


def legal_bids(rules: Rules, high_bid: int, holds_both_jokers: bool) -> list[int]:
    """The bids (and pass) open to a player while ``high_bid`` is the highest bid (-1: none);
    ``holds_both_jokers``: the player was dealt both jokers (``both_jokers_min_bid``)."""
    current = bid_rank(high_bid, rules) if high_bid >= 0 else NO_BID_RANK
    first_trick_bid = 1 + (current + 2) // 2 if current >= 0 else 1  # lowest trick bid above
    if holds_both_jokers:
        floor = bid_action(rules.both_jokers_min_bid, 0)  # type: ignore[arg-type]
        if current < bid_rank(floor, rules):
            # Both jokers dealt and the bid below the floor: no pass, no misère (§4).
            return list(range(max(first_trick_bid, floor), LAST_BID + 1))
    legal = [PASS, *range(first_trick_bid, LAST_BID + 1)]
    if rules.misere != "none" and current < MISERE_RANK and (
        rules.misere == "any_time" or (high_bid >= 0 and is_trick_bid(high_bid) and bid_tricks(high_bid) == 7)
    ):
        legal.append(MISERE)
    if rules.open_misere != "none" and current < OPEN_MISERE_RANKS[rules.open_misere]:
        legal.append(OPEN_MISERE)
    legal.sort()
    return legal


def next_bidder(rules: Rules, seat: int, passed: int, passes_in_row: int, num_bids: int, high_bidder: int) -> int:
    """The seat to bid after ``seat`` has bid, or -1 when the auction is over.

    ``passed``: the seats that have passed, as a bit set; ``passes_in_row``: passes since the last
    bid; ``num_bids``: calls made so far, passes included; ``high_bidder``: -1 while nobody bid.
    """
    n = rules.num_players
    if rules.bidding == "single_round":
        return -1 if num_bids == n else (seat + 1) % n  # dealer's left … dealer, once each
    if rules.rebid_after_pass:
        over = (high_bidder >= 0 and passes_in_row == n - 1) or passes_in_row == n
        return -1 if over else (seat + 1) % n
    # until_passed: passed players are skipped; it ends once every other player has passed.
    all_seats = (1 << n) - 1
    if passed == all_seats or (high_bidder >= 0 and passed | 1 << high_bidder == all_seats):
        return -1
    nxt = (seat + 1) % n
    while passed >> nxt & 1:
        nxt = (nxt + 1) % n
    return nxt
