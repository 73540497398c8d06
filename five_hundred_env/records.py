"""Records: a deal or a whole game as a small JSON document, and its exact replay.

A record holds the rules (every option), each deal's dealer, hands and kitty by card name,
and the actions in the notation of docs/rules.md §1::

    {"format": "five-hundred-record/1", "kind": "deal" | "game",
     "rules": {...}, "starting_scores": [...],          # per side; "game" records only
     "deals": [{"dealer": 0, "hands": [["Ah", ...], ...], "kitty": [...], "actions": ["PASS", "7H", ...]}]}

:func:`replay` rebuilds the identical state; a record made under other rules than the ones
given is refused.
"""

from __future__ import annotations

import json
import os
from typing import Any

from five_hundred_env.actions import action_to_str, parse_action
from five_hundred_env.engine import Deal, Game, deal_to_cards
from five_hundred_env.files import write_atomic
from five_hundred_env.rules import Rules

RECORD_FORMAT = "five-hundred-record/1"


def _deal_entry(deal: Deal) -> dict[str, Any]:
    entry: dict[str, Any] = {"dealer": deal.dealer}
    entry.update(deal_to_cards(deal.rules, deal.dealt, deal.kitty))
    entry["actions"] = [action_to_str(a, deal.rules) for a in deal.history]
    return entry


def record_of(state: Deal | Game) -> dict[str, Any]:
    """The record of a deal or a game, as plain JSON-able data."""
    if isinstance(state, Deal):
        return {"format": RECORD_FORMAT, "kind": "deal", "rules": state.rules.to_dict(),
                "deals": [_deal_entry(state)]}
    return {"format": RECORD_FORMAT, "kind": "game", "rules": state.rules.to_dict(),
            "starting_scores": list(state.starting_scores),
            "deals": [_deal_entry(d) for d in state.deals]}


def replay(record: dict[str, Any], rules: Rules | None = None) -> Deal | Game:
    """Rebuild the state a record describes; refuse a record made for other rules than ``rules``.

    A malformed record (no ``rules``, a deal without its ``actions`` list, a dealer out of turn,
    an illegal action …) is a one-line ``ValueError`` naming what is wrong and where.
    """
    if not isinstance(record, dict) or record.get("format") != RECORD_FORMAT:
        raise ValueError(f"not a Five Hundred record (expected format {RECORD_FORMAT!r})")
    recorded_rules = record.get("rules")
    if not isinstance(recorded_rules, dict) or "preset" not in recorded_rules:
        raise ValueError("the record has no 'rules' (a mapping of every option, its 'preset' included)")
    recorded = Rules.from_dict(recorded_rules)
    if rules is not None and recorded != rules:
        raise ValueError(f"the record was made for other rules: {recorded.describe()}, not {rules.describe()}")
    kind = record.get("kind")
    entries = record.get("deals")
    if kind not in ("deal", "game") or not isinstance(entries, list) or not entries:
        raise ValueError("a record needs kind 'deal' or 'game' and a non-empty list of deals")
    if kind == "deal" and len(entries) != 1:
        raise ValueError("a deal record holds exactly one deal")
    deals = [_deal_of(entry, i, recorded) for i, entry in enumerate(entries)]
    actions = [_actions_of(entry, i) for i, entry in enumerate(entries)]
    for i in range(1, len(deals)):
        expected = (deals[i - 1].dealer + 1) % recorded.num_players
        if deals[i].dealer != expected:
            raise ValueError(f"deal {i} of the record is dealt by seat {deals[i].dealer}, but the dealer "
                             f"after deal {i - 1} (seat {deals[i - 1].dealer}) is seat {expected}")
    if kind == "deal":
        _play(deals[0], actions[0], recorded, 0)
        return deals[0]
    game = Game(recorded, first_deal=deals[0], scores=record.get("starting_scores"))
    game.upcoming_deals = deals[1:]
    for i, texts in enumerate(actions):
        if game.is_over:
            raise ValueError(f"the record goes on after the game ended (deal {i})")
        if game.deal is not deals[i]:
            raise ValueError(f"deal {i - 1} of the record is not finished")
        _play(game, texts, recorded, i)
    return game


def replay_start(record: dict[str, Any]) -> tuple[Game, list[Deal]]:
    """A record set up to be replayed step by step: the whole record is checked first
    (:func:`replay`), then a game at the record's start (its deals as dealt, played in turn; its
    starting scores; no deal beyond the record) and the recorded deals, whose ``history`` holds
    the actions to apply to it, in order."""
    state = replay(record)
    played = [state] if isinstance(state, Deal) else state.deals[:len(record["deals"])]  # not the deal dealt after them
    rules = played[0].rules
    deals = [Deal(rules, d.dealt, d.kitty, d.dealer) for d in played]
    scores = None if isinstance(state, Deal) else state.starting_scores
    game = Game(rules, first_deal=deals[0], scores=scores, max_deals=len(deals))
    game.upcoming_deals = deals[1:]
    return game, played


def _deal_of(entry: Any, index: int, rules: Rules) -> Deal:
    """The deal of one record entry, as dealt."""
    try:
        return Deal.from_cards(rules, entry["hands"], entry["kitty"], entry["dealer"])
    except (KeyError, TypeError) as e:
        raise ValueError(f"deal {index} of the record is malformed: missing {e}") from None


def _actions_of(entry: dict[str, Any], index: int) -> list[str]:
    """The ``actions`` of one record entry: a list of action names."""
    if "actions" not in entry:
        raise ValueError(f"deal {index} of the record has no 'actions' list")
    texts = entry["actions"]
    if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
        raise ValueError(f"deal {index} of the record: 'actions' must be a list of action names, got {texts!r}")
    return texts


def _play(state: Deal | Game, actions: list[str], rules: Rules, index: int) -> None:
    for text in actions:
        try:
            state.apply_action(parse_action(text, rules))
        except ValueError as e:
            raise ValueError(f"deal {index} of the record: {e}") from None


def save_record(state_or_record: Deal | Game | dict[str, Any], path: str | os.PathLike[str]) -> None:
    """Write a record as JSON, atomically and durably: a temporary file beside ``path`` (created
    with the user's umask, like any new file), flushed to disk, then renamed into place."""
    record = state_or_record if isinstance(state_or_record, dict) else record_of(state_or_record)
    text = json.dumps(record, indent=1) + "\n"
    write_atomic(path, lambda f: f.write(text.encode()))


def load_record(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a record file; malformed JSON, text that is not UTF-8 and JSON nested too deeply to
    be a record are one-line errors naming the file."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except json.JSONDecodeError as e:
        raise ValueError(f"{path} is not valid JSON: {e}") from None
    except UnicodeDecodeError as e:
        raise ValueError(f"{path} is not a record (not UTF-8 text: {e.reason} at byte {e.start})") from None
    except RecursionError:  # a record is a few levels deep; the decoder recurses once per level
        raise ValueError(f"{path} is not a record (JSON nested too deeply)") from None
