"""The layout of the batched state: one ``int64`` row per game, and the rule options as numbers.

Every game of a batch is one row of ``state[B, NUM_FIELDS]``. Card sets are 64-bit masks of
*kernel bits* (:func:`five_hundred_env.cards.kernel_card_ids`: the universal card id, except the
two ``six_handed`` cards whose ids pass 63); seats are absolute. The field names follow the
attributes of :class:`five_hundred_env.engine.Deal` they mirror.

The options vector (:func:`rule_options`) carries, besides the rule options, the rules' card
tables by kernel bit (effective suit, suit masks, trick-winning keys of every trump context) and
the universal id of each bit: the kernels read suits and ranks from them, never from a bit.
"""

from __future__ import annotations

import numpy as np

from five_hundred_env.cards import KERNEL_MASK_BITS, kernel_card_ids
from five_hundred_env.engine import EFFECTIVE_SUIT, WIN_KEY
from five_hundred_env.observation import ObservationEncoder
from five_hundred_env.rules import OPTION_CHOICES, Rules

MAX_SEATS = 6
MAX_TRICKS = 10  # Rules.hand_size, which every preset fixes at 10
NUM_BIDS = 27  # trick bids 1-25, MISERE 26, OPEN_MISERE 27

# -- per-game scalars -----------------------------------------------------------------------------
F_PHASE = 0  # 0 bidding, 1 discard, 2 nominate, 3 play, 4 deal over
F_TO_ACT = 1  # the seat to act, -1 once the deal is over
F_DEALER = 2
F_PASSED = 3  # seats that passed, as a bit set
F_PASSES_IN_ROW = 4
F_HIGH_BID = 5  # universal bid id, -1 before any bid
F_HIGH_BIDDER = 6
F_CONTRACT = 7
F_CONTRACTOR = 8
F_CTX = 9  # the trump context of engine.EFFECTIVE_SUIT
F_TRUMP = 10
F_SITTING_OUT = 11  # the seats sitting out a misère, as a bit set
F_KITTY = 12  # the kitty as dealt
F_DISCARDS = 13
F_NOMINATED = 14
F_LEADER = 15
F_LED_SUIT = 16
F_TRICK_LEN = 17
F_NUM_TRICKS = 18  # finished tricks
F_SUITS_LED = 19
F_EXPOSED = 20
F_THROWN_IN = 21
F_BOTH_JOKERS_SEAT = 22
F_TRICK_SIZE = 23
F_LEGAL = 24  # the legal set's bits 0-63 as a word (see _kernels.set_legal)
F_DEAL_RNG = 25  # the game's shuffling generator (splitmix64 state)
F_ACTION_RNG = 26  # the generator of sample_actions (random legal play)
F_MADE = 27  # whether the finished deal's contract was made
F_WINNERS = 28  # the winning sides of a finished game, as a bit set
F_NUM_DEALS = 29  # deals finished in the current game
F_BID_ROWS = 30  # the rows of F_BID_SEAT in use (bit b-1 for bid b), so the rest need no clearing
F_PASS_ROWS = 31  # the rows of F_PASS_SEATS in use (bit h)
F_LEGAL_HIGH = 32  # the legal set's bits 64-127 (joker leads of the packs of 53 and 63, partner calls)
F_CALLED = 33  # the kernel bit of the card the five-handed contractor called (§10.5), or -1
F_PARTNER = 34  # the five-handed contractor's partner for this deal, or -1
F_PARTNER_KNOWN = 35  # whether everyone knows the partner (a seat call, or the called card played)
# -- per-seat and per-side arrays (MAX_SEATS each) ------------------------------------------------
F_HANDS = 36
F_DEALT = F_HANDS + MAX_SEATS
F_PLAYED = F_DEALT + MAX_SEATS
F_SHOWN_VOID = F_PLAYED + MAX_SEATS
F_TRICKS_WON = F_SHOWN_VOID + MAX_SEATS
F_TRICK_CARD = F_TRICKS_WON + MAX_SEATS  # the card each seat played to the current trick, or -1
F_NEXT_SEAT = F_TRICK_CARD + MAX_SEATS  # clockwise, skipping a sitting-out partner
F_SCORES = F_NEXT_SEAT + MAX_SEATS  # the game score of each side
F_START_SCORES = F_SCORES + MAX_SEATS  # each side's score at the start of a game (or of each deal)
F_SCORE_CHANGE = F_START_SCORES + MAX_SEATS  # each side's score change in the finished deal
# -- the auction, as the observation shows it -----------------------------------------------------
F_BID_SEAT = F_SCORE_CHANGE + MAX_SEATS  # row b-1: the seat that bid b, or -1
F_PASS_SEATS = F_BID_SEAT + NUM_BIDS  # row h: seats (bit set) that passed while the highest bid was h
# -- the play, as the observation recalls it (five_hundred_v1; after the rest, as in the vector) ---
F_JOKER_LEADS = F_PASS_SEATS + NUM_BIDS + 1  # bit 4·t + s: a suitless joker led trick t, naming suit s
F_TRICK_CARDS = F_JOKER_LEADS + 1  # row t: the cards that fell in trick t (the current one too)
NUM_FIELDS = F_TRICK_CARDS + MAX_TRICKS

