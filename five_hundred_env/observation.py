"""The observation encoder: one player's information state as a flat ``int8`` vector.

The vector is oriented to the observer: *relative seat* ``r`` is the seat ``r`` places to the
observer's left, so the observer is always relative seat 0 (and, with four players, its partner
relative seat 2). Card slices are ``W`` wide, indexed by the universal card id of
:mod:`five_hundred_env.cards` (``suit·11 + rank``, ranks 4…A, suits S C D H; 44 = ``JK``/``JK1``,
45 = ``JK2``; 46-65 the extended ranks ``2 3 E W X``): W = 46 for the packs of ranks 4–A
(``australian``, ``italian_3p``, ``french_46``, ``two_handed``) and 66 for the five- and
six-handed packs (:attr:`Rules.card_slots`); cards not in the preset's deck are always 0. Every
slice but ``scores`` is 0/1.

=================  ============  =================================================================
slice              shape         meaning
=================  ============  =================================================================
``hand``           W             the observer's cards now (the kitty included once taken)
``phase``          5 (6)         bidding, discard, nominate, play, deal over, and with five
                                 players the partner call (the others see the contractor's
                                 nomination turn as play: it would show the joker)
``to_act``         n             the relative seat to act (none once the deal is over)
``dealer``         n             the dealer's relative seat
``bids``           27 × n        row ``b-1``: relative seat that made bid ``b`` (1-25 trick bids
                                 ``6S … 10NT``, 26 ``MISERE``, 27 ``OPEN_MISERE``)
``passes``         28 × n        row ``h``: relative seats that passed while the highest bid was
                                 ``h`` (0: no bid yet). With ``bids`` this is the whole auction.
``contract``       27            the contract's bid (row ``b-1``), once the auction is over
``contractor``     n             the contractor's relative seat
``trump``          5             S, C, D, H trumps; or no trumps (NT and misère)
``sitting_out``    n             the contractor's team-mates sitting out a misère (4 and 6 players)
``kitty``          W             the kitty as dealt, seen only by the contractor who took it
``discards``       W             the contractor's discards, seen only by the contractor
``joker_suit``     4             the suit nominated for the joker (§7)
``exposed``        W             the open-misère contractor's cards still in hand, once exposed
``played``         n × W         every card each relative seat has played this deal
``trick``          n × W         the card each relative seat has played to the current trick
``leader``         n             who led the current trick
``led_suit``       4             the suit led to the current trick (the suit a joker lead named)
``suits_led``      4             suits led (or named by a joker lead) so far this deal
``shown_void``     n × 4         suits each relative seat has failed to follow
``tricks_won``     n × 10        tricks won by each relative seat, as a thermometer
``scores``         sides         each side's game score ÷ 10 (rounded, clipped to ±127), the
                                 observer's side first, then the others clockwise
``tricks``         10 × W        row ``t``: the cards that fell in trick ``t`` (0-9), the current
                                 trick's included: with ``played`` (who played each card) this
                                 recalls the whole play, see below
``joker_leads``    10 × 4        row ``t``: the suit named when a suitless joker led trick ``t``
``called``         W             five players only: the card the contractor called (§10.5)
``partner``        n             five players only: the contractor's partner, once the observer
                                 knows it (§10.8): everyone from a seat call, or once the called
                                 card is played; the holder of the called card from the call
``seat``           n             five players only: the observer's own (absolute) seat, which
                                 ``PARTNER_s`` names (the other slices are relative)
=================  ============  =================================================================

The dead hand of ``two_handed`` is in no observation (nobody sees it, §10.8).

Perfect recall (``five_hundred_v1``). Everything the observer saw happen this deal can be read
back from the vector:

* the auction in order, from ``bids`` and ``passes``: the auction starts left of the dealer and
  goes clockwise (passed players skipped where they may not bid again, §4); each bid outranks the
  one before, so the bids sorted by rank (§4: misère, row 25, ranks between the 7- and the 8-trick
  bids; open misère where the preset puts it) are the bids in the order made, and a seat passes
  at most once while a given bid is highest, so at each turn ``passes[h]`` says whether the seat
  to act passed (``h`` the highest bid so far) or made the next bid;
* the play in order, from ``tricks`` and ``played``: trick ``t``'s cards are row ``t``, each one
  played by the seat whose ``played`` row holds it; the contractor leads trick 0, play goes
  clockwise (skipping a sitting-out partner), and each trick's winner, found with the card order
  of §6 (``trump``, ``joker_suit``) and the suit led (the leader's card's suit, or
  ``joker_leads[t]`` for a suitless joker lead), leads the next trick.

The contractor's discards are recalled as a set (``discards``): their order changes nothing in
the game. Earlier deals of a ``"game"`` episode are summed up by ``scores`` only.

The order and shapes above are :func:`slice_shapes`, the one source of the offsets: the encoder
writes every slice at ``layout[name]``'s offset, and :func:`layout_table` prints the offsets of
each preset (docs/environment.md carries that table). Slices are only ever added at the end, so
the offsets of the earlier ones never move (``tricks`` and ``joker_leads`` came with v1).

The ``tricks`` slice is a one-hot over the tricks per card, not a 4-bit trick index per card
(460 elements instead of 184): a network reads "the cards of trick ``t``" or "did this card
fall before that one" from it with one linear unit, where a binary index would need non-linear
decoding (and index 0 would read as "not played" without ``played``); it stays sparse, at most
one element per card (46) being set.

The whole vector is built as one Python integer of bits and unpacked once, so encoding costs a
few microseconds. :meth:`ObservationEncoder.decode` turns a vector back into named parts.
"""

