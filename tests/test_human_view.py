"""What the person at ``five-hundred play`` is shown (training.table.terminal.HumanView).

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
from env_helpers import PRESET_NAMES, deck_names

from agents.base import Agent
from agents.heuristic import HeuristicAgent
from agents.play import play_game
from five_hundred_env.actions import parse_action
from five_hundred_env.engine import Deal, deal_to_cards
from five_hundred_env.env import raw_env
from five_hundred_env.render import colour_supported, explain_illegal, render_table, trick_result
from five_hundred_env.rules import make_rules
from training.cli import main
from training.table.terminal import HumanView, TerminalPlayer

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
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
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
    # with five or six players the pool leaves out player_1, whose first bid (right after the
    # person's) would show any change of its hand at once, before the comparison sees play
    hidden = [c for h in hands[1 if rules.num_players <= 4 else 2:] for c in h] + kitty
    first = rng.choice(hidden)
    second = rng.choice([c for c in hidden if not any(first in g and c in g for g in [*hands, kitty])])
    if rules.dead_hand_size:  # §10.8: a card of the dead hand, which nobody sees, changes place with the kitty's
        dealt_cards = {c for h in [*hands, kitty] for c in h}
        first = rng.choice(kitty)
        second = rng.choice([c for c in deck_names(rules) if c not in dealt_cards])
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
    assert deal.contractor == 1 and deal.sitting_out_seats == (3,)
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


# -- 2. trick winners and why ----------------------------------------------------------------------
TOP_TEN_HEARTS = "JK Jh Jd Ah Kh Qh Th 9h 8h 7h"
NAMES = [f"player_{i}" for i in range(4)]


def contracted(given: dict[int, str], contract: str, *then: str, preset: str = "australian", **options) -> Deal:
    """A deal in which seat 0 holds ``given[0]`` (the other seats as given, the rest in card
    order), bids ``contract``, the others pass, seat 0 discards the kitty it picked up, then
    ``then`` (e.g. a nomination and plays; ``-`` plays the player's first legal card)."""
    from env_helpers import fill_deal

    rules = make_rules(preset, **options)
    hands, kitty = fill_deal(rules, given)
    deal = Deal.from_cards(rules, hands, kitty, dealer=rules.num_players - 1)
    for text in [contract, *["PASS"] * (rules.num_players - 1), *kitty, *then]:
        deal.apply_action(deal.legal_actions()[0] if text == "-" else parse_action(text, rules))
    return deal


@pytest.mark.parametrize(("lead", "why"), [
    ("Jh", "Jh*, the right bower"),
    ("Jd", "Jd*, the left bower"),
    ("JK", "JK*, the joker, the highest trump"),
    ("7h", "7h*, the highest trump"),
])
def test_a_trump_trick_is_won_by_the_bowers_the_joker_or_the_highest_trump(lead, why):
    """§6 hearts trumps: JK > Jh (right bower) > Jd (left bower) > Ah …; nobody else holds a trump."""
    deal = contracted({0: TOP_TEN_HEARTS}, "6H", lead, "-", "-", "-")
    assert trick_result(deal, 0, NAMES) == f"trick 1 won by player_0 with {why}"


def test_a_trump_played_on_another_suit_wins_as_the_highest_trump():
    """§7: a trick holding a trump goes to the highest trump, whatever was led."""
    deal = contracted({0: "As Ks Qs Js Ts 9s 8s 7s 6s 5s", 1: "4h Ac Kc Qc Jc Tc 9c 8c 7c 6c"}, "6H", "As", "4h", "-", "-")
    assert trick_result(deal, 0, NAMES) == "trick 1 won by player_1 with 4h*, the highest trump"


@pytest.mark.parametrize(("then", "why"), [
    (("NO_NOMINATION", "As"), "As, the highest ♠, the suit led"),
    (("NO_NOMINATION", "JK:D"), "JK, the joker (no suit: it beats every card)"),
    (("NOMINATE_S", "JK"), "JK, the joker, nominated ♠: the highest ♠, the suit led"),
])
def test_a_no_trump_trick_is_won_by_the_suit_led_or_the_joker(then, why):
    """§6/§7 no trumps: the highest card of the suit led wins, a suitless joker beats everything,
    a nominated joker is the top card of its suit."""
    deal = contracted({0: "JK As 7h 8h 9h Th Jh Qh Kh Ah"}, "6NT", *then, "-", "-", "-")
    assert trick_result(deal, 0, NAMES) == f"trick 1 won by player_0 with {why}"


def test_the_person_sees_the_last_trick_and_its_winner_and_the_sides_named_from_their_seat():
    rules = make_rules("australian")
    a, _ = transcript(rules, *dealt(rules, 1))
    tables = [t for t in lines(a) if "to act, hand:" in t]
    later = [t for t in tables if "trick 2:" in t]
    assert later and all("last trick: " in t and "; trick 1 won by " in t for t in later)
    assert all("scores: you & partner 0, opponents 0" in t for t in tables)
    assert any(re.match(r"^trick \d+ won by player_\d( \((you|partner)\))? with \S+, the ", line) for line in lines(a))


def test_three_players_name_the_others_by_seat():
    rules = make_rules("italian_3p")
    a, _ = transcript(rules, *dealt(rules, 1))
    assert any("scores: you 0, player_1 0, player_2 0" in t for t in lines(a))


def test_the_contractor_sees_the_kitty_they_picked_up_with_its_trumps_marked():
    """§5: the contractor takes the kitty into their hand; the person is shown which cards it held."""
    from env_helpers import fill_deal

    rules = make_rules("australian")
    hands, kitty = fill_deal(rules, {0: TOP_TEN_HEARTS}, kitty="6h As 5c")
    env = raw_env(rules=rules, episode="game")
    env.reset(seed=0, options={"dealer": 3, "hands": hands, "kitty": kitty})
    for text in ("6H", "PASS", "PASS", "PASS"):
        env.step(env.str_to_action(text))
    table = HumanView(env, 0).table()
    assert "you picked up the kitty: 6h* As 5c; discard 3 more" in table
    assert "hand: trumps: JK* Jh* Jd* Ah* Kh* Qh* Th* 9h* 8h* 7h* 6h*" in table
    assert "kitty" not in HumanView(env, 1).table()  # another seat is not shown it


# -- 3. illegal moves explained --------------------------------------------------------------------
def explained(deal: Deal, text: str) -> str:
    return explain_illegal(deal, parse_action(text, deal.rules))


def test_not_following_suit_is_explained_with_the_cards_that_follow():
    """§7: follow the effective suit led if you can; the left bower is a trump, not its printed suit (§6)."""
    deal = contracted({0: "As JK 7h 8h 9h Th Jh Qh Kh Ah"}, "6NT", "NO_NOMINATION", "As")
    assert explained(deal, "5c") == "5c is not legal now: you must follow ♠ (you hold Ks Qs Js Ts 9s 8s 7s 6s 5s)"
    deal = contracted({0: "Ad JK Jh Ah Kh Qh Th 9h 8h 7h", 1: "Jd Kd 5s 6s 7s 8s 9s Ts Js Qs"}, "6H", "Ad")
    assert explained(deal, "Jd") == ("Jd is not legal now: Jd is a trump here (the left bower), not a ♦; "
                                     "you must follow ♦ (you hold Kd)")
    assert explained(deal, "Ah") == "Ah is not legal now: you do not hold Ah"


def test_joker_leads_are_explained():
    """§7: a suitless joker is led naming a suit not yet led (AU); a trump joker is led as JK."""
    deal = contracted({0: "JK As 7h 8h 9h Th Jh Qh Kh Ah"}, "6NT", "NO_NOMINATION")
    assert explained(deal, "JK") == "JK is not legal now: a suitless joker is led naming the suit to follow, e.g. JK:S"
    for _ in range(4):
        deal.apply_action(parse_action("As", deal.rules) if deal.to_act == 0 else deal.legal_actions()[0])
    assert deal.tricks[0][3] == 0 and deal.to_act == 0
    assert explained(deal, "JK:S") == "JK:S is not legal now: the joker may name only a suit not yet led (led so far: ♠) (§7)"
    trumps = contracted({0: TOP_TEN_HEARTS}, "6H")
    assert explained(trumps, "JK:S") == "JK:S is not legal now: the joker is a trump here: lead it as JK"


def test_bids_and_discards_are_explained():
    """§4 bid order and misère after a 7-trick bid (AU), no misère (FR), both jokers; §5 discards."""
    from env_helpers import fill_deal

    rules = make_rules("australian")
    hands, kitty = dealt(rules, 0)
    deal = Deal.from_cards(rules, hands, kitty, dealer=3)
    assert explained(deal, "MISERE") == "MISERE is not legal now: misère may be bid only over a 7-trick bid (§4)"
    assert explained(deal, "Ah") == "Ah is not legal now: it is the auction: bid or PASS"
    deal.apply_action(parse_action("8H", rules))
    assert explained(deal, "7NT") == "7NT is not legal now: a bid must outrank 8H"
    french = Deal.from_cards(make_rules("french_46"), *dealt(make_rules("french_46"), 0), dealer=3)
    assert explained(french, "MISERE") == "MISERE is not legal now: there is no misère in these rules"
    bound = make_rules("french_46", both_jokers_min_bid=8)
    deal = Deal.from_cards(bound, *fill_deal(bound, {0: "JK1 JK2 As Ks Qs Js Ts 9s 8s 7s"}), dealer=3)
    assert explained(deal, "PASS").startswith("PASS is not legal now: you were dealt both jokers: bid 8 tricks or more")
    taken = Deal.from_cards(rules, *fill_deal(rules, {0: TOP_TEN_HEARTS}), dealer=3)
    for text in ("6H", "PASS", "PASS", "PASS"):
        taken.apply_action(parse_action(text, rules))
    assert explained(taken, "As") == "As is not legal now: you do not hold As"
    assert explained(taken, "PASS") == "PASS is not legal now: discard 3 more card(s) from your hand"


def test_the_person_is_told_why_a_typed_move_is_refused():
    rules = make_rules("australian")
    a, _ = transcript(rules, *dealt(rules, 1))
    assert any(re.match(r"^  \S+ is not legal now: .*; legal moves: ", line) for line in lines(a))


# -- colour ----------------------------------------------------------------------------------------
class Terminal(io.StringIO):
    """A standard output that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def test_colour_only_on_a_terminal_and_never_with_no_color(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert colour_supported(Terminal()) and not colour_supported(io.StringIO())
    monkeypatch.setenv("NO_COLOR", "1")
    assert not colour_supported(Terminal())


def play_one_deal_on(stdout, monkeypatch) -> str:
    monkeypatch.setattr("sys.stdout", stdout)

    def read(_prompt=""):
        legal = re.findall(r"^legal moves: (.*)$", stdout.getvalue(), flags=re.MULTILINE)[-1].split()
        return "PASS" if "PASS" in legal else legal[0]

    monkeypatch.setattr(builtins, "input", read)
    assert main(["play", "--seed", "4", "--deals", "1"]) == 0
    return stdout.getvalue()


def test_play_is_in_colour_on_a_terminal(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    out = play_one_deal_on(Terminal(), monkeypatch)
    assert "\033[1;33m" in out and "*\033[0m" in out  # trumps highlighted
    assert "\033[31m" in out  # red suits


@pytest.mark.parametrize("terminal", [True, False])
def test_play_has_no_colour_with_no_color_or_off_a_terminal(monkeypatch, terminal):
    if terminal:
        monkeypatch.setenv("NO_COLOR", "1")
    else:
        monkeypatch.delenv("NO_COLOR", raising=False)
    out = play_one_deal_on(Terminal() if terminal else io.StringIO(), monkeypatch)
    assert "\033[" not in out and "*" in out  # trumps still marked, without colour


def test_the_plain_table_is_unchanged_without_a_viewer():
    """The environment's renderer (no ``viewer``) keeps its own unmarked trick line."""
    deal = contracted({0: TOP_TEN_HEARTS}, "6H", "JK")
    from five_hundred_env.engine import Game

    game = Game(deal.rules, first_deal=deal)
    assert "trick 1: player_0:JK (led H)" in render_table(game, NAMES)
    assert "trick 1: player_0:JK* (led H)" in render_table(game, NAMES, viewer=1)