# -- the rule options (docs/rules.md §2, §10.2) and card tables as one int64 vector ------------------
(O_N, O_HAND, O_KITTY, O_BIDDING, O_REBID, O_MISERE, O_MISERE_VALUE, O_OPEN_MISERE_RANK, O_EXPOSURE,
 O_NOMINATION, O_JOKER_LEAD, O_DEFENCE, O_MISERE_DEFENCE, O_SLAM, O_WIN_NEEDS_CONTRACT, O_BOTH_JOKERS_MIN,
 O_TARGET, O_LOSING, O_SIDES, O_DECK, O_GAME_EPISODES, O_PARTNER_CALL, O_WIDTH, O_LEAD_BIT, O_MOVED,
 O_SIDE_OF) = range(26)
O_CARD_ID = O_SIDE_OF + MAX_SEATS  # O_SIDE_OF + seat: that seat's side (Rules.side_of)
O_SUIT = O_CARD_ID + KERNEL_MASK_BITS  # O_CARD_ID + bit: the universal card id of a kernel bit (-1: none)
O_SUIT_CARDS = O_SUIT + 9 * KERNEL_MASK_BITS  # O_SUIT + 64·ctx + bit: engine.EFFECTIVE_SUIT
O_WIN_KEY = O_SUIT_CARDS + 9 * 5  # O_SUIT_CARDS + 5·ctx + suit: engine.SUIT_CARDS as kernel bits
NUM_OPTIONS = O_WIN_KEY + 9 * 4 * KERNEL_MASK_BITS  # O_WIN_KEY + 256·ctx + 64·led + bit: 4 × engine.WIN_KEY
PARTNER_CALLS = ("none", "card", "seat")  # O_PARTNER_CALL
LEAD_BIT_IN_WORD = 46  # the first joker lead's bit, after the cards of the packs of ranks 4-A
LEAD_BIT_HIGH = 64  # the same in the packs of 53 and 63 cards: the legal set's second word
PARTNER_BIT = 72  # the legal set's bit of PARTNER_0 (second word)

OPEN_MISERE_RANK = {"between_10D_10H": 45, "highest": 50, "none": -1}  # engine.OPEN_MISERE_RANKS


def rule_options(rules: Rules, game_episodes: bool) -> np.ndarray:
    """The options of ``rules`` as the kernels read them (choices by their index in OPTION_CHOICES)."""
    opts = np.zeros(NUM_OPTIONS, dtype=np.int64)
    choice = {name: OPTION_CHOICES[name].index(getattr(rules, name)) for name in OPTION_CHOICES}
    opts[O_N] = rules.num_players
    opts[O_HAND] = rules.hand_size
    opts[O_KITTY] = rules.kitty_size
    opts[O_BIDDING] = choice["bidding"]
    opts[O_REBID] = rules.rebid_after_pass
    opts[O_MISERE] = choice["misere"]
    opts[O_MISERE_VALUE] = rules.misere_value
    opts[O_OPEN_MISERE_RANK] = OPEN_MISERE_RANK[rules.open_misere]
    opts[O_EXPOSURE] = choice["open_misere_exposure"]
    opts[O_NOMINATION] = choice["joker_nomination"]
    opts[O_JOKER_LEAD] = choice["joker_lead_suit"]
    opts[O_DEFENCE] = choice["defence_tricks"]
    opts[O_MISERE_DEFENCE] = choice["misere_defence"]
    opts[O_SLAM] = rules.slam_bonus
    opts[O_WIN_NEEDS_CONTRACT] = rules.win_needs_contract
    opts[O_BOTH_JOKERS_MIN] = rules.both_jokers_min_bid or 0
    opts[O_TARGET] = rules.target
    opts[O_LOSING] = rules.losing_score
    opts[O_SIDES] = rules.num_sides
    opts[O_GAME_EPISODES] = game_episodes
    opts[O_PARTNER_CALL] = PARTNER_CALLS.index(rules.partner_call)
    opts[O_WIDTH] = rules.card_slots
    for seat in range(rules.num_players):
        opts[O_SIDE_OF + seat] = rules.side_of(seat)
    bits = kernel_card_ids(rules.deck)
    opts[O_DECK] = kernel_mask(bits, rules.deck)
    opts[O_LEAD_BIT] = LEAD_BIT_IN_WORD if max(bits) < LEAD_BIT_IN_WORD else LEAD_BIT_HIGH
    opts[O_MOVED] = kernel_mask(bits, sum(1 << card for card, bit in enumerate(bits) if bit not in (-1, card)))
    opts[O_CARD_ID:O_CARD_ID + KERNEL_MASK_BITS] = -1
    for ctx in range(9):
        suit_cards = [0] * 5
        for card, bit in enumerate(bits):
            if bit < 0:
                continue
            opts[O_CARD_ID + bit] = card
            suit = EFFECTIVE_SUIT[ctx][card]
            opts[O_SUIT + KERNEL_MASK_BITS * ctx + bit] = suit
            suit_cards[suit] |= 1 << card
            for led in range(4):  # the keys are multiples of 1/4 (the extended ranks'): whole numbers ×4
                opts[O_WIN_KEY + KERNEL_MASK_BITS * (4 * ctx + led) + bit] = round(4 * WIN_KEY[ctx][led][card])
        for suit in range(5):
            opts[O_SUIT_CARDS + 5 * ctx + suit] = kernel_mask(bits, suit_cards[suit])
    return opts


