"""The layout of the batched state: one ``int64`` row per game, and the rule options as numbers.

Every game of a batch is one row of ``state[B, NUM_FIELDS]``. Card sets are bit masks (bit =
universal card id, as in :mod:`five_hundred_env.cards`); seats are absolute. The field names
follow the attributes of :class:`five_hundred_env.engine.Deal` they mirror.
"""

from __future__ import annotations

import numpy as np

from five_hundred_env.observation import ObservationEncoder
from five_hundred_env.rules import OPTION_CHOICES, Rules

MAX_SEATS = 4
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
F_SITTING_OUT = 11
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
F_LEGAL = 24  # the legal set as a word (see _kernels.legal_word)
F_DEAL_RNG = 25  # the game's shuffling generator (splitmix64 state)
F_ACTION_RNG = 26  # the generator of sample_actions (random legal play)
F_MADE = 27  # whether the finished deal's contract was made
F_WINNERS = 28  # the winning sides of a finished game, as a bit set
F_NUM_DEALS = 29  # deals finished in the current game
F_BID_ROWS = 30  # the rows of F_BID_SEAT in use (bit b-1 for bid b), so the rest need no clearing
F_PASS_ROWS = 31  # the rows of F_PASS_SEATS in use (bit h)
# -- per-seat and per-side arrays (MAX_SEATS each) ------------------------------------------------
F_HANDS = 32
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

# -- the rule options (docs/rules.md §2) as one int64 vector ------------------------------------------
(O_N, O_HAND, O_KITTY, O_BIDDING, O_REBID, O_MISERE, O_MISERE_VALUE, O_OPEN_MISERE_RANK, O_EXPOSURE,
 O_NOMINATION, O_JOKER_LEAD, O_DEFENCE, O_MISERE_DEFENCE, O_SLAM, O_WIN_NEEDS_CONTRACT, O_BOTH_JOKERS_MIN,
 O_TARGET, O_LOSING, O_SIDES, O_DECK, O_GAME_EPISODES, O_SIDE_OF) = range(22)
NUM_OPTIONS = O_SIDE_OF + MAX_SEATS  # O_SIDE_OF + seat: that seat's side (Rules.side_of)

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
    opts[O_DECK] = rules.deck
    opts[O_GAME_EPISODES] = game_episodes
    for seat in range(rules.num_players):
        opts[O_SIDE_OF + seat] = rules.side_of(seat)
    return opts


# -- the observation layout (ObservationEncoder.layout) as offsets --------------------------------
OBS_SLICES = ("hand", "phase", "to_act", "dealer", "bids", "passes", "contract", "contractor", "trump",
              "sitting_out", "kitty", "discards", "joker_suit", "exposed", "played", "trick", "leader",
              "led_suit", "suits_led", "shown_void", "tricks_won", "scores", "tricks", "joker_leads")
(L_HAND, L_PHASE, L_TO_ACT, L_DEALER, L_BIDS, L_PASSES, L_CONTRACT, L_CONTRACTOR, L_TRUMP, L_SITTING_OUT,
 L_KITTY, L_DISCARDS, L_JOKER_SUIT, L_EXPOSED, L_PLAYED, L_TRICK, L_LEADER, L_LED_SUIT, L_SUITS_LED,
 L_SHOWN_VOID, L_TRICKS_WON, L_SCORES, L_TRICKS, L_JOKER_LEADS, L_SIZE) = range(25)


def obs_offsets(encoder: ObservationEncoder) -> np.ndarray:
    """The offset of every observation slice (in :data:`OBS_SLICES` order), then the vector's size."""
    if tuple(encoder.layout) != OBS_SLICES:
        raise RuntimeError(f"the observation layout changed ({tuple(encoder.layout)}); update vector._layout")
    return np.array([encoder.layout[name][0] for name in OBS_SLICES] + [encoder.size], dtype=np.int64)
