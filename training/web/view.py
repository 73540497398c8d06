"""What the page is sent about the table: one seat's view, built from what that seat may know.

A player's view (:meth:`SeatViews.player_view`) is made of two things only: what the seat's
observation holds (§9), read from the deal — the public facts of the deal (auction, contract,
tricks, cards played, the exposed hand), the seat's own hand, the kitty and discards when it is
the contractor, the partner of a call once that seat knows it (§10.8) — and the
:class:`PublicTable`, what everyone at the table knows (the names, the scores, the
announcements each seat heard). (It was decoded from the observation vector, byte-for-byte the
same views at twice the cost.) Nothing is read from the other hands, so a view cannot show
them; ``tests/test_web_api.py`` checks it by moving hidden cards and comparing the views. A
spectator (watch mode, replays) sees every hand: :meth:`SeatViews.spectator_view` adds them from the deal.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from five_hundred_env.actions import (
    FIRST_NOMINATE,
    FIRST_PARTNER,
    MISERE,
    NO_NOMINATION,
    OPEN_MISERE,
    PASS,
    STRAINS,
    ActionTable,
    action_card,
    bid_strain,
    bid_tricks,
    is_card_action,
    is_joker_lead,
    is_nomination,
    is_partner_call,
    is_trick_bid,
    joker_lead_suit,
)
from five_hundred_env.cards import card_suit, card_to_str, is_joker, rank_letter
from five_hundred_env.engine import EFFECTIVE_SUIT, NO_TRUMP_CTX, Deal, Phase
from five_hundred_env.render import card_groups
from five_hundred_env.rules import Rules

PHASES = ("bidding", "discard", "nominate", "play", "deal_over", "call")
"""The phase names of the observation's ``phase`` slice, in its order (``call``, the five-handed
partner call, only with five players)."""
RANK_TEXT = {"T": "10", "E": "11", "W": "12", "X": "13"}
"""How the page prints the ranks written with a letter for a two-digit number (§1, §10.1)."""
SUIT_SYMBOLS = "♠♣♦♥"


def card_words(card: int, two_jokers: bool) -> str:
    """A card as a person reads it: ``10♥``, ``J♣``, ``the joker`` (the §1 notation is for typing)."""
    if is_joker(card):
        name = card_to_str(card, two_jokers)
        return "the joker" if name == "JK" else f"joker {name[-1]}"
    return RANK_TEXT.get(rank_letter(card), rank_letter(card)) + SUIT_SYMBOLS[card_suit(card)]


def action_words(action: int, two_jokers: bool, names: Sequence[str]) -> str:
    """A move as a person reads it: ``pass``, ``6♥``, ``7NT``, ``misère``, ``10♥``, ``the joker
    (leading ♠)``, ``nominates ♦``, ``player_3`` (a seat called, §10.5)."""
    if action == PASS:
        return "pass"
    if is_trick_bid(action):
        strain = bid_strain(action)
        return f"{bid_tricks(action)}{SUIT_SYMBOLS[strain] if strain < 4 else STRAINS[strain]}"
    if action in (MISERE, OPEN_MISERE):
        return "misère" if action == MISERE else "open misère"
    if is_card_action(action):
        return card_words(action_card(action), two_jokers)
    if is_joker_lead(action):
        return f"{card_words(action_card(action), two_jokers)} (leading {SUIT_SYMBOLS[joker_lead_suit(action)]})"
    if action == NO_NOMINATION:
        return "no nomination"
    if is_nomination(action):
        return f"nominates {SUIT_SYMBOLS[action - FIRST_NOMINATE]} for the joker"
    if is_partner_call(action):
        return names[action - FIRST_PARTNER]
    raise ValueError(f"no action has id {action!r}")


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
    presence: list[str | None]
    """Each person's presence at the table: ``awaited`` (their link not opened yet), ``here``,
    ``away`` (not seen for a while); ``None`` for an agent's seat."""
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
    """The deal before, once over: its ``result`` (:func:`deal_result`) and ``last_trick``."""


def deal_result(deal: Deal, scores: Sequence[int], names: Sequence[str]) -> dict[str, Any]:
    """A finished deal as the page tells it: the contract in words, its contractor, made or not,
    the called partner (public once the deal is over, §10.5) or ``alone``, each side's tricks and
    points, and the scores after it (``thrown_in`` when everyone passed)."""
    rules = deal.rules
    result: dict[str, Any] = {"thrown_in": deal.thrown_in, "change": list(deal.score_change or []), "scores": list(scores)}
    if not deal.thrown_in:
        result.update(contract=action_words(deal.contract, rules.two_jokers, names), contractor=deal.contractor,
                      made=deal.contract_made(), partner=deal.partner if deal.partner >= 0 else None,
                      alone=deal.called_card >= 0 and deal.partner < 0, tricks=deal.side_tricks())
    return result


def result_words(result: dict[str, Any], rules: Rules, names: Sequence[str]) -> str:
    """:func:`deal_result` in one line of the table talk."""
    sides = [" & ".join(names[s] for s in range(rules.num_players) if rules.side_of(s) == side)
             for side in range(rules.num_sides)]
    points = ", ".join(f"{side} {change:+d}" for side, change in zip(sides, result["change"], strict=True))
    if result["thrown_in"]:
        return f"everyone passed: the deal is thrown in ({points})"
    partner = (f" with {names[result['partner']]} as partner" if result["partner"] is not None
               else " alone" if result["alone"] else "")
    made = "made it" if result["made"] else "went down"
    return f"{names[result['contractor']]} bid {result['contract']}{partner} and {made}: {points}"


