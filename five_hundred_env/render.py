"""Text rendering of the table (the environment's ``"ansi"`` and ``"human"`` modes, and the CLI).

Shows the contract and contractor, the bidding, the current trick, tricks won, the scores and
the acting player's hand sorted by suit, trumps first and marked with ``*`` (and, in colour
mode, highlighted in yellow; hearts and diamonds in red).

For a person at the table (``five-hundred play``, ``watch``) there is more: every card shown
marks its trumps (:func:`card_text`), the table can be seen from one seat (``viewer`` of
:func:`render_table`: the sides named from there, the last trick, the kitty the contractor picked
up), each trick's winner is told with the reason (:func:`trick_result`), and an illegal action is
explained (:func:`explain_illegal`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from five_hundred_env.actions import (
    MISERE,
    OPEN_MISERE,
    PASS,
    action_card,
    action_to_str,
    bid_action,
    bid_tricks,
    is_card_action,
    is_joker_lead,
    is_trick_bid,
    joker_lead_suit,
)
from five_hundred_env.cards import (
    JOKERS_MASK,
    RANK_JACK,
    SUIT_SYMBOLS,
    card_rank,
    card_suit,
    card_to_str,
    is_joker,
    mask_to_cards,
)
from five_hundred_env.engine import EFFECTIVE_SUIT, SUIT_CARDS, SUITLESS, WIN_KEY, Deal, Game, Phase, bid_rank
from five_hundred_env.rules import Rules

_RED, _TRUMP, _RESET = "\033[31m", "\033[1;33m", "\033[0m"


def colour_supported(stream: object = None) -> bool:
    """Whether to print ANSI colours: a terminal, and ``NO_COLOR`` not set."""
    stream = stream or sys.stdout
    return bool(getattr(stream, "isatty", lambda: False)()) and "NO_COLOR" not in os.environ


TRUMPS = -1
"""The group of trumps in :func:`hand_groups` (sorted first)."""


def hand_groups(deal: Deal, seat: int) -> list[tuple[int, list[int]]]:
    """A seat's cards grouped by effective suit, high cards first: trumps first (group
    :data:`TRUMPS`), then S, C, D, H, then a suitless joker (group ``SUITLESS``)."""
    return _groups(deal, deal.hands[seat])


def _groups(deal: Deal, cards: int) -> list[tuple[int, list[int]]]:
    return card_groups(deal.ctx, cards)


def card_groups(ctx: int, cards: int) -> list[tuple[int, list[int]]]:
    """A set of cards (a mask) grouped as :func:`hand_groups` groups a hand, in the trump context
    ``ctx`` of §6 (0-3: that suit is trumps; 4 and over: no trumps, the joker suitless or nominated)."""
    trump = ctx if ctx < 4 else -1
    eff = EFFECTIVE_SUIT[ctx]
    groups: dict[int, list[tuple[int, int]]] = {}
    for card in mask_to_cards(cards):
        suit = eff[card]
        group = TRUMPS if trump >= 0 and suit == trump else suit
        strength = WIN_KEY[ctx][suit if suit < 4 else 0][card]
        groups.setdefault(group, []).append((strength, card))
    return [(group, [card for _, card in sorted(groups[group], reverse=True)]) for group in sorted(groups)]


def is_trump(deal: Deal, card: int) -> bool:
    """Whether ``card`` is a trump in this deal's contract (the bowers and jokers included, §6)."""
    return deal.trump >= 0 and EFFECTIVE_SUIT[deal.ctx][card] == deal.trump


def card_text(deal: Deal, card: int, colour: bool = False) -> str:
    """A card's name as a person sees it: a trump marked ``*`` (and highlighted in colour mode),
    hearts and diamonds red in colour mode."""
    name = card_to_str(card, deal.rules.two_jokers)
    if is_trump(deal, card):
        return f"{_TRUMP}{name}*{_RESET}" if colour else f"{name}*"
    if colour and EFFECTIVE_SUIT[deal.ctx][card] in (2, 3):
        return f"{_RED}{name}{_RESET}"
    return name


def cards_text(deal: Deal, cards: int, colour: bool = False) -> str:
    """A set of cards (a mask), sorted as a hand is, each marked by :func:`card_text`."""
    return " ".join(card_text(deal, c, colour) for _, group in _groups(deal, cards) for c in group) or "-"


def hand_text(deal: Deal, seat: int, colour: bool = False) -> str:
    """A seat's hand grouped by effective suit (trumps first, marked ``*``), high cards first."""
    parts = []
    for group, cards in hand_groups(deal, seat):
        label = "trumps" if group == TRUMPS else ("joker" if group == SUITLESS else SUIT_SYMBOLS[group])
        parts.append(f"{label}: {' '.join(card_text(deal, c, colour) for c in cards)}")
    return " | ".join(parts) if parts else "(no cards)"


