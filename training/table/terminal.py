"""A person at the terminal: ``five-hundred play`` (one seat against agents) and ``five-hundred replay``.

``play`` seats a :class:`TerminalPlayer` among agents from the registry and runs the one play
loop (:func:`agents.play.play_game`). What the person sees is a :class:`HumanView`: the table from
their seat (sides named from there, trumps marked ``*`` on every card, in colour on a terminal
unless ``NO_COLOR`` is set), the others' actions as the other players would see them
(:func:`public_text`), each trick's winner and why, the kitty when they take it, and why a move
they typed is not legal. Nothing they are shown depends on cards they may not see. Whatever ends
the game (its end, ``quit``, end of input, Ctrl-C, SIGTERM), the game so far is saved when
``--save`` was given. (``five-hundred watch``, where a spectator sees every hand, is
:mod:`training.table.watch`.)
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agents.base import Agent
from agents.play import Turn, play_game
from agents.registry import agent_factory
from five_hundred_env.actions import NO_NOMINATION, action_card, action_to_str, is_card_action
from five_hundred_env.cards import card_to_str, mask_to_cards
from five_hundred_env.engine import Deal, Phase
from five_hundred_env.env import raw_env
from five_hundred_env.records import load_record, replay_start, save_record
from five_hundred_env.render import (
    card_text,
    colour_supported,
    explain_illegal,
    hand_text,
    labelled,
    render_table,
    side_labels,
    trick_result,
)
from five_hundred_env.rules import Rules

QUIT_WORDS = ("quit", "exit", "q")
HELP_WORDS = ("", "?", "help", "legal")

Write = Callable[[str], None]


class QuitGame(Exception):
    """The person ended the game (end of input, or ``quit``)."""


def action_text(env: raw_env, action: int, deal: Deal, colour: bool = False) -> str:
    """An action of ``env`` as shown to a person: its §1 spelling, a card marked by
    :func:`~five_hundred_env.render.card_text` (trumps ``*``, colour)."""
    universal = env.actions.universal[action]
    if is_card_action(universal):
        return card_text(deal, action_card(universal), colour)
    return env.action_to_str(action)


def announcement(phase: Phase, action: int, text: str) -> str | None:
    """How another player's action (the universal ``action``, spelt ``text``, taken in ``phase``)
    is announced to the others, or ``None`` when they do not learn of it.

    Discards are face down (§5). Choosing not to nominate the joker is not announced: only the
    contractor holding the joker has that turn, so announcing it would show where the joker is
    (the environment hides that turn from the others too, §7). A nomination is announced: the
    nominated suit is public (every observation shows it) from then on.
    """
    if phase == Phase.DISCARD:
        return "discards a card"
    if action == NO_NOMINATION:
        return None
    if phase == Phase.CALL:  # the call is public (§10.5)
        return "calls " + text
    return text


def public_text(env: raw_env, turn: Turn, colour: bool = False) -> str | None:
    """How another player's action is announced (:func:`announcement`), marked for a person."""
    return announcement(turn.phase, env.actions.universal[turn.action], action_text(env, turn.action, turn.deal, colour))


def deal_summary(deal: Deal, names: Sequence[str], scores: Sequence[int], labels: Sequence[str] | None = None) -> str:
    """One line for a finished deal: the contract, made or lost, tricks and scores; ``labels``
    names the sides (default ``side 0``, ``side 1`` …)."""
    rules = deal.rules
    if deal.thrown_in:
        return "deal thrown in: everyone passed"
    made = "made" if deal.contract_made() else "lost"
    if deal.partner >= 0:  # five_handed: the partner is public once the deal is over (§10.5)
        made += f" with partner {names[deal.partner]}"
    elif deal.called_card >= 0:
        made += " alone (a discard was called)"
    if labels is None:
        tricks = ", ".join(f"side {i}: {t}" for i, t in enumerate(deal.side_tricks()))
        change, totals = f"{deal.score_change}", f"{list(scores)}"
    else:
        tricks, totals = labelled(labels, deal.side_tricks()), labelled(labels, scores)
        change = labelled(labels, deal.score_change or [])
    return (f"deal over: {action_to_str(deal.contract, rules)} by {names[deal.contractor]} {made} "
            f"(tricks {tricks}); score change {change}; scores {totals}")


