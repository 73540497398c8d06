"""The rules engine: one deal (:class:`Deal`) and the game to 500 (:class:`Game`).

Pure Python over plain data: card sets are ``int`` bit masks (see :mod:`five_hundred_env.cards`),
actions are universal ids (see :mod:`five_hundred_env.actions`), and the per-contract card orders
are tables precomputed once. Each rule of the rules document lives in one place, named after its
section:

* §3 the deal ........ :meth:`Deal.new`, :meth:`Deal.from_cards`, :meth:`Game._start_deal`
* §4 bidding ......... :mod:`.bidding` (:func:`bid_rank`, :func:`~.bidding.legal_bids`,
                        :func:`~.bidding.next_bidder`), :meth:`Deal._apply_bid`
* §5 the kitty ....... :meth:`Deal._end_auction`, :meth:`Deal._apply_discard`
* §6 card order ...... :mod:`.card_order` (``EFFECTIVE_SUIT``, ``SUIT_CARDS``, ``WIN_KEY``)
* §7 play ............ :meth:`Deal.legal_actions`, :meth:`Deal._lead_actions`, :meth:`Deal._joker_lead_suits`,
                        :meth:`Deal._apply_play`
* §8 scoring ......... :mod:`five_hundred_env.scoring` (:func:`~five_hundred_env.scoring.deal_score`)
* §9 winning ......... :func:`game_winners`, :func:`contract_winners` (:meth:`Game._end_of_deal`)
* §10 two, five and six players: the presets in :mod:`five_hundred_env.rules`; the dead hand
                        :meth:`Deal.new`, :attr:`Deal.dead_hand`; the call (§10.5)
                        :meth:`Deal._call_actions`, :meth:`Deal._apply_call`; the contracting team
                        :meth:`Deal.contracting_seats`; team-mates sitting out :meth:`Deal._end_auction`

The modules: :mod:`.card_order` (§6 tables, :func:`card_actions`), :mod:`.bidding` (§4),
:mod:`.deal` (:class:`Deal`), :mod:`.phase` (:class:`Phase`, :class:`IllegalActionError`),
:mod:`.explicit` (:func:`parse_deal`, :func:`deal_to_cards`) and :mod:`.game` (:class:`Game`,
:func:`check_scores`, :func:`game_winners`, :func:`contract_winners`).

At every decision point ``to_act`` is the seat to move, ``legal_actions()`` the legal universal
action ids, and ``apply_action(a)`` plays one; an illegal action (or one that is not an integer)
raises :class:`IllegalActionError` and leaves the state untouched.
"""

from five_hundred_env.engine.bidding import bid_rank
from five_hundred_env.engine.card_order import EFFECTIVE_SUIT, NO_TRUMP_CTX, SUIT_CARDS, SUITLESS, WIN_KEY, card_actions
from five_hundred_env.engine.deal import Deal
from five_hundred_env.engine.explicit import deal_to_cards, parse_deal
from five_hundred_env.engine.game import MAX_THROWN_IN_IN_ROW, Game, check_scores, contract_winners, game_winners
from five_hundred_env.engine.phase import IllegalActionError, Phase

__all__ = [
    "EFFECTIVE_SUIT",
    "MAX_THROWN_IN_IN_ROW",
    "NO_TRUMP_CTX",
    "SUITLESS",
    "SUIT_CARDS",
    "WIN_KEY",
    "Deal",
    "Game",
    "IllegalActionError",
    "Phase",
    "bid_rank",
    "card_actions",
    "check_scores",
    "contract_winners",
    "deal_to_cards",
    "game_winners",
    "parse_deal",
]