def side_labels(rules: Rules, viewer: int) -> list[str]:
    """Each side's name as the seat ``viewer`` would say it: "you & partner" and "opponents" with
    partners, "you" and the other players' seats when each plays alone."""
    labels = []
    for side in range(rules.num_sides):
        if side == rules.side_of(viewer):
            mates = len(rules.partners_of(viewer))
            labels.append("you" if not mates else "you & partner" if mates == 1 else "your team")
        elif rules.has_partners:
            labels.append("opponents")
        else:
            labels.append(f"player_{rules.seats_of(side)[0]}")
    return labels


def labelled(labels: Sequence[str], values: Sequence[int]) -> str:
    """``"you & partner 120, opponents -40"``: one value per side, after its label."""
    return ", ".join(f"{label} {value}" for label, value in zip(labels, values, strict=True))


# -- trick winners ---------------------------------------------------------------------------
def win_reason(deal: Deal, card: int) -> str:
    """Why ``card`` won its trick (§6, §7): the joker, the right or left bower, the highest trump,
    or the highest card of the suit led."""
    suit = EFFECTIVE_SUIT[deal.ctx][card]
    if is_joker(card):
        if suit == SUITLESS:
            return "the joker (no suit: it beats every card)"
        if suit != deal.trump:
            return f"the joker, nominated {SUIT_SYMBOLS[suit]}: the highest {SUIT_SYMBOLS[suit]}, the suit led"
        return "the joker, the highest trump"
    if deal.trump >= 0 and suit == deal.trump:
        if card_rank(card) == RANK_JACK:
            return "the right bower" if card_suit(card) == deal.trump else "the left bower"
        return "the highest trump"
    return f"the highest {SUIT_SYMBOLS[suit]}, the suit led"


def trick_result(deal: Deal, index: int, names: Sequence[str], colour: bool = False) -> str:
    """``"trick 3 won by player_3 with Jc*, the left bower"`` for the finished trick ``index``
    (0-based) of ``deal``."""
    _leader, _led, cards, winner = deal.tricks[index]
    card = next(c for s, c in cards if s == winner)
    return f"trick {index + 1} won by {names[winner]} with {card_text(deal, card, colour)}, {win_reason(deal, card)}"


def trick_cards(deal: Deal, cards: Sequence[tuple[int, int]], names: Sequence[str], colour: bool = False) -> str:
    """The cards of a trick, each after its player: ``player_0:Ah* player_1:7s``."""
    return " ".join(f"{names[s]}:{card_text(deal, c, colour)}" for s, c in cards)


# -- the table -------------------------------------------------------------------------------
def render_table(game: Game, agents: Sequence[str], colour: bool = False, deal: Deal | None = None,
                 viewer: int | None = None) -> str:
    """The table as text: contract, bidding, current trick, tricks won, scores, the hand to act.
    ``deal``: the deal to show (default: the game's current deal). ``viewer``: the seat of the
    person looking (``five-hundred play``): then every card marks its trumps, the sides are named
    from that seat (:func:`side_labels`), the last trick is shown during play, the contractor
    sees the kitty they picked up, and the hand shown is the viewer's."""
    deal = game.deal if deal is None else deal
    rules = deal.rules
    phase = Phase.GAME_OVER if game.is_over else deal.phase
    lines = [f"Five Hundred ({rules.describe()}) — dealer {agents[deal.dealer]}, phase {phase.name.lower()}"]
    auction = " ".join(f"{agents[s][-1]}:{action_to_str(a, rules)}" for s, a in deal.bids)
    lines.append(f"bidding: {auction or '-'}")
    lines += _contract_lines(deal, agents, viewer)
    if viewer is None:
        lines += _plain_play_lines(deal, agents)
        lines.append("scores: " + ", ".join(f"side {i}: {s}" for i, s in enumerate(game.scores)))
    else:
        lines += _viewer_lines(game, deal, agents, colour, viewer)
    if game.is_over:
        lines.append("game over; winners: " + ", ".join(f"side {s}" for s in game.winners))
    elif deal.to_act >= 0:
        seat = deal.to_act if viewer is None else viewer
        lines.append(f"{agents[deal.to_act]} to act, " + ("hand" if seat == deal.to_act else "your hand")
                     + f": {hand_text(deal, seat, colour)}")
    return "\n".join(lines)


