"""Fixed benchmark boards: versioned sets of deals shipped with the package, so that two matches
or leagues years apart play the same deals (``five-hundred league ... --bench v1``, ``evaluate
--bench v1``).

A set is a folder ``bench/NAME/`` of this package: one gzipped text file per preset,
``PRESET.txt.gz``, a board a line (``dealer|hand of seat 0|...|kitty``, cards by name, space
separated, after ``#`` comment lines), and ``MANIFEST.json``, which gives each preset's file the
SHA-256 of its text (the file unzipped: ``gunzip -c australian.txt.gz | sha256sum``), its count
of boards and the seed its plays use (every play of board ``i`` is seeded ``seed · 1,000,003 +
i``, as :func:`training.evaluation.matches.board_results` seeds boards dealt from a seed). A file
whose text does not match its checksum is refused. A set, once published, never changes: new
deals are a new set (``v2``).

``v1`` holds 2,000 boards for each of the six presets, dealt by
:func:`training.evaluation.matches.board_deals` from seed 500 (``python -m
training.evaluation.bench write v1 --seed 500 --boards 2000`` wrote it; the deals are the file's
from then on, whatever that function does later).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from five_hundred_env.rules import PRESETS, Rules, make_rules
from training.evaluation.matches import BoardDeal, board_deals

BENCH_SETS = ("v1",)
"""The published sets, oldest first."""
MANIFEST = "MANIFEST.json"


@dataclass(frozen=True)
class BoardSet:
    """One preset's boards of a benchmark set."""

    name: str
    preset: str
    seed: int
    """The seed of the plays (board ``i``: ``seed · 1,000,003 + i``)."""
    sha256: str
    """The SHA-256 of the preset's text (its file unzipped)."""
    boards: tuple[BoardDeal, ...]

    def describe(self) -> str:
        """``bench v1 (australian, 2,000 boards, sha256 1a2b3c4d5e6f…)``: how reports name the set."""
        return f"bench {self.name} ({self.preset}, {len(self.boards):,} boards, sha256 {self.sha256[:12]}…)"


def _folder(name: str) -> Any:
    if name not in BENCH_SETS:
        raise ValueError(f"unknown benchmark set {name!r}: the published sets are {', '.join(BENCH_SETS)}")
    return resources.files("training.evaluation").joinpath("bench", name)


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def manifest(name: str) -> dict[str, Any]:
    """A set's manifest: ``{"set", "presets": {PRESET: {"file", "sha256", "boards", "seed"}}}``."""
    return json.loads(_folder(name).joinpath(MANIFEST).read_text())


@lru_cache(maxsize=16)
def _load(name: str, preset: str) -> BoardSet:
    entry = manifest(name)["presets"].get(preset)
    if entry is None:
        raise ValueError(f"benchmark set {name!r} has no boards for the preset {preset!r}")
    text = gzip.decompress(_folder(name).joinpath(entry["file"]).read_bytes()).decode()
    digest = sha256_text(text)
    if digest != entry["sha256"]:
        raise ValueError(f"benchmark set {name!r}, {entry['file']}: its text has sha256 {digest}, the manifest "
                         f"says {entry['sha256']}: the file was changed or damaged")
    boards = tuple(parse_board(line) for line in text.splitlines() if line and not line.startswith("#"))
    if len(boards) != entry["boards"]:
        raise ValueError(f"benchmark set {name!r}, {entry['file']}: {len(boards)} boards, the manifest says {entry['boards']}")
    return BoardSet(name, preset, int(entry["seed"]), digest, boards)


def load_bench(name: str, rules: Rules | str) -> BoardSet:
    """The boards of set ``name`` for the rules' preset, checked against the manifest's checksum
    (a mismatch is a ``ValueError``). Rule options that change the deck (``--option``) are
    refused by the environment as the first board is dealt."""
    preset = rules if isinstance(rules, str) else rules.preset
    return _load(name, preset)


def parse_board(line: str) -> BoardDeal:
    """A board from its line ``dealer|hand|...|kitty``."""
    dealer, *hands, kitty = line.split("|")
    return BoardDeal(int(dealer), tuple(tuple(hand.split()) for hand in hands), tuple(kitty.split()))


def format_board(board: BoardDeal) -> str:
    """The line of a board (:func:`parse_board` reads it back)."""
    return "|".join([str(board.dealer), *(" ".join(hand) for hand in board.hands), " ".join(board.kitty)])


def board_text(rules: Rules, name: str, boards: list[BoardDeal]) -> str:
    """A preset's file text: a header, then a line per board."""
    header = (f"# five-hundred benchmark boards, set {name}, preset {rules.preset}: {len(boards)} boards\n"
              f"# a board a line: dealer|hand of seat 0|...|hand of seat {rules.num_players - 1}|kitty\n")
    return header + "".join(format_board(b) + "\n" for b in boards)


def write_set(name: str, folder: Path, seed: int, count: int, presets: tuple[str, ...] = tuple(PRESETS)) -> dict[str, Any]:
    """Deal ``count`` boards of every preset from ``seed`` into ``folder`` (the files and the
    manifest); returns the manifest. Only for making a new set: a published one never changes."""
    folder.mkdir(parents=True, exist_ok=True)
    entries = {}
    for preset in presets:
        rules = make_rules(preset)
        text = board_text(rules, name, list(board_deals(rules, count, seed)))
        file = f"{preset}.txt.gz"
        (folder / file).write_bytes(gzip.compress(text.encode(), compresslevel=9, mtime=0))
        entries[preset] = {"file": file, "sha256": sha256_text(text), "boards": count, "seed": seed}
    data = {"set": name, "presets": entries}
    (folder / MANIFEST).write_text(json.dumps(data, indent=2) + "\n")
    return data


def main(argv: list[str] | None = None) -> int:
    """``python -m training.evaluation.bench write NAME --seed S --boards N [--out DIR]``, or ``check NAME``."""
    parser = argparse.ArgumentParser(prog="python -m training.evaluation.bench")
    sub = parser.add_subparsers(dest="command", required=True)
    write = sub.add_parser("write", help="deal a new set (never rewrite a published one)")
    write.add_argument("name")
    write.add_argument("--seed", type=int, required=True)
    write.add_argument("--boards", type=int, required=True)
    write.add_argument("--out", type=Path, default=None, help="default: the package's bench/NAME")
    check = sub.add_parser("check", help="verify a set's checksums")
    check.add_argument("name")
    args = parser.parse_args(argv)
    if args.command == "write":
        out = args.out or Path(__file__).with_name("bench") / args.name
        data = write_set(args.name, out, args.seed, args.boards)
        sums = ", ".join(f"{preset} {entry['sha256'][:12]}" for preset, entry in data["presets"].items())
        print(f"wrote {out}: {sums}")
        return 0
    for preset in manifest(args.name)["presets"]:
        print(load_bench(args.name, preset).describe())
    return 0


__all__ = ["BENCH_SETS", "BoardSet", "board_text", "format_board", "load_bench", "manifest", "parse_board", "write_set"]

if __name__ == "__main__":
    raise SystemExit(main())
