"""The web table's HTTP API (training.web) through FastAPI's test client, and its game sessions.

First the honesty of what a player is sent: like the terminal's transcript twins
(tests/test_human_view.py), the same game is played twice with hidden cards moved between the
other hands and the kitty, and the person's views must be identical for as long as their own
observation is. Then every endpoint, every bad input (each a 4xx with a one-line message, the game
unchanged), a slow agent that does not hold up another game, the bound on games, idle expiry, and
a server restart that resumes every game where it was.
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
from env_helpers import PRESET_NAMES
from web_helpers import PersonClient, Waiting, creator_token

from agents.base import Agent
from agents.heuristic import HeuristicAgent
from agents.pretrained import available_presets, scratch_presets
from five_hundred_env.actions import ActionTable, action_to_str, parse_action
from five_hundred_env.cards import card_to_str, mask_to_cards, parse_card
from five_hundred_env.engine import Deal, deal_to_cards
from five_hundred_env.records import record_of, replay
from five_hundred_env.rules import make_rules
from training.web.app import MAX_BODY, create_app
from training.web.menu import BUILTIN_CHOICES, MAX_WORLDS, AgentMenu, Choice
from training.web.saver import read_game
from training.web.session import GameSession
from training.web.store import GameStore
from training.web.view import card_words

HUMAN = 0


def agents_for(preset: str, spec: str = "heuristic") -> list[str]:
    return [spec] * make_rules(preset).num_players


def choose(view: dict) -> str:
    """The scripted person: PASS when legal, else the first legal move (read from the view only)."""
    return "PASS" if "PASS" in view["legal"] else view["legal"][0]


def bid_high(view: dict) -> str:
    """A person who bids whenever they may: games end fast (contracts made or lost)."""
    bids = [a for a in view["legal"] if a != "PASS"]
    return bids[0] if bids else view["legal"][0]


WAITS, SLOW = threading.Event(), threading.Event()
"""When the test agents ``waits`` and ``slow`` may play (:class:`~web_helpers.Waiting`)."""
TEST_MENU = AgentMenu(choices=(*BUILTIN_CHOICES, Choice("waits", "waits for its test", lambda r, s: Waiting(r, s, WAITS)),
                               Choice("slow", "waits for its test", lambda r, s: Waiting(r, s, SLOW))))


def run_agents(session: GameSession) -> None:
    """Play the agents' moves in this thread until the person is to act or the game ends."""
    while (prepared := session.prepare_move()) is not None:
        revision, think = prepared
        assert session.finish_move(revision, think())


@pytest.fixture
def client():
    store = GameStore(None, pace=0.0, workers=2, seeds=random.Random(0), menu=TEST_MENU)
    with PersonClient(create_app(store)) as c:
        c.store = store
        yield c


def wait_turn(client: PersonClient, view: dict) -> dict:
    """Long-poll until the person may act or the game is finished."""
    while not view["legal"] and not (view["over"] or view["stopped"]):
        view = client.get(f"/api/games/{view['id']}", params={"after": view["revision"], "wait": 10}).json()
        assert view["error"] is None, view["error"]
    return view


def new_game(client: PersonClient, preset: str = "australian", **extra) -> dict:
    body = {"preset": preset, "agents": agents_for(preset), "seat": HUMAN, **extra}
    response = client.post("/api/games", json=body)
    assert response.status_code == 201, response.text
    return response.json()


# -- 1. a player is sent nothing they may not know ----------------------------------------------------------
class Scripted(Agent):
    """Plays its script's next action whenever that is legal, else the heuristic's choice."""

    def __init__(self, rules, seed, script=()):
        super().__init__(rules, seed)
        self.table, self.script = ActionTable(rules), list(script)
        self.fallback = HeuristicAgent(rules, seed=seed)

    def act(self, observation):
        if self.script:
            action = self.table.compact[parse_action(self.script[0], self.rules)]
            if observation["action_mask"][action]:
                self.script.pop(0)
                return action
        return self.fallback.act(observation)


def dealt(rules, seed):
    deal = Deal.new(rules, random.Random(seed), rules.num_players - 1)
    cards = deal_to_cards(rules, deal.hands, deal.kitty)
    return cards["hands"], cards["kitty"]


def swapped(hands, kitty, first: str, second: str):
    places = [list(h) for h in hands] + [list(kitty)]
    for group in places:
        for i, card in enumerate(group):
            group[i] = second if card == first else first if card == second else card
    return places[:-1], places[-1]


def scripted_specs(rules, scripts: dict[int, list[str]]) -> tuple[list[str | None], AgentMenu]:
    """The agent specs of every seat but the person's (``None``), scripted agents where ``scripts``
    says, and the menu that has them."""
    choices = tuple(Choice(f"scripted_{seat}", "a test's script", lambda r, s, script=script: Scripted(r, s, script))
                    for seat, script in scripts.items())
    specs = [None if s == HUMAN else f"scripted_{s}" if s in scripts else "heuristic" for s in range(rules.num_players)]
    return specs, AgentMenu(choices=(*BUILTIN_CHOICES, *choices))


