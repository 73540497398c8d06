"""What the person at ``five-hundred play`` is shown (training.terminal.HumanView).

First and foremost: no line reveals hidden information. Like the environment's no-leak tests
(tests/test_env_observation.py), the same game is played twice — same seeds, same agents, the
same scripted person — with hidden cards moved between the other hands and the kitty, and what
the person sees must be the same for as long as what they may know is the same: the transcript
is compared up to the first action after which the person's own observation
(``env.observe``) differs. Then: trick winners and why (§6, §7), the last trick, the kitty for
the contractor (§5), trumps marked on every card, sides named from the person's seat, colour on a
terminal only (and never with ``NO_COLOR``), and illegal moves explained (§4, §5, §7).
"""

from __future__ import annotations

import builtins
import io
import random
import re

import pytest
from env_helpers import PRESET_NAMES

from agents.base import Agent
from agents.heuristic import HeuristicAgent
from agents.play import play_game
from five_hundred_env.actions import parse_action
from five_hundred_env.engine import Deal, deal_to_cards
from five_hundred_env.env import raw_env
from five_hundred_env.render import colour_supported, explain_illegal, render_table, trick_result
from five_hundred_env.rules import make_rules
from training.cli import main
from training.terminal import HumanView, TerminalPlayer

HUMAN = 0  # the dealer is the last seat, so that the person speaks first


class Scripted(Agent):
    """Plays its script's next action whenever that is legal, otherwise the heuristic's choice."""

    def __init__(self, env: raw_env, script: list[str], seed: int) -> None:
        super().__init__(env.rules, seed)
        self.env, self.script = env, list(script)
        self.fallback = HeuristicAgent(env.rules, seed=seed)

    def act(self, observation):
        if self.script:
            action = self.env.str_to_action(self.script[0])
            if observation["action_mask"][action]:
                self.script.pop(0)
                return action
        return self.fallback.act(observation)


def scripted_person(stream: list):
    """The person's keyboard, reading only the transcript: first a card of their hand that is not
    legal (to be explained), then PASS when it is legal, else the first legal move."""
    pending: list[str] = []

    def read(_prompt: str) -> str:
        if pending:
            return pending.pop()
        texts = [x for x in stream if isinstance(x, str)]
        legal = next(t for t in reversed(texts) if t.startswith("legal moves: "))[len("legal moves: "):].split()
        table = next(t for t in reversed(texts) if "hand: " in t)
        held = [c.rstrip("*") for c in re.findall(r"(?:^|\s)(\S+)", table.rsplit("hand: ", 1)[1]) if not c.endswith(":")]
        choice = "PASS" if "PASS" in legal else legal[0]
        refused = [c for c in held if c not in legal and c != "|"]
        if refused:
            pending.append(choice)
            return refused[0]
        return choice

    return read


def transcript(rules, hands, kitty, scripts=None):
    """Everything the person at seat 0 is shown in one deal, with a marker ``("obs", bytes)``
    each time their own observation changes (before the announcement of the action that changed it)."""
    env = raw_env(rules=rules, episode="game", max_deals=1)
    stream: list = []
    view = HumanView(env, HUMAN, write=stream.append)
    seats = [TerminalPlayer(view, read=scripted_person(stream)) if s == HUMAN
             else Scripted(env, (scripts or {}).get(s, []), seed=s) for s in range(rules.num_players)]
    name = env.possible_agents[HUMAN]
    last: list[bytes] = [b""]

    def on_turn(turn):
        obs = env.observe(name)
        digest = obs["observation"].tobytes() + obs["action_mask"].tobytes()
        if digest != last[0]:
            stream.append(("obs", digest))
            last[0] = digest
        view.announce(turn)

    play_game(env, seats, seed=0, options={"dealer": rules.num_players - 1, "hands": hands, "kitty": kitty}, on_turn=on_turn)
    return stream, env.game.deals[0]


def same_until_the_person_may_know_more(a: list, b: list) -> list:
    """Assert that two transcripts are equal up to their first differing observation marker (a
    differing text line before it is a leak); return the common part."""
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            assert isinstance(x, tuple) and isinstance(y, tuple), (
                f"the person was shown different things while knowing the same:\n{x!r}\n{y!r}")
            return a[:i]
    assert len(a) == len(b), "one transcript goes on after the other ended, with the same observations"
    return a


def dealt(rules, seed):
    deal = Deal.new(rules, random.Random(seed), rules.num_players - 1)
    cards = deal_to_cards(rules, deal.hands, deal.kitty)
    return cards["hands"], cards["kitty"]


def swapped(hands, kitty, first: str, second: str):
    """The deal with two cards exchanging places (hands and kitty as lists of names)."""
    places = [list(h) for h in hands] + [list(kitty)]
    for group in places:
        for i, card in enumerate(group):
            group[i] = second if card == first else first if card == second else card
    return places[:-1], places[-1]


