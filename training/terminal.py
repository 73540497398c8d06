"""A person at the terminal: ``five-hundred play`` (one seat against agents) and ``five-hundred replay``.

``play`` seats a :class:`TerminalPlayer` among agents from the registry and runs the one play
loop (:func:`agents.play.play_game`); the others' actions are announced as the other players
would see them (:func:`public_text`). Whatever ends the game (its end, ``quit``, end of input,
Ctrl-C, SIGTERM), the game so far is saved when ``--save`` was given.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agents.base import Agent
from agents.play import Turn, play_game
from agents.registry import agent_factory
from five_hundred_env.actions import NO_NOMINATION, action_to_str
from five_hundred_env.cards import card_to_str, mask_to_cards
from five_hundred_env.engine import Deal, Game, Phase
from five_hundred_env.env import raw_env
from five_hundred_env.records import load_record, replay, save_record
from five_hundred_env.render import render_table
from five_hundred_env.rules import Rules

QUIT_WORDS = ("quit", "exit", "q")
HELP_WORDS = ("", "?", "help", "legal")


class QuitGame(Exception):
    """The person ended the game (end of input, or ``quit``)."""


class TerminalPlayer(Agent):
    """The person at the terminal as an agent: shows the table and the legal moves, reads actions
    in the RULES.md §1 notation until one is legal (bad input is explained and asked again)."""

    name = "you"

    def __init__(self, env: raw_env) -> None:
        super().__init__(env.rules)
        self.env = env

    def act(self, observation: dict[str, Any]) -> int:
        env = self.env
        mask = observation["action_mask"]
        legal_text = " ".join(env.action_to_str(a) for a in np.flatnonzero(mask))
        print()
        print(env.render())
        print(f"legal moves: {legal_text}")
        while True:
            try:
                text = input("your action> ").strip()
            except EOFError:
                print()
                raise QuitGame from None
            if text.lower() in QUIT_WORDS:
                raise QuitGame
            if text.lower() in HELP_WORDS:
                print(f"  legal moves: {legal_text}  (or 'quit')")
                continue
            try:
                action = env.str_to_action(text)
            except ValueError as e:
                print(f"  {e}; try again (legal moves: {legal_text})")
                continue
            if not mask[action]:
                print(f"  {env.action_to_str(action)} is not legal now; legal moves: {legal_text}")
                continue
            return action


def public_text(env: raw_env, turn: Turn) -> str | None:
    """How another player's action is announced, or ``None`` when the others do not learn of it.

    Discards are face down (§5). Choosing not to nominate the joker is not announced: only the
    contractor holding the joker has that turn, so announcing it would show where the joker is
    (the environment hides that turn from the others too, §7). A nomination is announced: the
    nominated suit is public (every observation shows it) from then on.
    """
    if turn.phase == Phase.DISCARD:
        return "discards a card"
    if env.actions.universal[turn.action] == NO_NOMINATION:
        return None
    return env.action_to_str(turn.action)


def deal_summary(deal: Deal, names: Sequence[str], scores: Sequence[int]) -> str:
    """One line for a finished deal: the contract, made or lost, tricks and scores."""
    rules = deal.rules
    if deal.thrown_in:
        return "deal thrown in: everyone passed"
    made = "made" if deal.contract_made() else "lost"
    tricks = ", ".join(f"side {i}: {t}" for i, t in enumerate(deal.side_tricks()))
    return (f"deal over: {action_to_str(deal.contract, rules)} by {names[deal.contractor]} {made} "
            f"(tricks {tricks}); score change {deal.score_change}; scores {list(scores)}")


def play_in_terminal(rules: Rules, seat: int, opponents: str, seed: int, deals: int | None, save: Path | None) -> int:
    """A person plays ``seat`` against ``opponents`` agents (a registry spec), for a game to 500 or
    ``deals`` deals; the record goes to ``save`` however the game ends. Returns the exit status."""
    n = rules.num_players
    if not 0 <= seat < n:
        raise ValueError(f"--seat must be a seat 0..{n - 1}, got {seat}")
    factory = agent_factory(opponents)
    env = raw_env(rules=rules, episode="game", render_mode="ansi", max_deals=deals)
    seats = [TerminalPlayer(env) if s == seat else factory(rules, seed * 100 + s) for s in range(n)]
    names = env.possible_agents
    partner = rules.partner_of(seat)
    with_partner = f", partner {names[partner]}" if partner is not None else ""
    print(f"Five Hundred ({rules.describe()}): you are {names[seat]}{with_partner}; "
          f"the others are {factory.label} agents.")
    print("Type actions as in docs/rules.md §1 (PASS, 7H, MISERE, Ah, JK:H, NOMINATE_S ...); "
          "'help' lists the legal moves, 'quit' stops.")

    def announce(turn: Turn) -> None:
        if turn.seat == seat:
            print(f"{names[seat]} (you): {env.action_to_str(turn.action)}")
        elif (text := public_text(env, turn)) is not None:
            print(f"{names[turn.seat]}: {text}")
        if turn.deal.is_over:
            print(deal_summary(turn.deal, names, env.game.scores))

    try:
        game = play_game(env, seats, seed=seed, on_turn=announce)
        if game.is_over:
            print("game over; winners: " + ", ".join(names[s] for s in game.winning_seats()))
        else:
            print(f"stopped after {len(game.deals)} deals; scores {game.scores}")
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
    state = replay(load_record(file))
    played = [state] if isinstance(state, Deal) else state.deals
    rules = played[0].rules
    deals = [Deal(rules, d.dealt, d.kitty, d.dealer) for d in played]
    scores = None if isinstance(state, Deal) else state.starting_scores
    game = Game(rules, first_deal=deals[0], scores=scores, max_deals=len(deals))  # no deal beyond the record
    game.upcoming_deals = deals[1:]
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


__all__ = ["QuitGame", "TerminalPlayer", "deal_summary", "play_in_terminal", "public_text", "replay_in_terminal"]