def views_of(rules, hands, kitty, scripts=None) -> tuple[list, GameSession]:
    """Everything the person at seat 0 is sent in one deal (each view that differs from the one
    before), with a marker ``("obs", bytes)`` each time their own observation changes."""
    specs, menu = scripted_specs(rules, scripts or {})
    first = Deal.from_cards(rules, hands, kitty, rules.num_players - 1)
    session = GameSession("twin-" + "x" * 16, rules, agents=specs, length="deal", seed=3, first_deal=first, menu=menu)
    stream: list = []
    last, last_view = [b""], [""]

    def observe():
        digest = session.encoder.encode(session.game.deal, HUMAN, session.game.scores).tobytes()
        if digest != last[0]:
            stream.append(("obs", digest))
            last[0] = digest
        view = json.dumps(session.view(HUMAN), sort_keys=True)
        if view != last_view[0]:  # what a client sees: a hidden turn must change nothing, its revision included
            stream.append(view)
            last_view[0] = view

    observe()
    while not session.finished:
        if session.agent_to_move():
            revision, think = session.prepare_move()
            session.finish_move(revision, think())
        else:
            session.play(HUMAN, choose(session.view(HUMAN)))
        observe()
    return stream, session


def same_until_the_person_may_know_more(a: list, b: list) -> list:
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            assert isinstance(x, tuple) and isinstance(y, tuple), (
                f"the person was sent different views while knowing the same:\n{x}\n{y}")
            return a[:i]
    assert len(a) == len(b)
    return a


@pytest.mark.parametrize("preset", PRESET_NAMES)
@pytest.mark.parametrize("seed", range(2))
def test_moving_one_hidden_card_changes_no_view_the_person_is_sent(preset, seed):
    rules = make_rules(preset)
    hands, kitty = dealt(rules, seed)
    rng = random.Random(seed)
    dealt_out = {c for h in hands for c in h} | set(kitty)
    dead = [c for c in (card_to_str(i, rules.two_jokers) for i in mask_to_cards(rules.deck)) if c not in dealt_out]
    # With two players each action of the other is public at once: a card moved in or out of its
    # hand may change its first bid, and so the person's observation. There the card moves between
    # the kitty and the dead hand, which nobody ever sees (§10.8).
    others = [c for h in hands[1:] for c in h] if rules.num_players > 2 else []
    hidden = others + kitty + dead
    first = rng.choice(hidden)
    second = rng.choice([c for c in hidden if not any(first in g and c in g for g in [*hands, kitty])])
    a, _ = views_of(rules, hands, kitty)
    b, _ = views_of(rules, *swapped(hands, kitty, first, second))
    common = same_until_the_person_may_know_more(a, b)
    views = [json.loads(x) for x in common if isinstance(x, str)]
    assert any(line.startswith("player_1: ") for v in views for line in v["log"])  # the comparison saw others act
    for v in views:  # and no other hand is ever sent
        assert all(s["hand"] is None for s in v["seats"] if s["seat"] != HUMAN)


def test_the_kitty_discards_and_a_declined_nomination_stay_hidden():
    """§5, §7: another contractor's kitty and discards are never sent, and their NO_NOMINATION
    turn (which would show they hold the joker) changes no view, not even its revision."""
    rules = make_rules("australian")
    hands, kitty = dealt(rules, 2)
    if "JK" not in hands[1]:
        hands, kitty = swapped(hands, kitty, "JK", hands[1][0])
    scripts = {1: ["6NT", "NO_NOMINATION"], 2: ["PASS"], 3: ["PASS"]}
    a, session = views_of(rules, hands, kitty, scripts)
    assert parse_action("NO_NOMINATION", rules) in session.game.deals[0].history
    b, other = views_of(rules, *swapped(hands, kitty, "JK", hands[3][0]), scripts)
    assert parse_action("NO_NOMINATION", rules) not in other.game.deals[0].history
    common = [json.loads(x) for x in same_until_the_person_may_know_more(a, b) if isinstance(x, str)]
    assert any(v["contract"] and v["trick"] for v in common)  # both reached the play of 6NT by player_1
    assert all(not v["kitty"] and not v["discards"] for v in common)
    assert not any("nomination" in line for v in common for line in v["log"])


def five_handed_call(seed: int, holder: int, rules=None):
    """A five-handed deal where player_1 contracts 7NT and calls a card of ``holder``'s hand (the
    others pass): the deal, its scripts and the card called."""
    rules = rules or make_rules("five_handed")
    hands, kitty = dealt(rules, seed)
    called = next(c for c in hands[holder] if c != "JK")
    scripts = {1: ["7NT", called], 2: ["PASS"], 3: ["PASS"], 4: ["PASS"]}
    return rules, hands, kitty, scripts, called


@pytest.mark.parametrize("seed", range(2))
def test_a_called_partner_is_shown_to_nobody_before_the_called_card_is_played(seed):
    """§10.5, §10.8: the call is public, the partner (player_3 holds the card) is not: moving the
    card to player_2 changes no view of the person (a defender) until it is played, and then the
    partner shows."""
    rules, hands, kitty, scripts, called = five_handed_call(seed, holder=3)
    a, session = views_of(rules, hands, kitty, scripts)
    assert session.game.deals[0].called_card >= 0 and session.game.deals[0].partner == 3
    b, _ = views_of(rules, *swapped(hands, kitty, called, next(c for c in hands[2] if c != "JK")), scripts)
    common = [json.loads(x) for x in same_until_the_person_may_know_more(a, b) if isinstance(x, str)]
    calls = [v for v in common if v["contract"] and v["contract"]["called"]]
    assert calls and f"player_1: calls {card_words(parse_card(called), False)}" in calls[-1]["log"]
    assert all(v["contract"]["called"]["name"] == called for v in calls)
    assert all((v["contract"] or {}).get("partner") is None and not any(s["called_partner"] or s["partner"] for s in v["seats"])
               for v in common)
    shown = [json.loads(x) for x in a if isinstance(x, str)]
    revealed = [v for v in shown if v["contract"] and v["contract"]["partner"] == 3]
    assert revealed and revealed[0]["seats"][3]["called_partner"]  # once played, everyone knows
    assert any("played the called card" in line for line in revealed[-1]["log"])