_LOW_IDS = (1 << KERNEL_MASK_BITS) - 1
"""The universal ids below 64, each its own kernel bit (:func:`kernel_card_ids`)."""


def kernel_mask(bits: tuple[int, ...], cards: int) -> int:
    """A universal card mask as a kernel mask (``bits``: :func:`kernel_card_ids` of the pack), as
    the signed ``int64`` a state row holds."""
    mask = cards & _LOW_IDS  # an id below 64 is its own bit (kernel_card_ids): the loads' hot path
    high = cards >> KERNEL_MASK_BITS
    while high:  # six_handed's ids 64 and 65 take free bits
        low = high & -high
        mask |= 1 << bits[KERNEL_MASK_BITS + low.bit_length() - 1]
        high ^= low
    return mask - (1 << 64) if mask >> 63 else mask


# -- the observation layout (ObservationEncoder.layout) as offsets --------------------------------
OBS_SLICES = ("hand", "phase", "to_act", "dealer", "bids", "passes", "contract", "contractor", "trump",
              "sitting_out", "kitty", "discards", "joker_suit", "exposed", "played", "trick", "leader",
              "led_suit", "suits_led", "shown_void", "tricks_won", "scores", "tricks", "joker_leads")
CALL_SLICES = ("called", "partner", "seat")  # five players only (§10.5)
STATE_PARTS = ("dead_hand", "partner", "observation")  # of the global state, after the hands, kitty, discards
(L_HAND, L_PHASE, L_TO_ACT, L_DEALER, L_BIDS, L_PASSES, L_CONTRACT, L_CONTRACTOR, L_TRUMP, L_SITTING_OUT,
 L_KITTY, L_DISCARDS, L_JOKER_SUIT, L_EXPOSED, L_PLAYED, L_TRICK, L_LEADER, L_LED_SUIT, L_SUITS_LED,
 L_SHOWN_VOID, L_TRICKS_WON, L_SCORES, L_TRICKS, L_JOKER_LEADS, L_SIZE,
 L_CALLED, L_PARTNER, L_SEAT, L_STATE_DEAD_HAND, L_STATE_PARTNER, L_STATE_VIEW) = range(31)


def obs_offsets(encoder: ObservationEncoder) -> np.ndarray:
    """The offset of every observation slice (in :data:`OBS_SLICES` order), the vector's size, the
    offsets of the :data:`CALL_SLICES`, then of the global state's :data:`STATE_PARTS` (-1 for a
    part these rules lack)."""
    names = tuple(encoder.layout)
    if names not in (OBS_SLICES, OBS_SLICES + CALL_SLICES):
        raise RuntimeError(f"the observation layout changed ({names}); update vector._layout")
    parts = [encoder.layout[name][0] for name in OBS_SLICES] + [encoder.size]
    parts += [encoder.layout[name][0] if name in encoder.layout else -1 for name in CALL_SLICES]
    parts += [encoder.state_layout[name][0] if name in encoder.state_layout else -1 for name in STATE_PARTS]
    return np.array(parts, dtype=np.int64)
