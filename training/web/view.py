"""What the page is sent about the table: one seat's view, built from that seat's observation.

A player's view (:func:`player_view`) is made of two things only: the seat's own observation
vector (decoded by the heuristic's :class:`~agents.heuristic.view.ViewDecoder`, and its
``to_act`` slice read at the encoder's layout: the very input an agent gets)
and the :class:`PublicTable`, what everyone at the table knows (the names, the scores, the
announcements each seat heard). Nothing is read from the other hands, so a view cannot show
them; ``tests/test_web_api.py`` checks it by moving hidden cards and comparing the views. A
spectator (watch mode, replays) sees every hand: :func:`spectator_view` adds them from the deal.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agents.heuristic.view import TableView, ViewDecoder, card_tables
from five_hundred_env.actions import ActionTable
from five_hundred_env.cards import card_suit, card_to_str, is_joker, rank_letter
from five_hundred_env.engine import EFFECTIVE_SUIT, Deal, Phase
from five_hundred_env.render import card_groups
from five_hundred_env.rules import Rules

PHASES = ("bidding", "discard", "nominate", "play", "deal_over", "call")
"""The phase names of the observation's ``phase`` slice, in its order (``call``, the five-handed
partner call, only with five players)."""
RANK_TEXT = {"T": "10", "E": "11", "W": "12", "X": "13"}
"""How the page prints the ranks written with a letter for a two-digit number (§1, §10.1)."""


@functools.cache
def card_json(card: int, ctx: int, two_jokers: bool) -> dict[str, Any]:
    """A card as the page draws it: its §1 name, rank as printed on the card (``10`` … ``13`` for
    ``T E W X``), printed suit (0-3 S C D H, ``None`` for a joker) and whether it is a trump in the
    trump context ``ctx`` (framed in gold). Made once per card and context, and shared by every
    view that shows it: read it, never change it."""
    trump = ctx if ctx < 4 else -1
    name = card_to_str(card, two_jokers)
    joker = is_joker(card)
    return {"name": name,
            "rank": name if joker else RANK_TEXT.get(rank_letter(card), rank_letter(card)),
            "suit": None if joker else card_suit(card),
            "trump": trump >= 0 and EFFECTIVE_SUIT[ctx][card] == trump}


@functools.lru_cache(maxsize=4096)
def sorted_cards(cards: int, ctx: int, two_jokers: bool) -> tuple[dict[str, Any], ...]:
    """A set of cards sorted as a hand is shown: trumps first, then by suit, high cards first
    (shared, like :func:`card_json`: the views are rebuilt many times between two changes of a hand)."""
    return tuple(card_json(c, ctx, two_jokers) for _group, group_cards in card_groups(ctx, cards) for c in group_cards)


@dataclass
class PublicTable:
    """What every seat at the table knows, kept by the game session as the game goes."""

    names: list[str]
    agents: list[str | None]
    """The agent label of each seat (``None``: a person)."""
    scores: list[int]
    deal_number: int
    over: bool = False
    winners: list[int] = field(default_factory=list)
    """The winning sides, once the game is over."""
    stopped: bool = False
    """Whether the game deals no more though it is not over (one-deal games, a replay's end)."""
    auction: list[dict[str, Any]] = field(default_factory=list)
    """The current deal's bids in order, as ``{"seat", "bid"}``."""
    discarded: int = 0
    """How many cards the contractor has discarded this deal (each discard is announced)."""
    tricks: list[dict[str, Any]] = field(default_factory=list)
    """The current deal's finished tricks: ``{"cards": [{"seat", "card"}], "winner", "reason", "text"}``."""
    previous: dict[str, Any] | None = None
    """The deal before, once over: its ``text`` (contract, tricks, scores) and ``last_trick``."""


@functools.lru_cache(maxsize=64)  # a replayed record may bring rules of its own
def action_names(rules: Rules) -> tuple[str, ...]:
    """Each compact action's spelling (a bid's too: bids have the same compact and universal ids),
    made once per rule set (spelling an action each time was a fifth of a view's making)."""
    table = ActionTable(rules)
    return tuple(table.to_str(a) for a in range(len(table)))


class SeatViews:
    """Builds the views of one rule set's table (the decoders are made once)."""

    def __init__(self, rules: Rules) -> None:
        self.rules = rules
        self.decoder = ViewDecoder(rules, card_tables(rules))
        self.table = ActionTable(rules)
        self._names = action_names(rules)
        offset, (width,) = self.decoder.encoder.layout["to_act"]
        self._to_act = slice(offset, offset + width)
        self._sides = [rules.side_of(s) for s in range(rules.num_players)]
        self._two_jokers = rules.two_jokers

    def player_view(self, seat: int, vector: np.ndarray, mask: np.ndarray | None, public: PublicTable) -> dict[str, Any]:
        """The table as ``seat`` sees it, from its observation ``vector`` (and action ``mask`` when it
        is to act) and the public table; seats are absolute (0 … n-1)."""
        rules = self.rules
        n, two = rules.num_players, self._two_jokers
        v = self.decoder.decode(vector)

        def absolute(relative: int) -> int | None:
            return None if relative < 0 else (relative + seat) % n

        to_act_rows = np.flatnonzero(vector[self._to_act])
        to_act = None if public.over or not len(to_act_rows) else absolute(int(to_act_rows[0]))
        contractor = absolute(v.contractor)
        sitting_out = [s for s in range(n) if v.out >> ((s - seat) % n) & 1]
        mates = {absolute(m) for m in v.mates}
        called_partner = self._called_partner(seat, v, absolute)
        phase = PHASES[v.phase]
        seats = []
        for s in range(n):
            relative = (s - seat) % n
            held = rules.hand_size - v.played[relative].bit_count()
            if phase == "discard" and s == contractor:
                held += rules.kitty_size - public.discarded
            seats.append({"seat": s, "name": public.names[s], "agent": public.agents[s], "side": self._sides[s],
                          "you": s == seat, "partner": s in mates, "called_partner": s == called_partner,
                          "dealer": relative == v.dealer, "to_act": s == to_act, "tricks": v.tricks_won[relative],
                          "held": held, "sits_out": s in sitting_out,
                          "contractor": s == contractor, "hand": None})
        seats[seat]["hand"] = sorted_cards(v.hand, v.ctx, two)
        contract = None
        if contractor is not None:
            contract = {"bid": self._names[v.contract], "contractor": contractor, "trump": v.trump,
                        "nominated": v.joker_suit, "sitting_out": sitting_out,
                        "called": card_json(v.called, v.ctx, two) if v.called >= 0 else None,
                        "partner": called_partner,
                        # the contractor knows its discards: a discard called means playing alone (§10.5)
                        "alone": v.contractor == 0 and v.called >= 0 and bool(v.discards >> v.called & 1)}
        exposed = None
        if v.exposed:
            exposed = {"seat": contractor, "cards": sorted_cards(v.exposed, v.ctx, two)}
        legal = [] if mask is None or public.over else [self._names[a] for a in np.flatnonzero(mask).tolist()]
        return {
            "seat": seat, "phase": "game_over" if public.over else phase, "to_act": to_act,
            "deal_number": public.deal_number, "seats": seats, "contract": contract,
            "auction": public.auction, "kitty": sorted_cards(v.kitty, v.ctx, two),
            "discards": sorted_cards(v.discards, v.ctx, two),
            "exposed": exposed, "trick": [{"seat": absolute(r), "card": card_json(c, v.ctx, two)} for r, c in v.trick],
            "led_suit": v.led_suit if v.led_suit >= 0 else None, "tricks": public.tricks, "previous": public.previous,
            "scores": public.scores, "over": public.over, "stopped": public.stopped, "winners": public.winners,
            "legal": legal,
        }

    def _called_partner(self, seat: int, v: TableView, absolute: Callable[[int], int | None]) -> int | None:
        """The five-handed partner of the deal (§10.5) as ``seat`` knows it from its observation
        (§10.8): the holder of the called card knows from the call, the others once the card is
        played (with a seat call, everyone from the call); ``None`` while unknown, and without a call."""
        if not self.rules.has_partner_call or v.contractor < 0:
            return None
        if v.contractor == 0:
            return absolute(v.mates[0]) if v.mates else None
        return seat if v.mates else absolute(v.against)

    def spectator_view(self, deal: Deal, vector: np.ndarray, observer: int, mask: np.ndarray | None,
                       public: PublicTable) -> dict[str, Any]:
        """The table with every hand face up, the dealt kitty and the discards (watch mode and
        replays): the view of ``observer`` (the seat to act) with the deal's hidden cards added."""
        view = self.player_view(observer, vector, mask, public)
        two = self._two_jokers
        for entry, hand in zip(view["seats"], deal.hands, strict=True):
            entry["hand"] = sorted_cards(hand, deal.ctx, two)
            entry["you"] = entry["partner"] = False
            entry["called_partner"] = entry["seat"] == deal.partner
        if view["contract"] is not None:  # every hand shown: the partner of the call is no secret
            view["contract"].update(partner=deal.partner if deal.partner >= 0 else None,
                                    alone=deal.called_card >= 0 and deal.partner < 0)
        view.update(seat=None, legal=[], kitty=sorted_cards(deal.kitty, deal.ctx, two),
                    discards=sorted_cards(deal.discards, deal.ctx, two))
        if deal.phase == Phase.NOMINATE:  # the spectator sees the nomination turn as it is
            view["phase"] = "nominate"
        return view


__all__ = ["PHASES", "PublicTable", "SeatViews", "action_names", "card_json", "sorted_cards"]