def test_the_holder_of_the_called_card_knows_from_the_call_and_a_seat_call_tells_everyone():
    rules, hands, kitty, scripts, called = five_handed_call(0, holder=HUMAN)
    stream, _ = views_of(rules, hands, kitty, scripts)
    calls = [v for v in (json.loads(x) for x in stream if isinstance(x, str)) if v["contract"] and v["contract"]["called"]]
    assert calls[0]["contract"]["called"]["name"] == called
    assert calls[0]["contract"]["partner"] == HUMAN and calls[0]["seats"][1]["partner"]  # the contractor is the person's partner
    rules = make_rules("five_handed", partner_call="seat")
    hands, kitty = dealt(rules, 0)
    stream, _ = views_of(rules, hands, kitty, {1: ["7NT", "PARTNER_3"], 2: ["PASS"], 3: ["PASS"], 4: ["PASS"]})
    views = [json.loads(x) for x in stream if isinstance(x, str)]
    after = next(v for v in views if any(line == "player_1: calls player_3" for line in v["log"]))
    assert after["contract"]["partner"] == 3 and after["contract"]["called"] is None


def test_the_person_makes_the_call_from_the_legal_moves(client: PersonClient):
    """The contractor calls: the legal moves are the cards not in hand but the joker (§10.5)."""
    rules = make_rules("five_handed")
    view = new_game(client, "five_handed", length="deal")
    game_id = view["id"]
    while not (view["stopped"] or view["over"]) and view["phase"] != "call":
        view = wait_turn(client, view)
        if view["legal"]:
            view = client.post(f"/api/games/{game_id}/action", json={"action": bid_high(view)}).json()
    assert view["phase"] == "call" and view["seats"][HUMAN]["contractor"]
    hand = {c["name"] for c in view["seats"][HUMAN]["hand"]}
    assert set(view["legal"]) == {card_to_str(c) for c in mask_to_cards(rules.deck)} - hand - {"JK"}
    call = view["legal"][0]
    view = client.post(f"/api/games/{game_id}/action", json={"action": call}).json()
    assert view["contract"]["called"]["name"] == call and "player_0: calls " + card_words(parse_card(call), False) in view["log"]


def test_both_team_mates_sit_out_a_six_handed_misere():
    """§10.4: player_3's misère: its team-mates player_1 and player_5 sit out, shown to the person."""
    rules = make_rules("six_handed")
    hands, kitty = dealt(rules, 1)
    scripts = {1: ["7S", "PASS"], 2: ["PASS"], 3: ["MISERE"], 4: ["PASS"], 5: ["PASS"]}
    stream, session = views_of(rules, hands, kitty, scripts)
    assert session.game.deals[0].contract == parse_action("MISERE", rules)
    played = [v for v in (json.loads(x) for x in stream if isinstance(x, str)) if v["trick"]]
    assert played and all(v["contract"]["sitting_out"] == [1, 5] for v in played)
    assert all([s["seat"] for s in v["seats"] if s["sits_out"]] == [1, 5] for v in played)
    assert all(p["seat"] not in (1, 5) for v in played for p in v["trick"])


@pytest.mark.parametrize(("card", "rank", "suit"), [("Eh", "11", 3), ("Xd", "13", 2), ("Ws", "12", 0), ("2c", "2", 1),
                                                     ("Th", "10", 3), ("JK", "JK", None)])
def test_every_rank_is_drawn_as_printed(card, rank, suit):
    from five_hundred_env.cards import parse_card
    from training.web.view import card_json

    drawn = card_json(parse_card(card), 4, False)
    assert (drawn["name"], drawn["rank"], drawn["suit"]) == (card, rank, suit)


def test_a_spectator_sees_every_hand_and_a_player_only_their_own(client):
    watch = client.post("/api/games", json={"preset": "australian", "mode": "watch", "agents": agents_for("australian")}).json()
    assert watch["seat"] is None and all(len(s["hand"]) == 10 for s in watch["seats"])
    assert len(watch["kitty"]) == 3
    play = new_game(client)
    assert len(play["seats"][HUMAN]["hand"]) == 10
    assert all(s["hand"] is None for s in play["seats"][1:]) and play["kitty"] == []


# -- 2. every endpoint -----------------------------------------------------------------------------------
def test_info_lists_the_presets_and_agents(client):
    info = client.get("/api/info").json()
    assert set(PRESET_NAMES) <= set(info["presets"])
    for name, preset in info["presets"].items():
        rules = make_rules(name)
        assert preset["players"] == rules.num_players and len(preset["side_of"]) == rules.num_players
    agents = {agent["name"]: agent for agent in info["agents"]}
    assert {"heuristic", "pretrained", "scratch", "pimc", "random"} <= set(agents)
    assert set(agents["pretrained"]["presets"]) == set(available_presets())  # offered only where a network ships
    assert set(agents["scratch"]["presets"]) == set(scratch_presets())
    worlds = next(o for o in agents["pimc"]["options"] if o["name"] == "worlds")
    assert (worlds["min"], worlds["max"]) == (1, MAX_WORLDS)


