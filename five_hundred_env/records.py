"""Records: a deal or a whole game as a small JSON document, and its exact replay.

A record holds the rules (every option), each deal's dealer, hands and kitty by card name,
and the actions in the notation of RULES.md §1::

    {"format": "five-hundred-record/1", "kind": "deal" | "game",
     "rules": {...}, "starting_scores": [...],          # per side; "game" records only
     "deals": [{"dealer": 0, "hands": [["Ah", ...], ...], "kitty": [...], "actions": ["PASS", "7H", ...]}]}

:func:`replay` rebuilds the identical state; a record made under other rules than the ones
given is refused.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from five_hundred_env.actions import action_to_str, parse_action
from five_hundred_env.engine import Deal, Game, deal_to_cards
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
    """Rebuild the state a record describes; refuse a record made for other rules than ``rules``."""
    if not isinstance(record, dict) or record.get("format") != RECORD_FORMAT:
        raise ValueError(f"not a Five Hundred record (expected format {RECORD_FORMAT!r})")
    recorded = Rules.from_dict(record.get("rules", {}))
    if rules is not None and recorded != rules:
        raise ValueError(f"the record was made for other rules: {recorded.describe()}, not {rules.describe()}")
    kind = record.get("kind")
    entries = record.get("deals")
    if kind not in ("deal", "game") or not isinstance(entries, list) or not entries:
        raise ValueError("a record needs kind 'deal' or 'game' and a non-empty list of deals")
    deals = []
    for i, entry in enumerate(entries):
        try:
            deals.append(Deal.from_cards(recorded, entry["hands"], entry["kitty"], entry["dealer"]))
        except (KeyError, TypeError) as e:
            raise ValueError(f"deal {i} of the record is malformed: missing {e}") from None
    if kind == "deal":
        if len(deals) != 1:
            raise ValueError("a deal record holds exactly one deal")
        _play(deals[0], entries[0]["actions"], recorded, 0)
        return deals[0]
    game = Game(recorded, first_deal=deals[0], scores=record.get("starting_scores"))
    game.upcoming_deals = deals[1:]
    for i, entry in enumerate(entries):
        if game.is_over:
            raise ValueError(f"the record goes on after the game ended (deal {i})")
        if game.deal is not deals[i]:
            raise ValueError(f"deal {i - 1} of the record is not finished")
        for text in entry.get("actions", []):
            try:
                game.apply_action(parse_action(text, recorded))
            except ValueError as e:
                raise ValueError(f"deal {i} of the record: {e}") from None
    return game


def _play(deal: Deal, actions: list[str], rules: Rules, index: int) -> None:
    for text in actions:
        try:
            deal.apply_action(parse_action(text, rules))
        except ValueError as e:
            raise ValueError(f"deal {index} of the record: {e}") from None


def save_record(state_or_record: Deal | Game | dict[str, Any], path: str | os.PathLike[str]) -> None:
    """Write a record as JSON, atomically (a temporary file renamed into place)."""
    record = state_or_record if isinstance(state_or_record, dict) else record_of(state_or_record)
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent or ".", prefix=path.name, suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        json.dump(record, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)


def load_record(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a record file; malformed JSON is an error naming the file."""
    try:
        with open(path) as f:
            return json.load(f)
    except json.JSONDecodeError as e:
        raise ValueError(f"{path} is not valid JSON: {e}") from None
