"""Helpers shared by the environment tests (``tests/test_env*.py``): explicit deals by card name,
actions by name, snapshots of the whole environment, and random play through the AEC loop.

Everything goes through the public API of :mod:`five_hundred_env` (``raw_env``, ``reset`` options,
``str_to_action``, ``observe``, ``state``), the way a user of the environment would.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Iterable
from typing import Any

import numpy as np

import five_hundred_env
from five_hundred_env.cards import card_to_str, mask_to_cards, parse_card
from five_hundred_env.engine import Phase
from five_hundred_env.rules import Rules, make_rules

PRESET_NAMES = ("australian", "italian_3p", "french_46", "two_handed", "five_handed", "six_handed")
EPISODES = ("deal", "game")

# The ten highest trumps with hearts trumps (docs/rules.md §6): whoever holds them wins every trick.
TOP_HEARTS = {
    "australian": "JK Jh Jd Ah Kh Qh Th 9h 8h 7h",
    "italian_3p": "JK Jh Jd Ah Kh Qh Th 9h 8h 7h",
    "french_46": "JK1 JK2 Jh Jd Ah Kh Qh Th 9h 8h",
    "two_handed": "JK Jh Jd Ah Kh Qh Th 9h 8h 7h",
    "five_handed": "JK Jh Jd Ah Kh Qh Th 9h 8h 7h",
    "six_handed": "JK Jh Jd Ah Kh Qh Xh Wh Eh Th",
}


def split(text: str | Iterable[str]) -> list[str]:
    """``"Ah Kh JK"`` → ``["Ah", "Kh", "JK"]``; a list is passed through."""
    return text.split() if isinstance(text, str) else list(text)


def deck_names(rules: Rules | str) -> list[str]:
    """Every card of the preset's deck by name, in card-id order."""
    rules = make_rules(rules) if isinstance(rules, str) else rules
    return [card_to_str(c, rules.two_jokers) for c in mask_to_cards(rules.deck)]


def fill_deal(rules: Rules | str, given: dict[int, str], kitty: str | None = None) -> tuple[list[list[str]], list[str]]:
    """Hands (one list of names per seat) and a kitty: the seats in ``given`` get those cards, the
    other seats, then the kitty (unless given), the remaining cards in card-id order (the cards
    left are the two-handed dead hand)."""
    rules = make_rules(rules) if isinstance(rules, str) else rules
    hands: list[list[str] | None] = [split(given[s]) if s in given else None for s in range(rules.num_players)]
    kit = None if kitty is None else split(kitty)
    used = {parse_card(c, rules.two_jokers) for h in [*hands, kit] if h for c in h}
    rest = [c for c in deck_names(rules) if parse_card(c, rules.two_jokers) not in used]
    for s in range(rules.num_players):
        if hands[s] is None:
            hands[s], rest = rest[: rules.hand_size], rest[rules.hand_size:]
    if kit is None:
        kit, rest = rest[: rules.kitty_size], rest[rules.kitty_size:]
    assert len(rest) == rules.dead_hand_size, rest
    return [list(h) for h in hands if h is not None], kit


def deal_of(env: Any) -> tuple[list[list[str]], list[str], int]:
    """The current deal's hands as dealt, kitty and dealer, by card name (to rebuild it via reset)."""
    deal = env.unwrapped.deal
    two = deal.rules.two_jokers
    hands = [[card_to_str(c, two) for c in mask_to_cards(h)] for h in deal.dealt]
    kitty = [card_to_str(c, two) for c in mask_to_cards(deal.kitty)]
    return hands, kitty, deal.dealer


def names(env: Any, mask: int) -> set[str]:
    two = env.unwrapped.rules.two_jokers
    return {card_to_str(c, two) for c in mask_to_cards(mask)}


def legal_names(env: Any) -> set[str]:
    """The legal actions of the agent to act, spelled as in docs/rules.md §1."""
    u = env.unwrapped
    return {u.action_to_str(a) for a in np.flatnonzero(u.observe(u.agent_selection)["action_mask"])}