def test_the_scratch_network_plays_every_decision_at_a_table(client):
    """The network learned from a random start (issue 34) sits at the table like the others: a deal
    with two scratch seats is played to its end, their bids, discards and cards their own."""
    view = new_game(client, length="deal", agents=[None, "scratch", "heuristic", "scratch"])
    assert view["seats"][1]["agent"] == "scratch"
    while not (view["stopped"] or view["over"]):
        view = wait_turn(client, view)
        if view["legal"]:
            view = client.post(f"/api/games/{view['id']}/action", json={"action": choose(view)}).json()
    record = client.get(f"/api/games/{view['id']}/record").json()
    assert record["kind"] == "deal" and replay(record).is_over


def test_the_page_and_its_files_are_served(client):
    page = client.get("/")
    assert page.status_code == 200 and "table.js" in page.text
    for name in ("table.js", "table.css"):
        assert client.get(f"/static/{name}").status_code == 200
    assert "http" not in re.sub(r"https?://(127\.0\.0\.1|localhost)", "", client.get("/static/table.js").text.split("\n", 3)[3])


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_a_whole_game_through_the_api_then_its_record_replays(client, preset):
    view = new_game(client, preset, seat=1)
    assert view["seat"] == 1
    while not (view["over"] or view["stopped"]):
        view = wait_turn(client, view)
        if view["legal"]:
            response = client.post(f"/api/games/{view['id']}/action", json={"action": bid_high(view)})
            assert response.status_code == 200, response.text
            view = response.json()
    assert view["over"] and view["phase"] == "game_over" and view["winners"]
    response = client.get(f"/api/games/{view['id']}/record")
    assert response.status_code == 200 and "attachment" in response.headers["content-disposition"]
    game = replay(response.json())
    assert game.is_over and game.scores == view["scores"]


def test_one_deal_gives_a_deal_record(client):
    view = new_game(client, length="deal")
    while not (view["stopped"] or view["over"]):
        view = wait_turn(client, view)
        if view["legal"]:
            view = client.post(f"/api/games/{view['id']}/action", json={"action": choose(view)}).json()
    record = client.get(f"/api/games/{view['id']}/record").json()
    assert record["kind"] == "deal" and replay(record).is_over


def test_a_view_request_waits_for_a_change_or_its_time(client):
    view = wait_turn(client, new_game(client))  # the person is to act: nothing changes until they do
    view.pop("seat_links", None)  # the creator's links come with the answer that creates the table alone
    again = client.get(f"/api/games/{view['id']}", params={"after": view["revision"], "wait": 0.2}).json()
    assert again == view
    other = client.get(f"/api/games/{view['id']}", params={"after": view["revision"] + 1, "wait": 20}).json()
    assert other == view  # a revision other than the view's: answered at once


def test_a_hint_is_a_legal_move_of_the_chosen_agent(client):
    view = wait_turn(client, new_game(client))
    for agent in ("heuristic", "random", "heuristic@play"):
        response = client.post(f"/api/games/{view['id']}/hint", json={"agent": agent})
        assert response.status_code == 200, response.text
        assert response.json()["action"] in view["legal"] and response.json()["agent"] == agent


def test_watch_mode_plays_pauses_and_steps(client):
    view = client.post("/api/games", json={"preset": "italian_3p", "mode": "watch", "length": "game",
                                           "agents": agents_for("italian_3p")}).json()
    game_id = view["id"]
    assert view["paused"]  # a watched game starts paused
    session = client.store.games[game_id]
    time.sleep(0.05)
    assert session.actions == []  # paused: nothing moves
    # Stepped while it surely runs (at pace 0 the agents may finish a game between two requests).
    client.post(f"/api/games/{game_id}/control", json={"command": "step"})
    deadline = time.monotonic() + 10
    while (session.pending or not session.actions) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(session.actions) == 1 and client.get(f"/api/games/{game_id}").json()["paused"]
    client.post(f"/api/games/{game_id}/control", json={"command": "play"})
    paused = client.post(f"/api/games/{game_id}/control", json={"command": "pause"}).json()
    assert paused["paused"]
    while session.pending:  # a move scheduled before the pause may still land
        time.sleep(0.01)
    before = len(session.actions)
    time.sleep(0.05)
    assert len(session.actions) == before  # paused: nothing moves
    view = paused
    client.post(f"/api/games/{game_id}/control", json={"command": "play"})
    while not (view["stopped"] or view["over"]):
        view = client.get(f"/api/games/{game_id}", params={"after": view["revision"], "wait": 10}).json()
    assert replay(client.get(f"/api/games/{game_id}/record").json()).is_over


def test_a_record_replays_in_the_page_step_by_step(client):
    rules = make_rules("french_46")
    from agents.play import play_game
    from five_hundred_env.env import raw_env

    env = raw_env(rules=rules, episode="game", max_deals=2)
    game = play_game(env, [HeuristicAgent(rules, seed=s) for s in range(4)], seed=5)
    record = record_of(game)
    view = client.post("/api/replays", json={"record": record}).json()
    assert view["mode"] == "replay" and view["paused"] and view["script"] == sum(len(d.history) for d in game.deals)
    assert all(len(s["hand"]) == rules.hand_size for s in view["seats"])
    stepped = client.post(f"/api/games/{view['id']}/control", json={"command": "step"}).json()
    while stepped["replayed"] == 0:  # the step lands just before the answer, or just after it
        stepped = client.get(f"/api/games/{view['id']}", params={"after": stepped["revision"], "wait": 10}).json()
    seat, bid = game.deals[0].bids[0]
    assert stepped["replayed"] == 1 and stepped["auction"] == [{"seat": seat, "bid": action_to_str(bid, rules)}]
    client.post(f"/api/games/{view['id']}/control", json={"command": "play"})
    while stepped["replayed"] < stepped["script"]:
        stepped = client.get(f"/api/games/{view['id']}", params={"after": stepped["revision"], "wait": 10}).json()
    assert stepped["scores"] == game.scores
    assert client.get(f"/api/games/{view['id']}/record").json()["deals"] == record["deals"]