from __future__ import annotations

import math
from collections import namedtuple
from collections.abc import Sequence

import numpy as np

from five_hundred_env.actions import PASS, ActionTable
from five_hundred_env.cards import JOKER1
from five_hundred_env.engine import EFFECTIVE_SUIT, SUITLESS, Deal, Phase
from five_hundred_env.rules import PRESETS, Rules, make_rules

NUM_BIDS = 27  # trick bids 1-25, MISERE 26, OPEN_MISERE 27
_THERMOMETER = [(1 << t) - 1 for t in range(11)]  # t tricks won -> t low bits set
NO_TRUMPS_ROW = 4
"""The row of the ``trump`` slice for no trumps (and misère), after the four suits."""


def slice_shapes(rules: Rules) -> dict[str, tuple[int, ...]]:
    """Every slice of the observation vector, in order, with its shape: the one source of the
    layout (the offsets are the running sums of the sizes)."""
    n = rules.num_players
    w = rules.card_slots
    shapes = {
        "hand": (w,),
        "phase": (6 if rules.has_partner_call else 5,),
        "to_act": (n,),
        "dealer": (n,),
        "bids": (NUM_BIDS, n),
        "passes": (NUM_BIDS + 1, n),
        "contract": (NUM_BIDS,),
        "contractor": (n,),
        "trump": (5,),
        "sitting_out": (n,),
        "kitty": (w,),
        "discards": (w,),
        "joker_suit": (4,),
        "exposed": (w,),
        "played": (n, w),
        "trick": (n, w),
        "leader": (n,),
        "led_suit": (4,),
        "suits_led": (4,),
        "shown_void": (n, 4),
        "tricks_won": (n, 10),
        "scores": (rules.num_sides,),
        "tricks": (rules.hand_size, w),
        "joker_leads": (rules.hand_size, 4),
    }
    if rules.has_partner_call:  # the partner call (§10.5, §10.8), whatever partner_call says
        shapes["called"] = (w,)
        shapes["partner"] = (n,)
        shapes["seat"] = (n,)
    return shapes


def observation_layout(rules: Rules) -> dict[str, tuple[int, tuple[int, ...]]]:
    """Each slice's name → (offset, shape), in vector order."""
    layout = {}
    offset = 0
    for name, shape in slice_shapes(rules).items():
        layout[name] = (offset, shape)
        offset += math.prod(shape)
    return layout


_Offsets = namedtuple("_Offsets", list(slice_shapes(Rules())))  # type: ignore[misc]
"""The offset of every slice, by name (attribute access is cheap in the encoder's hot path)."""


def layout_table(presets: Sequence[str] = tuple(PRESETS)) -> str:
    """A Markdown table of every slice's offset and size per preset (docs/environment.md)."""
    layouts = [observation_layout(make_rules(p)) for p in presets]
    lines = ["| slice | " + " | ".join(f"`{p}` offset (size)" for p in presets) + " |",
             "|---|" + "---|" * len(presets)]
    names = list(dict.fromkeys(name for layout in layouts for name in layout))  # five players add slices
    for name in names:
        cells = [f"{layout[name][0]} ({math.prod(layout[name][1])})" if name in layout else "–" for layout in layouts]
        lines.append(f"| `{name}` | " + " | ".join(cells) + " |")
    sizes = [str(sum(math.prod(shape) for _, shape in layout.values())) for layout in layouts]
    lines.append("| total | " + " | ".join(sizes) + " |")
    return "\n".join(lines)