def act(env: Any, actions: str | Iterable[str]) -> None:
    """Step actions written in the notation of docs/rules.md §1, in order."""
    for text in split(actions):
        env.step(env.unwrapped.str_to_action(text))


def discard_kitty(env: Any) -> None:
    """In the kitty phase: the contractor discards exactly the kitty, keeping the hand dealt."""
    deal = env.unwrapped.deal
    act(env, sorted(names(env, deal.kitty)))


def snapshot(env: Any) -> dict[str, Any]:
    """Everything observable about the environment, to check that a call changed nothing."""
    u = env.unwrapped
    return {
        "observations": {a: {k: v.copy() for k, v in u.observe(a).items()} for a in u.possible_agents},
        "state": u.state().copy(),
        "agents": list(u.agents),
        "agent_selection": u.agent_selection,
        "rewards": dict(u.rewards),
        "cumulative": dict(u._cumulative_rewards),
        "terminations": dict(u.terminations),
        "truncations": dict(u.truncations),
        "infos": copy.deepcopy(u.infos),
        "history": [list(d.history) for d in u.game.deals],
        "scores": dict(u.scores),
        "winners": list(u.winners),
    }


def assert_same_snapshot(a: dict[str, Any], b: dict[str, Any]) -> None:
    assert a.keys() == b.keys()
    for key in a:
        if key == "observations":
            assert a[key].keys() == b[key].keys()
            for agent in a[key]:
                for part in ("observation", "action_mask"):
                    np.testing.assert_array_equal(a[key][agent][part], b[key][agent][part], err_msg=f"{agent} {part}")
        elif key == "state":
            np.testing.assert_array_equal(a[key], b[key])
        else:
            assert a[key] == b[key], key


def random_action(obs: dict[str, np.ndarray], rng: random.Random) -> int:
    legal = np.flatnonzero(obs["action_mask"])
    return int(legal[rng.randrange(len(legal))])


def modest_action(obs: dict[str, np.ndarray], rng: random.Random) -> int:
    """A random player that mostly passes and otherwise bids the lowest bid it may, so that games
    last many deals (uniformly random bids climb so high that a game ends after one deal)."""
    legal = np.flatnonzero(obs["action_mask"]).tolist()
    if legal[0] == 0 and len(legal) > 1 and legal[1] <= 27:  # the auction: PASS is id 0, bids 1-27
        return 0 if rng.random() < 0.7 else legal[1]
    return legal[rng.randrange(len(legal))]


def seat_of(agent: str) -> int:
    return int(agent.rsplit("_", 1)[1])


def decode(env: Any, agent: str) -> dict[str, np.ndarray]:
    """``agent``'s observation split into its named slices."""
    u = env.unwrapped
    return u.encoder.decode(u.observe(agent)["observation"])


def card_mask_of(vector: np.ndarray) -> int:
    """A 46-wide 0/1 card slice back to a card mask."""
    return sum(1 << int(i) for i in np.flatnonzero(vector))


def make_env(preset: str = "australian", **kwargs: Any) -> Any:
    return five_hundred_env.env(rules=preset, **kwargs)


def forced_hands(preset: str, holder: int, dealer: int) -> dict[str, Any]:
    """Reset options for a deal where ``holder`` has the ten top hearts (see :data:`TOP_HEARTS`)."""
    hands, kitty = fill_deal(preset, {holder: TOP_HEARTS[preset]})
    return {"dealer": dealer, "hands": hands, "kitty": kitty}


def bid_and_pass(env: Any, bid: str, bidder: int) -> None:
    """From the start of the auction: ``bidder`` bids ``bid`` at its first turn and everyone else
    passes whenever it is their turn, until the auction is over."""
    u = env.unwrapped
    deal = u.deal
    has_bid = False
    while u.deal is deal and deal.phase == Phase.BIDDING:
        if seat_of(u.agent_selection) == bidder and not has_bid:
            act(env, bid)
            has_bid = True
        else:
            act(env, "PASS")