def test_a_game_can_be_ended(client):
    view = new_game(client)
    assert client.delete(f"/api/games/{view['id']}").status_code == 204
    assert client.get(f"/api/games/{view['id']}").status_code == 404


# -- 3. every bad input: a 4xx naming the problem, and the game unchanged ------------------------------------------
def refused(response, status: int, words: str) -> None:
    assert response.status_code == status, response.text
    message = response.json()["error"]
    assert words.lower() in message.lower() and "\n" not in message, message


@pytest.mark.parametrize(("body", "status", "words"), [
    ({"preset": "bridge"}, 400, "unknown preset"),
    ({"seat": 4}, 400, "seat must be one of the seats 0..3"),
    ({"agents": ["heuristic"] * 3}, 400, "each of the 4 seats"),
    ({"agents": ["heuristic", "nobody", "heuristic", "heuristic"]}, 400, "unknown agent 'nobody'"),
    ({"agents": ["heuristic", "/etc/hostname", "heuristic", "heuristic"]}, 400, "unknown agent"),
    ({"agents": ["heuristic", "pimc:nonsense", "heuristic", "heuristic"]}, 400, "has no option 'nonsense'"),
    ({"agents": ["heuristic", "pimc:worlds=2,rollout=/etc/hostname", "heuristic", "heuristic"]}, 400, "no option 'rollout'"),
    ({"agents": ["heuristic", "pimc:rollout=pyproject.toml", "heuristic", "heuristic"]}, 400, "no option 'rollout'"),
    ({"seats": ["human", "heuristic", "human"], "agents": []}, 400, "each of the 4 seats"),
    ({"seats": ["heuristic"] * 4, "agents": []}, 400, "needs a person"),
    ({"seats": ["human", "human", "heuristic", "heuristic"], "agents": [], "seat": 2}, 400, "creator's seat"),
    ({"seats": ["human"] * 4, "agents": ["heuristic"] * 4}, 422, "not both"),
    ({"mode": "spy"}, 400, "mode must be one of"),
    ({"length": "forever"}, 400, "length must be"),
    ({"pace": 99}, 422, "pace"),
    ({"seat": "north"}, 422, "seat"),
    ({"colour": "red"}, 422, "colour"),
])
def test_a_bad_new_game_is_refused(client, body, status, words):
    full = {"preset": "australian", "agents": agents_for("australian"), "seat": 0, **body}
    refused(client.post("/api/games", json=full), status, words)
    assert client.store.games == {}


def test_malformed_and_oversized_requests_are_refused(client):
    refused(client.post("/api/games", content=b"{not json", headers={"Content-Type": "application/json"}), 422, "malformed")
    refused(client.post("/api/games", content=b"[1, 2]", headers={"Content-Type": "application/json"}), 422, "malformed")
    big = json.dumps({"record": {"pad": "x" * (MAX_BODY + 1)}}).encode()
    refused(client.post("/api/replays", content=big, headers={"Content-Type": "application/json"}), 413, "over")
    refused(client.post("/api/replays", json={"record": {"format": "nonsense"}}), 400, "not a five hundred record")
    assert client.store.games == {}


def test_bad_moves_are_refused_and_change_nothing(client):
    view = wait_turn(client, new_game(client))
    game_id = view["id"]
    session = client.store.games[game_id]
    before = (view["revision"], list(session.actions))
    own = view["seats"][HUMAN]["hand"][0]["name"]
    refused(client.post(f"/api/games/{game_id}/action", json={"action": "14H"}), 400, "unknown action")
    refused(client.post(f"/api/games/{game_id}/action", json={"action": "11H"}), 400, "Eh is not in the australian deck")
    refused(client.post(f"/api/games/{game_id}/action", json={"action": own}), 400, "is not legal now: it is the auction")
    refused(client.post(f"/api/games/{game_id}/action", json={"action": 7}), 422, "action")
    refused(client.post(f"/api/games/{game_id}/action", json={}), 422, "action")
    refused(client.post(f"/api/games/{game_id}/action", json={"action": "PASS", "also": 1}), 422, "also")
    refused(client.post(f"/api/games/{game_id}/action", content=b"{not json", headers={"Content-Type": "application/json"}),
            422, "malformed request: Invalid JSON")
    big = json.dumps({"action": "x" * (MAX_BODY + 1)}).encode()
    refused(client.post(f"/api/games/{game_id}/action", content=big, headers={"Content-Type": "application/json"}), 413, "over")
    refused(client.get(f"/api/games/{game_id}", params={"after": "soon"}), 422, "after: 'soon' is not an integer")
    refused(client.get(f"/api/games/{game_id}", params={"wait": "long"}), 422, "wait: 'long' is not a number")
    refused(client.post(f"/api/games/{game_id}/control", json={"command": "play"}), 409, "this table has players")
    refused(client.post(f"/api/games/{game_id}/hint", json={"agent": "nobody"}), 400, "unknown agent")
    assert (client.get(f"/api/games/{game_id}").json()["revision"], session.actions) == before