class TableNews:
    """What everyone at the table learns after an action, beyond the action itself: a trick's
    winner and why, an open-misère hand going face up, the end of a deal. Shared by the person's
    view and the spectator's."""

    def __init__(self, names: Sequence[str], labels: Sequence[str] | None, colour: bool, write: Write) -> None:
        self.names, self.labels, self.colour, self.write = list(names), labels, colour, write
        self._exposed_deal: Deal | None = None

    def after(self, turn: Turn, scores: Sequence[int]) -> None:
        """Announce what ``turn`` made public (``scores``: the game's scores after it)."""
        deal = turn.deal
        universal = deal.history[-1] if deal.history else -1
        if turn.phase == Phase.PLAY and is_card_action(universal) and action_card(universal) == deal.called_card:
            self.write(f"{self.names[turn.seat]} played the called card: the partner of "
                       f"{self.names[deal.contractor]} (§10.5)")
        if turn.phase == Phase.PLAY and not deal.trick:  # its last card completed a trick
            self.write(trick_result(deal, len(deal.tricks) - 1, self.names, self.colour))
        if deal.exposed and self._exposed_deal is not deal:
            self._exposed_deal = deal
            self.write(f"{self.names[deal.contractor]} plays open misère: the hand is now face up: "
                       f"{hand_text(deal, deal.contractor, self.colour)}")
        if deal.is_over:
            self.write(deal_summary(deal, self.names, scores, self.labels))


class HumanView:
    """What the person at ``seat`` is shown: the table from their seat, the others' actions as
    public (:func:`public_text`), and the :class:`TableNews`. ``write`` prints a line."""

    def __init__(self, env: raw_env, seat: int, colour: bool = False, write: Write = print) -> None:
        self.env, self.seat, self.colour, self.write = env, seat, colour, write
        rules = env.rules
        mates = rules.partners_of(seat)
        self.names = [f"{name} (you)" if s == seat else f"{name} (partner)" if s in mates else name
                      for s, name in enumerate(env.possible_agents)]
        self.news = TableNews(self.names, side_labels(rules, seat), colour, write)

    def table(self) -> str:
        """The table as the person sees it now (:func:`~five_hundred_env.render.render_table` from their seat)."""
        env = self.env
        assert env.game is not None
        return render_table(env.game, env.possible_agents, colour=self.colour, deal=env.deal, viewer=self.seat)

    def announce(self, turn: Turn) -> None:
        """Tell the person about the action just taken (the play loop's ``on_turn``)."""
        env = self.env
        if turn.seat == self.seat:
            self.write(f"{self.names[turn.seat]}: {action_text(env, turn.action, turn.deal, self.colour)}")
        elif (text := public_text(env, turn, self.colour)) is not None:
            self.write(f"{self.names[turn.seat]}: {text}")
        assert env.game is not None
        self.news.after(turn, env.game.scores)


class TerminalPlayer(Agent):
    """The person at the terminal as an agent: shows the table (a :class:`HumanView`) and the legal
    moves, reads actions in the docs/rules.md §1 notation until one is legal (bad input is explained
    and asked again). ``read`` asks for a line (default: :func:`input`)."""

    name = "you"

    def __init__(self, view: HumanView, read: Callable[[str], str] | None = None) -> None:
        super().__init__(view.env.rules)
        self.view = view
        self.read = read

    def act(self, observation: dict[str, Any]) -> int:
        view, env = self.view, self.view.env
        mask = observation["action_mask"]
        legal_text = " ".join(env.action_to_str(a) for a in np.flatnonzero(mask))
        view.write("")
        view.write(view.table())
        view.write(f"legal moves: {legal_text}")
        while True:
            try:
                text = (self.read or input)("your action> ").strip()
            except EOFError:
                view.write("")
                raise QuitGame from None
            if text.lower() in QUIT_WORDS:
                raise QuitGame
            if text.lower() in HELP_WORDS:
                view.write(f"  legal moves: {legal_text}  (or 'quit')")
                continue
            try:
                action = env.str_to_action(text)
            except ValueError as e:
                view.write(f"  {e}; try again (legal moves: {legal_text})")
                continue
            if not mask[action]:
                view.write(f"  {explain_illegal(env.deal, env.actions.universal[action])}; legal moves: {legal_text}")
                continue
            return action