@functools.lru_cache(maxsize=64)  # a replayed record may bring rules of its own
def action_names(rules: Rules) -> tuple[str, ...]:
    """Each compact action's spelling (a bid's too: bids have the same compact and universal ids),
    made once per rule set (spelling an action each time was a fifth of a view's making)."""
    table = ActionTable(rules)
    return tuple(table.to_str(a) for a in range(len(table)))


class SeatViews:
    """Builds the views of one rule set's table."""

    def __init__(self, rules: Rules) -> None:
        self.rules = rules
        self.table = ActionTable(rules)
        self._names = action_names(rules)
        n = rules.num_players
        self._sides = [rules.side_of(s) for s in range(n)]
        self._mates = [frozenset(rules.partners_of(s)) for s in range(n)]
        self._two_jokers = rules.two_jokers
        self._calls = rules.has_partner_call

    def player_view(self, seat: int, deal: Deal, legal: Sequence[int] | None, public: PublicTable) -> dict[str, Any]:
        """The table as ``seat`` sees it: the deal's public facts, that seat's own cards (its hand;
        the kitty and discards when it is the contractor) and the partner of a call once that seat
        knows it (§5, §10.8), with the public table; ``legal``: its legal moves when it is to act.
        Read exactly what the seat's observation holds (§9), so that nothing hidden shows."""
        rules = self.rules
        n, two = rules.num_players, self._two_jokers
        phase_id = deal.phase if deal.phase != Phase.GAME_OVER else Phase.DEAL_OVER
        contractor = deal.contractor if deal.contractor >= 0 else None
        if phase_id == Phase.NOMINATE and seat != contractor:
            phase_id = Phase.PLAY  # that the contractor may nominate would show it holds the joker (§7)
        phase = PHASES[phase_id]
        to_act = None if public.over or deal.to_act < 0 else deal.to_act
        mates, against = self._mates[seat], None
        if self._calls and deal.partner >= 0 and (deal.partner_revealed or seat == deal.partner):
            if seat == deal.partner:
                mates = frozenset((deal.contractor,))
            elif seat == contractor:
                mates = frozenset((deal.partner,))
            else:
                against = deal.partner
        called_partner = None
        if self._calls and contractor is not None:
            called_partner = (next(iter(mates), None) if seat == contractor
                              else seat if mates else against)
        trump = nominated = -1
        sitting_out: list[int] = []
        kitty = discards = exposed_cards = 0
        if contractor is not None:
            trump, nominated = deal.trump, deal.nominated
            sitting_out = sorted(deal.sitting_out_seats)
            if seat == contractor:  # nobody but the contractor sees the kitty or discards (§5)
                kitty, discards = deal.kitty, deal.discards
            if deal.exposed:
                exposed_cards = deal.hands[contractor]
        ctx = trump if trump >= 0 else NO_TRUMP_CTX + 1 + nominated if nominated >= 0 else NO_TRUMP_CTX
        seats = []
        for s in range(n):
            held = rules.hand_size - (deal.played[s].bit_count() if contractor is not None else 0)
            if phase == "discard" and s == contractor:
                held += rules.kitty_size - public.discarded
            seats.append({"seat": s, "name": public.names[s], "agent": public.agents[s], "side": self._sides[s],
                          "person": public.agents[s] is None, "presence": public.presence[s],
                          "you": s == seat, "partner": s in mates, "called_partner": s == called_partner,
                          "dealer": s == deal.dealer, "to_act": s == to_act,
                          "tricks": deal.tricks_won[s] if contractor is not None else 0,
                          "held": held, "sits_out": s in sitting_out,
                          "contractor": s == contractor, "hand": None})
        seats[seat]["hand"] = sorted_cards(deal.hands[seat], ctx, two)
        contract = None
        if contractor is not None:
            called = deal.called_card if self._calls else -1
            contract = {"bid": self._names[deal.contract], "contractor": contractor, "trump": trump if trump >= 0 else -1,
                        "nominated": nominated, "sitting_out": sitting_out,
                        "called": card_json(called, ctx, two) if called >= 0 else None,
                        "partner": called_partner,
                        # the contractor knows its discards: a discard called means playing alone (§10.5)
                        "alone": seat == contractor and called >= 0 and bool(discards >> called & 1)}
        exposed = None
        if exposed_cards:
            exposed = {"seat": contractor, "cards": sorted_cards(exposed_cards, ctx, two)}
        moves = [] if legal is None or public.over else [self._names[c] for c in sorted(self.table.compact[a] for a in legal)]
        return {
            "seat": seat, "phase": "game_over" if public.over else phase, "to_act": to_act,
            "deal_number": public.deal_number, "seats": seats, "contract": contract,
            "auction": public.auction, "kitty": sorted_cards(kitty, ctx, two),
            "discards": sorted_cards(discards, ctx, two),
            "exposed": exposed, "trick": [{"seat": s, "card": card_json(c, ctx, two)} for s, c in deal.trick],
            "led_suit": deal.led_suit if deal.trick else None, "tricks": public.tricks, "previous": public.previous,
            "scores": public.scores, "over": public.over, "stopped": public.stopped, "winners": public.winners,
            "legal": moves,
        }

    def spectator_view(self, deal: Deal, observer: int, public: PublicTable) -> dict[str, Any]:
        """The table with every hand face up, the dealt kitty and the discards (watch mode and
        replays): the view of ``observer`` (the seat to act) with the deal's hidden cards added."""
        view = self.player_view(observer, deal, None, public)
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


__all__ = ["PHASES", "PublicTable", "SeatViews", "action_names", "action_words", "card_json", "card_words", "deal_result",
           "result_words", "sorted_cards"]