def test_moves_out_of_turn_and_after_the_end_are_refused(client):
    WAITS.clear()
    try:
        view = client.post("/api/games", json={"preset": "australian", "seat": 0, "length": "deal",
                                               "agents": ["heuristic", "waits", "heuristic", "heuristic"]}).json()
        game_id = view["id"]
        session = client.store.games[game_id]
        while not (view["to_act"] == 1 and session.pending):  # until player_1's agent thinks
            if view["legal"]:
                client.post(f"/api/games/{game_id}/action", json={"action": "PASS"})
            time.sleep(0.01)
            view = client.get(f"/api/games/{game_id}").json()
        refused(client.post(f"/api/games/{game_id}/action", json={"action": "PASS"}), 409, "not your turn: player_1")
        refused(client.post(f"/api/games/{game_id}/hint", json={"agent": "heuristic"}), 409, "not your turn")
    finally:
        WAITS.set()
    view = wait_turn(client, view)
    while not (view["stopped"] or view["over"]):
        view = wait_turn(client, client.post(f"/api/games/{game_id}/action", json={"action": choose(view)}).json())
    refused(client.post(f"/api/games/{game_id}/action", json={"action": "PASS"}), 409, "the game")


@pytest.mark.parametrize("path", ["/api/games/{id}", "/api/games/{id}/record"])
@pytest.mark.parametrize("game_id", ["A" * 24, "../../etc", "x"])
def test_an_unknown_game_is_a_404(client, path, game_id):
    words = "no such game" if "/" not in game_id else "no such page"
    refused(client.get(path.format(id=game_id)), 404, words)
    refused(client.post(f"/api/games/{game_id}/action", json={"action": "PASS"}), 404, words)


def test_a_players_record_waits_for_the_end(client):
    view = new_game(client)
    refused(client.get(f"/api/games/{view['id']}/record"), 409, "once the game is finished")


# -- 4. agents off the request path; bounds; expiry; restart -----------------------------------------------------
def test_a_slow_agent_holds_up_only_its_own_game(client):
    SLOW.clear()
    try:
        slow = client.post("/api/games", json={"preset": "italian_3p", "mode": "watch", "agents": ["slow"] * 3}).json()
        slow = client.post(f"/api/games/{slow['id']}/control", json={"command": "play"}).json()
        while not client.store.games[slow["id"]].pending:  # its agent is thinking
            time.sleep(0.01)
        fast = new_game(client, length="deal")
        while not (fast["stopped"] or fast["over"]):  # a whole deal while the slow game's agent is still thinking
            fast = wait_turn(client, fast)
            if fast["legal"]:
                fast = client.post(f"/api/games/{fast['id']}/action", json={"action": choose(fast)}).json()
            assert client.get(f"/api/games/{slow['id']}").json()["revision"] == slow["revision"]
        assert client.store.games[slow["id"]].actions == []
    finally:
        SLOW.set()


def test_a_checkpoint_given_to_the_server_is_an_agent_and_no_other_file_is():
    from agents.pretrained import pretrained_path

    path = str(pretrained_path("australian"))
    store = GameStore(None, pace=0.0, menu=AgentMenu.with_files([path]), seeds=random.Random(0))
    with PersonClient(create_app(store)) as client:
        assert path in [agent["name"] for agent in client.get("/api/info").json()["agents"]]
        view = wait_turn(client, new_game(client, agents=[None, path, "heuristic", path]))
        assert view["seats"][1]["agent"] == path
        other = str(pretrained_path("french_46"))
        refused(client.post("/api/games", json={"preset": "australian", "agents": [None, other, "heuristic", "heuristic"]}),
                400, "unknown agent")


def test_a_request_cannot_seat_a_bot_that_runs_a_command(client, tmp_path):
    """cmd: specs run a program on the server: the page may not name one, alone, split or inside
    another agent's options, for a seat or a hint; nothing is started."""
    marker = tmp_path / "ran"
    bot = f"cmd:touch {marker}"
    for spec in (bot, f"CMD[timeout=1]:touch {marker}", f"{bot}@play", f"pimc:worlds=2,base={bot}", "pimc:rollout=cmd:ls"):
        refused(client.post("/api/games", json={"preset": "australian", "agents": [None, spec, "heuristic", "heuristic"]}),
                400, f"agent {spec!r}")
    game_id = new_game(client)["id"]
    refused(client.post(f"/api/games/{game_id}/hint", json={"agent": bot}), 400, f"agent {bot!r}")
    assert not marker.exists()
    assert list(client.store.games) == [game_id]


def test_the_number_of_games_is_bounded():
    store = GameStore(None, max_games=2, pace=0.0, seeds=random.Random(0))
    with PersonClient(create_app(store)) as client:
        first = new_game(client)
        new_game(client)
        refused(client.post("/api/games", json={"preset": "australian", "agents": agents_for("australian")}), 429, "2 games")
        client.delete(f"/api/games/{first['id']}")
        new_game(client)


def test_a_seeded_store_deals_the_same_games_and_the_default_store_does_not():
    def first_hands(seeds: random.Random | None) -> list[list[dict]]:
        store = GameStore(None, pace=0.0, seeds=seeds)
        with PersonClient(create_app(store)) as client:
            return [new_game(client)["seats"][HUMAN]["hand"] for _ in range(3)]

    assert first_hands(random.Random(7)) == first_hands(random.Random(7))
    assert first_hands(None) != first_hands(None)  # the system's randomness: 3 deals alike by chance ~never