def play_in_terminal(rules: Rules, seat: int, opponents: str, seed: int, deals: int | None, save: Path | None) -> int:
    """A person plays ``seat`` against ``opponents`` agents (a registry spec), for a game to 500 or
    ``deals`` deals; the record goes to ``save`` however the game ends. Returns the exit status."""
    n = rules.num_players
    if not 0 <= seat < n:
        raise ValueError(f"--seat must be a seat 0..{n - 1}, got {seat}")
    factory = agent_factory(opponents)
    env = raw_env(rules=rules, episode="game", max_deals=deals)
    view = HumanView(env, seat, colour=colour_supported(sys.stdout))
    seats = [TerminalPlayer(view) if s == seat else factory(rules, seed * 100 + s) for s in range(n)]
    names = env.possible_agents
    mates = rules.partners_of(seat)
    with_partner = f", partner{'s' if len(mates) > 1 else ''} {' and '.join(names[m] for m in mates)}" if mates else ""
    print(f"Five Hundred ({rules.describe()}): you are {names[seat]}{with_partner}; "
          f"the others are {factory.label} agents.")
    print("Type actions as in docs/rules.md §1 (PASS, 7H, MISERE, Ah, JK:H, NOMINATE_S, PARTNER_2 ...); "
          "'help' lists the legal moves, 'quit' stops. Trumps are marked *.")
    try:
        game = play_game(env, seats, seed=seed, on_turn=view.announce)
        if game.is_over:
            print("game over; winners: " + ", ".join(view.names[s] for s in game.winning_seats()))
        else:
            print(f"stopped after {len(game.deals)} deals; scores {labelled(side_labels(rules, seat), game.scores)}")
    except QuitGame:
        print("game stopped.")
    finally:  # the game so far, however it ended (Ctrl-C and SIGTERM included)
        if save is not None and env.game is not None:
            save_record(env.game, save)
            print(f"saved the game record to {save}")
    return 0


def _card_names(mask: int, two_jokers: bool) -> list[str]:
    return [card_to_str(c, two_jokers) for c in mask_to_cards(mask)]


def replay_in_terminal(file: str | Path, step: bool) -> int:
    """Print a record's deals as dealt and the table after each action (``step``: wait for Enter
    after each). The whole record is checked first (:func:`five_hundred_env.records.replay`) and
    shown from the state it rebuilds. Returns the exit status."""
    game, played = replay_start(load_record(file))
    rules = game.rules
    deals = [game.deal, *game.upcoming_deals]
    names = [f"player_{i}" for i in range(rules.num_players)]
    two = rules.two_jokers
    try:
        for i, (deal, recorded) in enumerate(zip(deals, played, strict=True)):
            print(f"=== deal {i + 1} of {len(deals)}, dealer {names[deal.dealer]} ===")
            for s, hand in enumerate(deal.hands):
                print(f"  {names[s]}: " + " ".join(_card_names(hand, two)))
            print("  kitty: " + " ".join(_card_names(deal.kitty, two)))
            for action in recorded.history:
                actor = deal.to_act
                game.apply_action(action)
                print(f"\n{names[actor]}: {action_to_str(action, rules)}")
                print(render_table(game, names, deal=deal))
                if step:
                    input("[Enter] next action ")
            if deal.is_over:
                print(deal_summary(deal, names, game.scores))
    except (EOFError, KeyboardInterrupt):  # stopping a replay loses nothing
        print("\nreplay stopped.")
        return 0
    if game.is_over:
        print("game over; winners: " + ", ".join(names[s] for s in game.winning_seats()))
    return 0


__all__ = ["HumanView", "QuitGame", "TableNews", "TerminalPlayer", "action_text", "announcement", "deal_summary",
           "play_in_terminal", "public_text", "replay_in_terminal"]