def call_text(deal: Deal, agents: Sequence[str], viewer: int | None = None) -> str:
    """The five-handed call as ``viewer`` knows it (§10.5, §10.8): the call is public; the partner
    shows once public, to its holder, and to everyone once the deal is over (``viewer`` None: what
    everyone knows)."""
    if deal.called_card < 0 and not deal.partner_revealed:
        return ""
    text = f", called {card_to_str(deal.called_card)}" if deal.called_card >= 0 else ""
    knows = deal.partner_revealed or deal.is_over or (viewer is not None and viewer == deal.partner)
    if deal.partner >= 0 and knows:
        text += f", partner {agents[deal.partner]}"
    elif deal.partner < 0 and (deal.is_over or viewer == deal.contractor):
        text += " (a discard: no partner)"
    return text


def _contract_lines(deal: Deal, agents: Sequence[str], viewer: int | None = None) -> list[str]:
    if deal.contract >= 0:
        contract = action_to_str(deal.contract, deal.rules)
        extra = f", joker nominated {'SCDH'[deal.nominated]}" if deal.nominated >= 0 else ""
        extra += call_text(deal, agents, viewer)
        out = "".join(f", {agents[seat]} sits out" for seat in deal.sitting_out_seats)
        return [f"contract: {contract} by {agents[deal.contractor]}{extra}{out}"]
    if deal.thrown_in:
        return ["contract: none (all passed, thrown in)"]
    return []


def _plain_play_lines(deal: Deal, agents: Sequence[str]) -> list[str]:
    """The trick, the last trick once the deal is over, tricks won and the exposed hand, unmarked."""
    two = deal.rules.two_jokers
    lines = []
    if deal.phase == Phase.PLAY:
        trick = " ".join(f"{agents[s]}:{card_to_str(c, two)}" for s, c in deal.trick)
        lines.append(f"trick {len(deal.tricks) + 1}: {trick or '-'}{_led_text(deal)}")
    elif deal.tricks:  # the deal is over: its last trick
        _, _, last, winner = deal.tricks[-1]
        trick = " ".join(f"{agents[s]}:{card_to_str(c, two)}" for s, c in last)
        lines.append(f"last trick: {trick}, won by {agents[winner]}")
    if deal.phase == Phase.PLAY or deal.tricks:
        lines.append("tricks won: " + ", ".join(f"side {i}: {t}" for i, t in enumerate(deal.side_tricks())))
    if deal.exposed:
        lines.append(f"exposed ({agents[deal.contractor]}): {hand_text(deal, deal.contractor)}")
    return lines


def _led_text(deal: Deal) -> str:
    return f" (led {'SCDH'[deal.led_suit]})" if deal.led_suit >= 0 else ""


def _viewer_lines(game: Game, deal: Deal, agents: Sequence[str], colour: bool, viewer: int) -> list[str]:
    """What the seat ``viewer`` sees of the kitty, the tricks and the scores."""
    labels = side_labels(deal.rules, viewer)
    lines = []
    if deal.phase == Phase.DISCARD and viewer == deal.contractor:
        lines.append(f"you picked up the kitty: {cards_text(deal, deal.kitty, colour)}; "
                     f"discard {deal.rules.kitty_size - deal.discards.bit_count()} more")
    if deal.tricks:
        _, _, last, _ = deal.tricks[-1]
        lines.append(f"last trick: {trick_cards(deal, last, agents, colour)}; "
                     f"{trick_result(deal, len(deal.tricks) - 1, agents, colour)}")
    if deal.phase == Phase.PLAY:
        lines.append(f"trick {len(deal.tricks) + 1}: {trick_cards(deal, deal.trick, agents, colour) or '-'}{_led_text(deal)}")
    if deal.phase == Phase.PLAY or deal.tricks:
        lines.append(f"tricks won: {labelled(labels, deal.side_tricks())}")
    if deal.exposed:
        lines.append(f"exposed ({agents[deal.contractor]}): {hand_text(deal, deal.contractor, colour)}")
    lines.append(f"scores: {labelled(labels, game.scores)}")
    return lines


# -- why an action is not legal ----------------------------------------------------------------
def explain_illegal(deal: Deal, action: int) -> str:
    """One line saying why the universal ``action`` is not legal for the player to act, e.g.
    ``7s is not legal now: you must follow ♦ (you hold Qd)``. It reads only what that player may
    know (their hand, the public play), so it can be shown to them."""
    name = action_to_str(action, deal.rules)
    if deal.is_over:
        reason = "the deal is over"
    elif deal.phase == Phase.BIDDING:
        reason = _bid_reason(deal, action)
    elif deal.phase == Phase.DISCARD:
        reason = f"you do not hold {name}" if is_card_action(action) else (
            f"discard {deal.rules.kitty_size - deal.discards.bit_count()} more card(s) from your hand")
    elif deal.phase == Phase.NOMINATE:
        reason = "nominate a suit for the joker (NOMINATE_S, _C, _D, _H) or decline (NO_NOMINATION)"
    elif deal.phase == Phase.CALL:
        reason = ("call a partner: PARTNER_0 … PARTNER_4, not yourself" if deal.rules.partner_call == "seat"
                  else "call a partner by naming a card you do not hold, not the joker (§10.5)")
    else:
        reason = _play_reason(deal, action)
    return f"{name} is not legal now: {reason}"