def test_idle_games_expire(tmp_path):
    store = GameStore(tmp_path, idle_seconds=60, pace=0.0, seeds=random.Random(0))
    with PersonClient(create_app(store)) as client:
        old, fresh = new_game(client), new_game(client)
        store.games[old["id"]].last_active -= 61
        store.flush()
        assert store.sweep() == [old["id"]]
        refused(client.get(f"/api/games/{old['id']}"), 404, "no such game")
        assert client.get(f"/api/games/{fresh['id']}").status_code == 200
        assert sorted(p.stem for p in tmp_path.glob("*.json")) == [fresh["id"]]


def test_a_restart_resumes_every_game_where_it_was(tmp_path):
    store = GameStore(tmp_path, pace=0.0, seeds=random.Random(0))
    with PersonClient(create_app(store)) as client:
        play = wait_turn(client, new_game(client, "french_46"))
        for _ in range(6):
            play = wait_turn(client, client.post(f"/api/games/{play['id']}/action", json={"action": choose(play)}).json())
        watch = client.post("/api/games", json={"preset": "australian", "mode": "watch",
                                                "agents": agents_for("australian")}).json()
        client.post(f"/api/games/{watch['id']}/control", json={"command": "play"})
        client.post(f"/api/games/{watch['id']}/control", json={"command": "pause"})
        while store.games[watch["id"]].pending:
            time.sleep(0.01)
        watched = client.get(f"/api/games/{watch['id']}").json()
        actions = list(store.games[play["id"]].actions)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([f"{play['id']}.json", f"{watch['id']}.json"])
    tokens = client.tokens
    store = GameStore(tmp_path, pace=0.0, seeds=random.Random(1))  # the server again, from the same folder
    with PersonClient(create_app(store)) as client:
        client.tokens = tokens
        assert client.get(f"/api/games/{play['id']}").json() == play
        assert client.get(f"/api/games/{watch['id']}").json() == watched
        assert store.games[play["id"]].actions == actions
        view = play
        while not view["over"]:
            view = wait_turn(client, view)
            if view["legal"]:
                view = client.post(f"/api/games/{view['id']}/action", json={"action": bid_high(view)}).json()
        assert replay(client.get(f"/api/games/{view['id']}/record").json()).is_over


def test_a_game_file_is_a_journal_and_a_line_cut_short_is_ignored(tmp_path):
    store = GameStore(tmp_path, pace=0.0, seeds=random.Random(0))
    with PersonClient(create_app(store)) as client:
        view = wait_turn(client, new_game(client))
        for _ in range(4):  # a deal can end the game (an open misère made scores 500): stop there
            view = wait_turn(client, client.post(f"/api/games/{view['id']}/action", json={"action": choose(view)}).json())
            if view["over"]:
                break
        store.flush()
        session = store.games[view["id"]]
        path = tmp_path / f"{view['id']}.json"
        lines = path.read_bytes().splitlines()
        assert len(lines) > 1 and json.loads(lines[0])["actions"] != session.actions  # the game, then its changes
        assert read_game(path.read_bytes())["actions"] == session.actions
        with path.open("ab") as f:  # a crash in the middle of a write
            f.write(b'{"actions": [3, 4')
        assert read_game(path.read_bytes())["actions"] == session.actions


def test_a_damaged_game_file_is_skipped(tmp_path):
    (tmp_path / ("B" * 24 + ".json")).write_text("{not json")
    (tmp_path / ("C" * 24 + ".json")).write_text(json.dumps({"format": "five-hundred-web-game/2", "id": "C" * 24}))
    saved = GameSession("D" * 24, make_rules("australian"), agents=[None, *agents_for("australian")[1:]], seed=1).to_json()
    saved["actions"] = [parse_action("NO_NOMINATION", make_rules("australian"))]  # not legal in the auction
    (tmp_path / ("D" * 24 + ".json")).write_text(json.dumps(saved))
    assert GameSession.from_json({**saved, "actions": []}).id == "D" * 24  # the same file without the bad move loads
    store = GameStore(tmp_path, pace=0.0, seeds=random.Random(0))
    assert store.games == {}
    store.close()


def test_the_pace_waits_longer_after_a_trick_and_not_after_a_hidden_turn():
    rules = make_rules("australian")
    hands, kitty = dealt(rules, 2)
    if "JK" not in hands[1]:
        hands, kitty = swapped(hands, kitty, "JK", hands[1][0])
    specs, menu = scripted_specs(rules, {1: ["6NT", "NO_NOMINATION"], 2: ["PASS"], 3: ["PASS"]})
    session = GameSession("pace-" + "y" * 16, rules, agents=specs, menu=menu,
                          length="deal", seed=1, pace=1.0, first_deal=Deal.from_cards(rules, hands, kitty, 3))
    delays = {}
    while not session.finished:
        if session.agent_to_move():
            revision, think = session.prepare_move()
            session.finish_move(revision, think())
        else:
            session.play(HUMAN, choose(session.view(HUMAN)))
        last = [e for e in session.events if e["kind"] == "action"][-1]["text"]
        ended = session.events[-1].get("ends")
        delays.setdefault(ended or last, session.delay())
    assert delays["no nomination"] == 0.0 and delays["trick"] == 2.0 and delays["pass"] == 1.0