def moved_to(hands, kitty, card: str, seat: int):
    """The deal with ``card`` in ``seat``'s hand (exchanged with that hand's first card)."""
    return (hands, kitty) if card in hands[seat] else swapped(hands, kitty, card, hands[seat][0])


def lines(stream) -> list[str]:
    return [x for x in stream if isinstance(x, str)]


# -- 1. no line reveals hidden information ---------------------------------------------------------
@pytest.mark.parametrize("preset", PRESET_NAMES)
@pytest.mark.parametrize("seed", range(3))
def test_moving_one_hidden_card_changes_nothing_the_person_sees(preset, seed):
    """A card of another hand or the kitty changes place (heuristic opponents, a scripted person)."""
    rules = make_rules(preset)
    hands, kitty = dealt(rules, seed)
    rng = random.Random(seed)
    hidden = [c for h in hands[1:] for c in h] + kitty
    first = rng.choice(hidden)
    second = rng.choice([c for c in hidden if not any(first in g and c in g for g in [*hands, kitty])])
    a, _ = transcript(rules, hands, kitty)
    b, _ = transcript(rules, *swapped(hands, kitty, first, second))
    common = same_until_the_person_may_know_more(a, b)
    assert any(line.startswith("player_1: ") for line in lines(common))  # the comparison saw play


@pytest.mark.parametrize("exchange", ["kitty_and_contractor", "kitty_and_other_hand"])
def test_the_kitty_and_the_discards_of_another_contractor_stay_hidden(exchange):
    """§5: only the contractor sees the kitty and what they discard."""
    rules = make_rules("australian")
    hands, kitty = dealt(rules, 5)
    scripts = {1: ["7S"], 2: ["PASS"], 3: ["PASS"]}
    other = hands[1][0] if exchange == "kitty_and_contractor" else hands[3][0]
    a, deal = transcript(rules, hands, kitty, scripts)
    b, _ = transcript(rules, *swapped(hands, kitty, kitty[0], other), scripts)
    assert deal.contractor == 1
    common = lines(same_until_the_person_may_know_more(a, b))
    assert common.count("player_1: discards a card") == rules.kitty_size
    assert not any("kitty" in line for line in lines(a))


def test_another_players_nomination_turn_is_invisible():
    """§7: declining to nominate the joker is a turn only its holder has; the person must not be
    able to tell that it happened (in the second deal the joker is elsewhere: no such turn)."""
    rules = make_rules("australian")
    hands, kitty = moved_to(*dealt(rules, 2), "JK", 1)
    scripts = {1: ["6NT", "NO_NOMINATION"], 2: ["PASS"], 3: ["PASS"]}
    a, deal = transcript(rules, hands, kitty, scripts)
    assert parse_action("NO_NOMINATION", rules) in deal.history  # the turn happened in the first deal
    b, other = transcript(rules, *swapped(hands, kitty, "JK", hands[3][0]), scripts)
    assert parse_action("NO_NOMINATION", rules) not in other.history
    common = lines(same_until_the_person_may_know_more(a, b))
    assert common.count("player_1: discards a card") == 3
    assert not any("NOMINATION" in line or "nominat" in line for line in lines(a))


@pytest.mark.parametrize("exposure", ["after_first_trick", "before_first_lead"])
def test_an_open_misere_hand_is_shown_no_earlier_than_the_rules_say(exposure):
    """§7 ``open_misere_exposure``: the contractor's hand goes face up after the first trick (AU)
    or before the first lead (IT), not before; the partner sitting out never shows theirs."""
    rules = make_rules("australian", open_misere_exposure=exposure)
    hands, kitty = dealt(rules, 7)
    scripts = {1: ["OPEN_MISERE"], 2: ["PASS"], 3: ["PASS"]}
    a, deal = transcript(rules, hands, kitty, scripts)
    assert deal.contractor == 1 and deal.sitting_out == 3
    first_trick = {c for _s, c in deal.tricks[0][2]}
    keep = [c for c in hands[1] if parse_action(c, rules) - 28 not in first_trick | set(_bits(deal.discards))]
    b, _ = transcript(rules, *swapped(hands, kitty, keep[0], hands[3][0]), scripts)
    common = lines(same_until_the_person_may_know_more(a, b))
    assert not any("face up" in line or "exposed" in line for line in common)
    assert any("face up" in line for line in lines(a))
    if exposure == "after_first_trick":  # the person played to trick 1 before the hand was shown
        assert any("trick 1: player_1:" in line for line in common)
    else:  # the last discard laid the hand open
        assert common.count("player_1: discards a card") == rules.kitty_size - 1


def _bits(mask: int) -> list[int]:
    return [c for c in range(46) if mask >> c & 1]
