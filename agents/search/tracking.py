"""The information set of an observation: what a seat has seen, rebuilt from its observations alone.

One observation vector (:mod:`five_hundred_env.observation`) shows the auction, every card each
seat has played and the current trick, but not in which trick the earlier cards fell. A seat
that plays every trick sees every trick through its own turns, though: between two of its turns
exactly one trick ends, made of the cards before its own (seen at the first turn), its own card,
and the cards played since that are not in the new trick. :class:`ObservationTracker` keeps that
record per deal and seat and returns an :class:`~five_hundred_env.sampling.InfoSet` in *relative*
seats (the observer is seat 0, as in the vector; the game is the same up to that rotation).

A deal is told apart from another by the observer's own cards as dealt, so one tracker serves
several seats and deals. In the auction and the kitty phase the observation alone makes the
information set (no card has been played yet). When the record cannot be completed (the agent joined a deal after its
first trick) :meth:`ObservationTracker.info_set` returns ``None`` and the caller falls back on
another policy.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from five_hundred_env.actions import FIRST_NOMINATE, PASS, action_card, card_action, joker_lead_action, partner_action
from five_hundred_env.cards import mask_to_cards
from five_hundred_env.engine import EFFECTIVE_SUIT, SUITLESS, Deal, IllegalActionError, Phase, bid_rank
from five_hundred_env.observation import ObservationEncoder
from five_hundred_env.rules import Rules
from five_hundred_env.sampling import InfoSet, Play

MAX_TRACKED = 64
"""Deal records kept at once: beyond it the record played least recently is dropped (a seat's
record of the deal in progress is refreshed at each of its plays, so it is never the one)."""

_PHASES = (Phase.BIDDING, Phase.DISCARD, Phase.NOMINATE, Phase.PLAY, Phase.DEAL_OVER, Phase.CALL)
"""The rows of the observation's ``phase`` slice (the last one with five players only)."""


@dataclass
class _Record:
    """One seat's view of one deal so far."""

    plays: list[Play] = field(default_factory=list)
    """The plays of the finished tricks, in order."""
    pending: list[Play] = field(default_factory=list)
    """The current trick up to and including the seat's own last card."""
    played: list[int] = field(default_factory=list)
    """Each seat's played cards at the seat's last turn (its own card included)."""