@pytest.mark.parametrize(("pace", "mode", "passing"), [(0.0, "play", True), (0.8, "play", False), (0.0, "watch", False)])
def test_a_view_is_passing_while_an_agent_move_is_due_at_once_in_play(pace, mode, passing):
    """A long poll does not answer with a view the agents' next move, due at once, replaces (pace
    0 in play: the moves that come together are sent together); with a pace, or when watching,
    every move is its own view."""
    rules = make_rules("australian")
    seat = 0 if mode == "play" else None
    agents = [None if s == seat else "heuristic" for s in range(4)]
    session = GameSession("passing-" + "z" * 16, rules, mode=mode, agents=agents, seed=2, pace=pace)
    session.paused = False  # a watched game playing on
    while not session.agent_to_move():  # the person's moves, to an agent's turn
        session.play(seat, choose(session.view(seat)))
    assert session.moving_on() is passing
    if mode == "play":
        run_agents(session)  # to the person's turn: no agent's move is due
        assert not session.moving_on()


# -- 5. the command ---------------------------------------------------------------------------------------
def serve(tmp_path, port: int) -> subprocess.Popen:
    """``five-hundred serve`` in a process of its own, its games in ``tmp_path``; returns once it answers."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    process = subprocess.Popen([sys.executable, "-m", "training.cli", "serve", "--port", str(port), "--games-dir",
                                str(tmp_path), "--pace", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                               start_new_session=True)  # a process group of its own, as in a terminal
    assert f"http://127.0.0.1:{port}/" in process.stdout.readline()
    for _ in range(600):
        try:
            httpx.get(f"http://127.0.0.1:{port}/api/info", timeout=5)
            return process
        except httpx.TransportError:
            time.sleep(0.05)
    raise AssertionError("the server does not answer")


def test_serve_prints_its_address_and_a_restart_after_ctrl_c_resumes_the_games(tmp_path):
    from web_helpers import free_port

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    process = serve(tmp_path, port)
    try:
        assert "australian" in httpx.get(f"{base}/api/info").json()["presets"]
        view = httpx.post(f"{base}/api/games", json={"preset": "french_46", "agents": agents_for("french_46")}).json()
        token = creator_token(view)
        while not view["legal"]:
            view = httpx.get(f"{base}/api/games/{view['id']}", params={"after": view["revision"], "wait": 10, "token": token},
                             timeout=30).json()
        view = httpx.post(f"{base}/api/games/{view['id']}/action", params={"token": token}, json={"action": choose(view)}).json()
        while not view["legal"]:  # the agents' moves after it, to the person's next turn
            view = httpx.get(f"{base}/api/games/{view['id']}", params={"after": view["revision"], "wait": 10, "token": token},
                             timeout=30).json()
        waiting: list[httpx.Response] = []  # a page open: its poll waits for a change, which will not come
        poll = threading.Thread(target=lambda: waiting.append(httpx.get(
            f"{base}/api/games/{view['id']}", params={"after": view["revision"], "wait": 20, "token": token}, timeout=60)))
        poll.start()
        time.sleep(1)
    finally:
        os.killpg(process.pid, signal.SIGINT)  # Ctrl-C in a terminal: the server and its agent process
        assert process.wait(timeout=30) == 0
    poll.join(timeout=30)
    assert waiting and waiting[0].status_code == 200 and waiting[0].json() == view  # answered at once, as it stood
    stderr = process.stderr.read()
    assert "Traceback" not in stderr and "Cancel" not in stderr, stderr
    process = serve(tmp_path, port)
    try:
        assert httpx.get(f"{base}/api/games/{view['id']}", params={"token": token}).json() == view
    finally:
        os.killpg(process.pid, signal.SIGINT)
        process.wait(timeout=30)


def test_the_served_answers_are_whole_each_in_one_write():
    """``serve``'s protocol joins each answer's head (uvicorn's first write) to its body: the bytes
    and their order are uvicorn's; what is held goes out at the answer's end or before a close."""
    from training.web.http_protocol import JoinedWrites

    class Recorder:
        def __init__(self):
            self.writes, self.closed = [], False

        def write(self, data):
            self.writes.append(bytes(data))

        def close(self):
            self.closed = True

        def get_extra_info(self, name):
            return name

    sent = Recorder()
    transport = JoinedWrites(sent)
    transport.write(b"HTTP/1.1 200 OK\r\n\r\n")
    assert sent.writes == []
    transport.write(b"{}")
    transport.answer_done()
    assert sent.writes == [b"HTTP/1.1 200 OK\r\n\r\n{}"]
    transport.write(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n")  # the next answer, in pieces
    transport.write(b"1\r\na\r\n")
    transport.write(b"0\r\n\r\n")
    transport.answer_done()
    assert sent.writes[1:] == [b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n1\r\na\r\n", b"0\r\n\r\n"]
    transport.write(b"HTTP/1.1 204 No Content\r\n\r\n")  # an answer with no body write
    transport.answer_done()
    transport.write(b"HTTP/1.1 400 Bad Request\r\n\r\n")
    transport.close()
    assert sent.writes[3:] == [b"HTTP/1.1 204 No Content\r\n\r\n", b"HTTP/1.1 400 Bad Request\r\n\r\n"]
    assert sent.closed and transport.get_extra_info("peername") == "peername"


@pytest.mark.parametrize(("words", "message"), [
    (["--port", "70000"], "--port must be 1 to 65535"),
    (["--pace", "9"], "the pace must be 0 to 5"),
    (["--max-games", "0"], "at least 1"),
    (["--agent-file", "/nonexistent.pt"], "no such file"),
    (["--agent-nice", "20"], "niceness must be 0 to 19, got 20"),
    (["--agent-nice", "-1"], "niceness must be 0 to 19, got -1"),
])
def test_serve_refuses_bad_options(tmp_path, capsys, words, message):
    from training.cli import main

    assert main(["serve", "--games-dir", str(tmp_path), *words]) == 2
    assert message in capsys.readouterr().err
