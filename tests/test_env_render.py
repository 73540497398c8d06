"""Rendering (issue 3 item 8): ``"ansi"`` returns and ``"human"`` prints the table — contract and
contractor, bidding, the current trick, tricks won, scores, and the acting player's hand sorted by
suit with its trumps marked ``*`` (in colour only where the terminal supports it)."""

from __future__ import annotations

import importlib
import random

import pytest
from env_helpers import (
    PRESET_NAMES,
    act,
    bid_and_pass,
    discard_kitty,
    fill_deal,
    forced_hands,
    make_env,
    modest_action,
    random_action,
)
from pettingzoo.test import render_test

env_module = importlib.import_module("five_hundred_env.env")  # the package's `env` is the function


def slam_in_play(render_mode="ansi", preset="australian", scores=None):
    """Seat 0 holds the ten top hearts (docs/rules.md §6), bids 6H, discards the kitty: play begins."""
    e = make_env(preset, render_mode=render_mode, episode="game" if scores else "deal")
    n = e.unwrapped.rules.num_players
    options = forced_hands(preset, holder=0, dealer=n - 1)
    if scores:
        options["scores"] = scores
    e.reset(options=options)
    bid_and_pass(e, "6H", bidder=0)
    discard_kitty(e)
    return e


def test_ansi_shows_contract_bidding_trick_tricks_won_scores_and_the_hand_with_trumps_marked():
    e = slam_in_play(scores=[120, -30, 120, -30])
    text = e.render()
    assert isinstance(text, str) and "\033[" not in text
    assert "contract: 6H by player_0" in text
    assert "bidding: 0:6H 1:PASS 2:PASS 3:PASS" in text
    assert "trick 1: -" in text and "tricks won: side 0: 0, side 1: 0" in text
    assert "scores: side 0: 120, side 1: -30" in text
    # [AU] hearts trumps: the joker, the right bower Jh and the left bower Jd are trumps (§6)
    assert "player_0 to act, hand: trumps: JK* Jh* Jd* Ah* Kh* Qh* Th* 9h* 8h* 7h*" in text
    act(e, "JK")
    text = e.render()
    assert "trick 1: player_0:JK (led H)" in text and "player_1 to act" in text
    for _ in range(3):
        e.step(random_action(e.observe(e.agent_selection), random.Random(0)))
    text = e.render()
    assert "trick 2: -" in text and "tricks won: side 0: 1, side 1: 0" in text and "player_0 to act" in text


def test_the_hand_is_sorted_by_suit_with_trumps_first_and_non_trumps_unmarked():
    hands, kitty = fill_deal("australian", {0: "5s Ks Jc 9c JK 4d Ad Jh 7h Qh"})
    e = make_env("australian", render_mode="ansi")
    e.reset(options={"dealer": 3, "hands": hands, "kitty": kitty})
    bid_and_pass(e, "6S", bidder=0)
    discard_kitty(e)
    hand_line = e.render().splitlines()[-1]
    # spades trumps: JK, the right bower Js is not held, the left bower Jc, then K 5 of spades
    assert hand_line == "player_0 to act, hand: trumps: JK* Jc* Ks* 5s* | ♣: 9c | ♦: Ad 4d | ♥: Qh Jh 7h"


def test_no_trumps_marks_nothing_and_shows_a_suitless_joker_apart():
    e = make_env("australian", render_mode="ansi")
    e.reset(options=forced_hands("australian", holder=0, dealer=3))
    bid_and_pass(e, "6NT", bidder=0)
    discard_kitty(e)
    act(e, "NO_NOMINATION")
    text = e.render()
    assert "*" not in text and "joker: JK" in text


def test_open_misere_shows_the_exposed_hand():
    e = make_env("italian_3p", render_mode="ansi")
    e.reset(seed=3, options={"dealer": 2})
    bid_and_pass(e, "OPEN_MISERE", bidder=0)
    discard_kitty(e)
    assert "exposed (player_0):" in e.render()


def test_human_prints_the_table_without_colour_when_not_a_terminal(capsys):
    e = slam_in_play("human")
    capsys.readouterr()
    assert e.render() is None
    out = capsys.readouterr().out
    assert "contract: 6H by player_0" in out and "Jh*" in out and "\033[" not in out
    act(e, "JK")  # "human" prints the table after every step
    assert "trick 1: player_0:JK" in capsys.readouterr().out


def test_human_uses_colour_where_the_terminal_supports_it(capsys, monkeypatch):
    monkeypatch.setattr(env_module, "colour_supported", lambda *args: True)
    e = slam_in_play("human")
    capsys.readouterr()
    e.render()
    out = capsys.readouterr().out
    assert "\033[1;33mJh*\033[0m" in out  # trumps highlighted


def test_render_without_a_mode_warns():
    e = make_env()
    e.reset(seed=0)
    with pytest.warns(UserWarning, match="render_mode"):
        assert e.render() is None


def test_the_final_render_of_a_deal_episode_shows_the_deal_just_played():
    e = make_env("french_46", render_mode="ansi")
    rng = random.Random(1)
    e.reset(seed=1)
    while not e.unwrapped.terminations[e.agent_selection]:
        e.step(modest_action(e.observe(e.agent_selection), rng))
    deal = e.unwrapped.deal
    assert len(deal.tricks) == 10 and not e.unwrapped.game.is_over
    text = e.render()
    assert "phase deal_over" in text and "trick 11" not in text and "to act" not in text
    won = deal.side_tricks()
    assert "last trick: " in text and f"tricks won: side 0: {won[0]}, side 1: {won[1]}" in text


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_pettingzoo_render_test(preset):
    render_test(lambda render_mode=None: make_env(preset, render_mode=render_mode))