def _bid_reason(deal: Deal, action: int) -> str:
    rules = deal.rules
    if not (action in (PASS, MISERE, OPEN_MISERE) or is_trick_bid(action)):
        return "it is the auction: bid or PASS"
    floor_tricks = rules.both_jokers_min_bid
    if floor_tricks is not None and deal.dealt[deal.to_act] & JOKERS_MASK == JOKERS_MASK and (
            deal.high_bid < 0 or bid_rank(deal.high_bid, rules) < bid_rank(bid_action(floor_tricks, 0), rules)):
        return f"you were dealt both jokers: bid {floor_tricks} tricks or more (no pass, no misère) (§4)"
    high = action_to_str(deal.high_bid, rules) if deal.high_bid >= 0 else ""
    if action == MISERE:
        if rules.misere == "none":
            return "there is no misère in these rules"
        if rules.misere == "after_seven" and not (is_trick_bid(deal.high_bid) and bid_tricks(deal.high_bid) == 7):
            return "misère may be bid only over a 7-trick bid (§4)"
    if action == OPEN_MISERE and rules.open_misere == "none":
        return "there is no open misère in these rules"
    return f"a bid must outrank {high}" if high else "not a bid here"


def _card_reason(deal: Deal, action: int) -> str:
    """Why playing a card is refused: not held, a suitless joker led without naming a suit, or
    not following suit."""
    card = action_card(action)
    hand = deal.hands[deal.to_act]
    if not hand >> card & 1:
        return f"you do not hold {card_to_str(card, deal.rules.two_jokers)}"
    if not deal.trick:
        return "a suitless joker is led naming the suit to follow, e.g. " + _joker_lead_example(deal, card)
    led = deal.led_suit
    following = hand & SUIT_CARDS[deal.ctx][led]
    suit = EFFECTIVE_SUIT[deal.ctx][card]
    why = ""
    if suit == SUITLESS:
        why = "the joker may be played only by a player with no card of the suit led; "
    elif card_rank(card) == RANK_JACK and suit != card_suit(card):
        why = f"{card_to_str(card)} is a trump here (the left bower), not a {SUIT_SYMBOLS[card_suit(card)]}; "
    return f"{why}you must follow {SUIT_SYMBOLS[led]} (you hold {cards_text(deal, following)})"


def _joker_lead_example(deal: Deal, card: int) -> str:
    legal = [a for a in deal.legal_actions() if is_joker_lead(a) and action_card(a) == card]
    return action_to_str(legal[0], deal.rules) if legal else f"{card_to_str(card, deal.rules.two_jokers)}:H"


def _play_reason(deal: Deal, action: int) -> str:
    if is_card_action(action):
        return _card_reason(deal, action)
    if not is_joker_lead(action):
        return "it is the play: play a card"
    card = action_card(action)
    two = deal.rules.two_jokers
    if not deal.hands[deal.to_act] >> card & 1:
        return f"you do not hold {card_to_str(card, two)}"
    if deal.trick:
        return f"only a joker that leads a trick names a suit; play it as {card_to_str(card, two)}"
    suit = EFFECTIVE_SUIT[deal.ctx][card]
    if suit != SUITLESS:
        kind = "a trump" if suit == deal.trump else f"nominated {SUIT_SYMBOLS[suit]}"
        return f"the joker is {kind} here: lead it as {card_to_str(card, two)}"
    return _joker_suit_reason(deal, joker_lead_suit(action))


def _joker_suit_reason(deal: Deal, suit: int) -> str:
    """Why a suitless joker may not name ``suit`` when led (§7, ``joker_lead_suit``)."""
    if deal.rules.joker_lead_suit == "not_yet_led":
        led = [SUIT_SYMBOLS[s] for s in range(4) if deal.suits_led >> s & 1]
        if len(led) == 4:
            return "every suit has been led: the joker may be led only when you hold nothing else (§7)"
        return f"the joker may name only a suit not yet led (led so far: {' '.join(led)}) (§7)"
    void = [SUIT_SYMBOLS[s] for s in range(4) if deal.shown_void[deal.to_act] >> s & 1]
    return f"the joker may not name a suit you have shown void in ({' '.join(void)}) (§7)"