class ObservationTracker:
    """Builds information sets from the observations a seat receives at each of its turns."""

    def __init__(self, rules: Rules) -> None:
        self.rules = rules
        self.encoder = ObservationEncoder(rules)
        self._records: dict[tuple[int, int], _Record] = {}
        offset, (width,) = self.encoder.layout["phase"]
        self._phase_slice = slice(offset, offset + width)

    def phase(self, vector: np.ndarray) -> Phase:
        """The phase the observation shows (read straight from its ``phase`` slice)."""
        return _PHASES[int(np.argmax(vector[self._phase_slice]))]

    def info_set(self, vector: np.ndarray) -> InfoSet | None:
        """The seat's information set at this observation (relative seats), or ``None`` if the
        seat's record of the deal is incomplete."""
        v = self.encoder.decode(vector)
        n = self.rules.num_players
        phase = _PHASES[int(np.argmax(v["phase"]))]
        hand = _mask(v["hand"])
        kitty, discards = _mask(v["kitty"]), _mask(v["discards"])
        played = _played(v, n)
        dealer = int(np.argmax(v["dealer"]))
        record = self._records.get(_key(v, dealer))
        if record is not None and any(old & ~now for old, now in zip(record.played, played, strict=True)):
            record = None  # left from an earlier play of the same deal (a duplicate board): start afresh
        contract = int(np.argmax(v["contract"])) + 1 if v["contract"].any() else -1
        contractor = int(np.argmax(v["contractor"])) if contract > 0 else -1
        bids = self._auction(v, dealer)
        if bids is None:
            return None
        joker_suit = int(np.argmax(v["joker_suit"])) if v["joker_suit"].any() else -1
        call, partner = self._call(v)
        info = InfoSet(
            rules=self.rules, seat=0, dealer=dealer, phase=phase, bids=bids, hand=hand, contractor=contractor,
            contract=contract, kitty=kitty if contractor == 0 else None, discards=discards if contractor == 0 else None,
            num_discards=discards.bit_count() if contractor == 0 else self.rules.kitty_size if phase == Phase.PLAY else 0,
            nomination=FIRST_NOMINATE + joker_suit if joker_suit >= 0 else None,
            joker_held=joker_suit >= 0 or phase == Phase.NOMINATE,  # only the contractor sees this phase (§7)
            exposed_hand=_mask(v["exposed"]) or None, call=call, partner=partner)
        if phase != Phase.PLAY:
            return info
        trick = self._current_trick(v, info)
        plays = self._finished_plays(record, played, trick, info)
        if plays is None:
            return None
        full = replace(info, plays=tuple(plays + trick))
        seen_played, voids = full.played_and_voids()
        shown = [int(np.dot(v["shown_void"][r], 1 << np.arange(4))) for r in range(n)]
        if seen_played != played or any(voids[r] & shown[r] != shown[r] for r in range(n)):
            return None  # the record disagrees with the observation: do not guess
        return full

    def record_own_play(self, vector: np.ndarray, info: InfoSet, action: int) -> None:
        """Remember the seat's own play: ``info`` is :meth:`info_set` of ``vector``, ``action``
        the universal action chosen there."""
        v = self.encoder.decode(vector)
        trick = self._current_trick(v, info)
        played = _played(v, self.rules.num_players)
        played[0] |= 1 << action_card(action)
        key = _key(v, info.dealer)
        self._records.pop(key, None)  # re-inserted last: the dict's order is the order of last play
        if len(self._records) >= MAX_TRACKED:
            del self._records[next(iter(self._records))]
        self._records[key] = _Record(
            plays=list(info.plays[: len(info.plays) - len(trick)]), pending=[*trick, (0, action)], played=played)

    # -- the pieces ------------------------------------------------------------------------------
    def _call(self, v: dict[str, np.ndarray]) -> tuple[int | None, int]:
        """The five-handed call (§10.5) as this seat saw it, and the partner if it knows it (relative seats)."""
        if "called" not in v:
            return None, -1
        partner = int(np.argmax(v["partner"])) if v["partner"].any() else -1
        if v["called"].any():
            return card_action(int(np.argmax(v["called"]))), partner
        if self.rules.partner_call == "seat" and partner >= 0:
            return partner_action(partner), partner
        return None, partner

    def _auction(self, v: dict[str, np.ndarray], dealer: int) -> tuple[tuple[int, int], ...] | None:
        """The auction in order, replayed on a stand-in deal to find whose turn each bid was."""
        rules = self.rules
        n = rules.num_players
        made = sorted(((b + 1, int(np.argmax(v["bids"][b]))) for b in range(v["bids"].shape[0]) if v["bids"][b].any()),
                      key=lambda bs: bid_rank(bs[0], rules))
        passes = {(h, r) for h in range(v["passes"].shape[0]) for r in range(n) if v["passes"][h][r]}
        deal = _stand_in(rules, dealer)
        out = []
        while deal.phase == Phase.BIDDING and (made or passes):
            seat = deal.to_act
            high = max(deal.high_bid, 0)
            if (high, seat) in passes:
                passes.discard((high, seat))
                action = PASS
            elif made and made[0][1] == seat:
                action = made.pop(0)[0]
            else:
                return None
            try:
                deal.apply_action(action)
            except IllegalActionError:
                return None
            out.append((seat, action))
        return tuple(out) if not made and not passes else None

    def _current_trick(self, v: dict[str, np.ndarray], info: InfoSet) -> list[Play]:
        """The current trick's plays, from its leader clockwise (a suitless joker lead names the suit led)."""
        n = self.rules.num_players
        if not v["leader"].any():
            return []
        leader = int(np.argmax(v["leader"]))
        led = int(np.argmax(v["led_suit"]))
        out: list[Play] = []
        for i in range(n):
            r = (leader + i) % n
            cards = _mask(v["trick"][r])
            if cards:
                card = cards.bit_length() - 1
                lead_joker = not out and EFFECTIVE_SUIT[info.ctx][card] == SUITLESS
                out.append((r, joker_lead_action(card, led) if lead_joker else card_action(card)))
        return out

    def _finished_plays(self, record: _Record | None, played: list[int], trick: list[Play],
                        info: InfoSet) -> list[Play] | None:
        """The plays of the finished tricks: the record's, plus the trick that ended since."""
        in_trick = sum(1 << action_card(a) for _r, a in trick)
        if record is None:  # first turn in play: only the current trick may have been played
            return [] if sum(played) == in_trick else None
        n = self.rules.num_players
        ended = list(record.pending)
        later = [played[r] & ~record.played[r] & ~in_trick for r in range(n)]
        seat = ended[-1][0]
        size = info.trick_size()
        while len(ended) < size:
            seat = (seat + 1) % n
            if seat in info.sitting_out():
                continue  # the team-mates sitting out a misère (§7)
            if later[seat].bit_count() != 1:
                return None
            ended.append((seat, card_action(later[seat].bit_length() - 1)))
        if sum(m.bit_count() for m in later) != len(ended) - len(record.pending):
            return None
        return [*record.plays, *ended]


def _played(v: dict[str, np.ndarray], n: int) -> list[int]:
    return [_mask(v["played"][r]) for r in range(n)]


def _key(v: dict[str, np.ndarray], dealer: int) -> tuple[int, int]:
    """A deal and seat told apart by the dealer and the seat's cards as dealt (kitty excluded)."""
    cards = _mask(v["hand"]) | _mask(v["played"][0]) | _mask(v["discards"])
    return dealer, cards & ~_mask(v["kitty"])


def _mask(bits: np.ndarray) -> int:
    return sum(1 << int(i) for i in np.flatnonzero(bits.reshape(-1)))


def _stand_in(rules: Rules, dealer: int) -> Deal:
    """A deal with the jokers in the kitty: every auction is legal on it (both_jokers_min_bid)."""
    cards = mask_to_cards(rules.deck)[::-1]
    k, size = rules.kitty_size, rules.hand_size
    kitty = sum(1 << c for c in cards[:k])
    hands = [sum(1 << c for c in cards[k + i * size:k + (i + 1) * size]) for i in range(rules.num_players)]
    return Deal(rules, hands, kitty, dealer)
