"""OpenSpiel's IS-MCTS bot against the project's heuristic, in duplicate: every board is played
twice with the sides swapped, on the OpenSpiel game (``five_hundred_env.openspiel``). The bot
resamples the cards it cannot see with the game's ``resample_from_infostate`` (the exact
information-set sampler) and values positions by random roll-outs.

    python docs/examples/openspiel_ismcts.py --boards 10 --simulations 100
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from open_spiel.python.algorithms import ismcts, mcts

from agents import HeuristicAgent
from five_hundred_env import make_rules
from five_hundred_env.cards import mask_to_cards
from five_hundred_env.engine import Deal
from five_hundred_env.observation import ObservationEncoder
from five_hundred_env.openspiel import load_game
from training.evaluation.evaluate import board_deals, mean_ci95


def dealt_state(game, deal):
    """The OpenSpiel state of a board: its chance outcomes (the dealer, then every card) applied."""
    state = game.new_initial_state()
    for outcome in [deal.dealer, *(c for hand in (*deal.dealt, deal.kitty) for c in mask_to_cards(hand))]:
        state.apply_action(outcome)
    return state


def play(game, deal, bot, heuristic, encoder, bot_side: int) -> float:
    """One play of a board; the bot's side's zero-sum result (points)."""
    rules = game.rules
    state = dealt_state(game, deal)
    while not state.is_terminal():
        seat = state.current_player()
        if rules.side_of(seat) == bot_side:
            action = bot.step(state)
        else:
            mask = np.zeros(game.num_distinct_actions(), dtype=np.int8)
            mask[state.legal_actions()] = 1
            action = heuristic.act({"observation": encoder.encode(state.deal, seat), "action_mask": mask})
        state.apply_action(action)
    return state.returns()[rules.seats_of(bot_side)[0]]


def main(argv: list[str] | None = None) -> tuple[float, float, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--boards", type=int, default=10, help="duplicate boards (each played twice)")
    parser.add_argument("--simulations", type=int, default=100, help="IS-MCTS simulations per decision")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    rules = make_rules("australian")
    game = load_game(rules)
    bot = ismcts.ISMCTSBot(game, mcts.RandomRolloutEvaluator(1, np.random.RandomState(args.seed)), uct_c=2.0,
                           max_simulations=args.simulations, random_state=np.random.RandomState(args.seed))
    heuristic, encoder = HeuristicAgent(rules, seed=args.seed), ObservationEncoder(rules)
    start, per_board = time.perf_counter(), []
    for board in board_deals(rules, args.boards, args.seed):
        deal = Deal.from_cards(rules, board.hands, board.kitty, board.dealer)
        per_board.append(sum(play(game, deal, bot, heuristic, encoder, side) for side in (0, 1)) / 2)
    mean, low, high, _se = mean_ci95(per_board)
    print(f"IS-MCTS ({args.simulations} simulations, random roll-outs) vs heuristic, {args.boards} boards x 2: "
          f"{mean:+.1f} points per deal (95% CI {low:+.1f} .. {high:+.1f}); {time.perf_counter() - start:.0f} s")
    return mean, low, high


if __name__ == "__main__":
    main()