class ObservationEncoder:
    """Encodes a deal from one seat's point of view; ``layout`` names every slice."""

    def __init__(self, rules: Rules) -> None:
        n = rules.num_players
        self.rules = rules
        self.n = n
        self.width = width = rules.card_slots
        """The width of a card slice (:attr:`Rules.card_slots`)."""
        self.layout: dict[str, tuple[int, tuple[int, ...]]] = observation_layout(rules)
        """Each slice's name → (offset, shape)."""
        self.size = sum(math.prod(shape) for _, shape in self.layout.values())
        self._at = _Offsets(**{name: self.layout[name][0] for name in _Offsets._fields})
        self.num_bits = self._at.scores
        """Where ``scores``, the one slice that is not 0/1, starts: every slice before it (and
        after it) is 0/1 and built as bits."""
        self._scores = slice(self._at.scores, self._at.scores + rules.num_sides)
        self._relative = [[(seat - observer) % n for seat in range(n)] for observer in range(n)]
        # Per observer, per absolute seat: where its row of played cards, void suits and tricks won goes.
        rows = [(self.layout[name][0], self.layout[name][1][1]) for name in ("played", "shown_void", "tricks_won")]
        self._seat_shifts = [[tuple(offset + width * r for offset, width in rows) for r in rel]
                             for rel in self._relative]
        self._trick_row = self.layout["trick"][1][1]
        self._auction_cache: dict[tuple[int, int], tuple[int, Deal, int]] = {}
        self._history: tuple[Deal | None, int, int] = (None, 0, 0)  # (deal, finished tricks, their recall bits)
        self._joker_leads = self._at.joker_leads - self._at.tricks  # in the recall bits, which start at "tricks"
        self.low = np.zeros(self.size, dtype=np.int8)
        self.high = np.ones(self.size, dtype=np.int8)
        self.low[self._scores] = -127
        self.high[self._scores] = 127
        # The global state shows the contractor's nomination turn as it is (see encode_state).
        self._unmask_nomination = 1 << (self._at.phase + Phase.PLAY) | 1 << (self._at.phase + Phase.NOMINATE)
        calls = rules.has_partner_call
        self._call_at = self.layout["called"][0] if calls else -1
        self._partner_at = self.layout["partner"][0] if calls else -1
        self._seat_at = self.layout["seat"][0] if calls else -1
        state_shapes = {"hands": (n, width), "kitty": (width,), "discards": (width,)}
        if rules.dead_hand_size:
            state_shapes["dead_hand"] = (width,)
        if calls:
            state_shapes["partner"] = (n,)  # the partner of the deal, known or not
        state_shapes["observation"] = (self.size,)
        self.state_layout: dict[str, tuple[int, tuple[int, ...]]] = {}
        """The global state's parts (:meth:`encode_state`): name → (offset, shape)."""
        offset = 0
        for name, shape in state_shapes.items():
            self.state_layout[name] = (offset, shape)
            offset += math.prod(shape)

    def encode(
        self, deal: Deal, observer: int, scores: Sequence[int] | None = None, extra_bits: int = 0, extra_size: int = 0
    ) -> np.ndarray:
        """The observation vector of ``observer`` (a fresh ``int8`` array of :attr:`size`).

        ``extra_size`` further 0/1 elements, bit ``i`` of ``extra_bits`` being element
        ``size + i``, are appended and unpacked in the same call (the environment puts the action
        mask there, so that one unpack gives both).
        """
        vec = self.unpack(self.bits(deal, observer) | extra_bits << self.size, self.size + extra_size)
        if scores is not None and any(scores):
            vec[self._scores] = self.relative_scores(scores, observer)
        return vec

    def encode_turn(self, deal: Deal, table: ActionTable, scores: Sequence[int] | None = None) -> dict[str, np.ndarray]:
        """What the environment's ``observe()`` gives the seat to act — its observation and action
        mask — built straight from a deal, for search and rollouts that play deals out on the
        engine without the AEC bookkeeping."""
        mask, bit = 0, table.mask_bit
        for action in deal.legal_actions():
            mask |= bit[action]
        vec = self.encode(deal, deal.to_act, scores, mask, len(table))
        return {"observation": vec[:self.size], "action_mask": vec[self.size:]}

    def unpack(self, bits: int, count: int) -> np.ndarray:
        """A fresh ``int8`` 0/1 array of ``count`` elements: element ``i`` is bit ``i`` of ``bits``."""
        return np.unpackbits(
            np.frombuffer(bits.to_bytes((count + 7) // 8, "little"), dtype=np.uint8), count=count, bitorder="little"
        ).view(np.int8)

    def bits(self, deal: Deal, observer: int) -> int:
        """Every 0/1 slice of ``observer``'s vector as one integer (bit ``i`` is element ``i``; the
        ``scores`` slice is left 0). :meth:`encode` unpacks it; the environment ORs the action mask
        in above bit :attr:`size` so that one unpack gives both."""
        at = self._at
        rel = self._relative[observer]
        phase = deal.phase if deal.phase != Phase.GAME_OVER else Phase.DEAL_OVER
        if phase == Phase.NOMINATE and observer != deal.contractor:
            phase = Phase.PLAY  # that the contractor may nominate would show it holds the joker (§7)
        bits = deal.hands[observer] << at.hand | 1 << (at.phase + phase) | 1 << (at.dealer + rel[deal.dealer])
        bits |= self._auction_bits(deal, observer) | deal.suits_led << at.suits_led
        if self._seat_at >= 0:  # five players: the call, the partner and the own seat
            bits |= self._call_bits(deal, observer)
        if deal.to_act >= 0:
            bits |= 1 << (at.to_act + rel[deal.to_act])
        contractor = deal.contractor
        if contractor >= 0:
            bits |= 1 << (at.contract + deal.contract - 1) | 1 << (at.contractor + rel[contractor])
            bits |= 1 << (at.trump + (deal.trump if deal.trump >= 0 else NO_TRUMPS_ROW))
            for seat in deal.sitting_out_seats:
                bits |= 1 << (at.sitting_out + rel[seat])
            if observer == contractor:  # nobody but the contractor sees the kitty or discards (§5)
                bits |= deal.kitty << at.kitty | deal.discards << at.discards
            if deal.nominated >= 0:
                bits |= 1 << (at.joker_suit + deal.nominated)
            if deal.exposed:
                bits |= deal.hands[contractor] << at.exposed
            for played, void, won, (to_played, to_void, to_won) in zip(
                    deal.played, deal.shown_void, deal.tricks_won, self._seat_shifts[observer], strict=True):
                bits |= played << to_played | void << to_void | _THERMOMETER[won] << to_won
            # The recall slices are built apart, from bit 0, and shifted into place once: every
            # OR into the full-width integer costs in proportion to its width.
            recall = 0
            if deal.tricks:  # the cache hit inlined: it is the hot path
                history = self._history
                recall = history[2] if history[0] is deal and history[1] == len(deal.tricks) else self._recall_bits(deal)
            if deal.trick:
                trick, row = at.trick, self._trick_row
                number = len(deal.tricks)
                this_trick = self.width * number
                for seat, card in deal.trick:
                    bits |= 1 << (trick + row * rel[seat] + card)
                    recall |= 1 << (this_trick + card)
                bits |= 1 << (at.leader + rel[deal.leader]) | 1 << (at.led_suit + deal.led_suit)
                lead = deal.trick[0][1]
                if lead >= JOKER1 and EFFECTIVE_SUIT[deal.ctx][lead] == SUITLESS:
                    recall |= 1 << (self._joker_leads + 4 * number + deal.led_suit)
            if recall:
                bits |= recall << at.tricks
        return bits

    def _call_bits(self, deal: Deal, observer: int) -> int:
        """The ``called``, ``partner`` and ``seat`` slices: the call is public; the partner shows
        to its holder, and to everyone once it is public (§10.8)."""
        bits = 1 << (self._seat_at + observer)
        if deal.called_card >= 0:
            bits |= 1 << (self._call_at + deal.called_card)
        partner = deal.partner
        if partner >= 0 and (deal.partner_revealed or observer == partner):
            bits |= 1 << (self._partner_at + self._relative[observer][partner])
        return bits

    def _recall_bits(self, deal: Deal) -> int:
        """The ``tricks`` and ``joker_leads`` rows of the finished tricks (the same for every
        observer; bit 0 is the first element of ``tricks``), remembered for the last deal
        encoded and extended as its tricks finish."""
        cached_deal, first, bits = self._history
        done = len(deal.tricks)
        if cached_deal is not deal:
            first, bits = 0, 0
        suit_of = EFFECTIVE_SUIT[deal.ctx]
        for number in range(first, done):
            _leader, led_suit, plays, _winner = deal.tricks[number]
            row = self.width * number
            for _seat, card in plays:
                bits |= 1 << (row + card)
            if suit_of[plays[0][1]] == SUITLESS:
                bits |= 1 << (self._joker_leads + 4 * number + led_suit)
        self._history = (deal, done, bits)
        return bits

    def _auction_bits(self, deal: Deal, observer: int) -> int:
        """The ``bids`` and ``passes`` slices, cached per deal and observer as the auction grows."""
        key = (id(deal), observer)
        cached = self._auction_cache.get(key)
        if cached is not None and cached[0] == len(deal.bids) and cached[1] is deal:
            return cached[2]
        n = self.n
        rel = self._relative[observer]
        bids_off, passes_off = self._at.bids, self._at.passes
        bits = 0
        high = 0
        for seat, action in deal.bids:
            if action == PASS:
                bits |= 1 << (passes_off + high * n + rel[seat])
            else:
                bits |= 1 << (bids_off + (action - 1) * n + rel[seat])
                high = action
        if len(self._auction_cache) > 64:
            self._auction_cache.clear()
        self._auction_cache[key] = (len(deal.bids), deal, bits)
        return bits

    def relative_scores(self, scores: Sequence[int], observer: int) -> list[int]:
        """Side scores ÷ 10, clipped to int8, the observer's side first, then clockwise."""
        rules = self.rules
        k = rules.num_sides
        own = rules.side_of(observer)
        return [max(-127, min(127, round(scores[(own + i) % k] / 10))) for i in range(k)]

    def decode(self, vector: np.ndarray) -> dict[str, np.ndarray]:
        """Split an observation vector into its named slices, each in its documented shape."""
        vector = np.asarray(vector)
        if vector.shape != (self.size,):
            raise ValueError(f"expected an observation vector of shape ({self.size},), got {vector.shape}")
        return {name: vector[o:o + math.prod(shape)].reshape(shape) for name, (o, shape) in self.layout.items()}

    def describe(self, vector: np.ndarray) -> str:
        """A short text of the non-empty slices, for debugging."""
        parts = []
        for name, value in self.decode(vector).items():
            idx = np.argwhere(value != 0)
            if len(idx):
                parts.append(f"{name}: {idx.tolist() if value.ndim > 1 or name != 'scores' else value.tolist()}")
        return "\n".join(parts)

    def phase_slice(self) -> list[int]:
        """``[start, stop]`` of the ``phase`` one-hot in the vector (a network's per-phase advice weights read it)."""
        start, (width,) = self.layout["phase"]
        return [start, start + width]

    @property
    def state_size(self) -> int:
        """The length of :meth:`encode_state`'s vector."""
        offset, shape = self.state_layout["observation"]
        return offset + shape[0]

    def encode_state(self, deal: Deal, scores: Sequence[int] | None = None, observer: int = 0) -> np.ndarray:
        """The global state for centralised critics (:attr:`state_layout`), oriented to
        ``observer`` (relative seats as in the observation; with the default seat 0 they are the
        absolute seats): every hand (row ``r``: relative seat ``r``), the kitty as dealt, the
        discards, the dead hand (``two_handed``), the partner of the deal (five players: relative
        seat, known or not), then ``observer``'s observation with the true phase — the contractor's
        nomination turn shows as ``nominate`` whoever the observer is, so that every decision
        point has its own state."""
        layout = self.state_layout
        hands_at, (_, row) = layout["hands"]
        rel = self._relative[observer]
        bits = 0
        for seat, hand in enumerate(deal.hands):
            bits |= hand << (hands_at + row * rel[seat])
        bits |= deal.kitty << layout["kitty"][0] | deal.discards << layout["discards"][0]
        if "dead_hand" in layout:
            bits |= deal.dead_hand << layout["dead_hand"][0]
        if "partner" in layout and deal.partner >= 0:
            bits |= 1 << (layout["partner"][0] + rel[deal.partner])
        view = self.bits(deal, observer)
        if deal.phase == Phase.NOMINATE and observer != deal.contractor:
            view ^= self._unmask_nomination
        view_at = layout["observation"][0]
        vec = self.unpack(bits | view << view_at, self.state_size)
        if scores is not None and any(scores):
            vec[view_at + self._scores.start:view_at + self._scores.stop] = self.relative_scores(scores, observer)
        return vec
