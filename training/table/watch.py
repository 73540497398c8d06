"""``five-hundred watch``: agents play each other while a spectator looks on, every hand shown.

A spectator sees all: the hands as dealt and the kitty, every action (discards and the joker's
nomination included), the hands at the start of each trick, each trick's winner and why, each
deal's result and the game's. ``--gif`` records the table picture
(:func:`five_hundred_env.picture.table_image`) after every action as an animated GIF, seen from
the player to act (or one ``--viewer`` seat), with the action written under it.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agents.play import Turn, play_game
from agents.registry import agent_factory
from five_hundred_env.engine import Deal, Phase
from five_hundred_env.env import raw_env
from five_hundred_env.files import write_atomic
from five_hundred_env.render import cards_text, colour_supported, hand_text, labelled
from five_hundred_env.rules import Rules
from training.table.terminal import TableNews, Write, action_text

GIF_FRAME_MS = 700
"""How long each frame of a ``--gif`` shows when no ``--delay`` is given."""
CAPTION_HEIGHT = 28


def seat_specs(rules: Rules, specs: Sequence[str]) -> list[str]:
    """The agent spec of each seat: one spec per side (a team's two seats play the same agent) or
    one per seat."""
    if len(specs) == rules.num_players:
        return list(specs)
    if len(specs) == rules.num_sides:
        return [specs[rules.side_of(seat)] for seat in range(rules.num_players)]
    counts = sorted({rules.num_sides, rules.num_players})
    raise ValueError(f"watch needs {' or '.join(map(str, counts))} agents for {rules.preset} "
                     f"(one per {'side or seat' if len(counts) == 2 else 'seat'}), got {len(specs)}")


class GifRecorder:
    """The table picture after every action, captioned with the action, saved as an animated GIF."""

    def __init__(self, path: Path, viewer: int | None, frame_ms: int) -> None:
        try:
            from PIL import Image  # only when a GIF is asked for
        except ImportError:
            raise ValueError("--gif needs Pillow: pip install pillow") from None

        self.image_module = Image
        self.path, self.viewer, self.frame_ms = path, viewer, frame_ms
        self.frames: list[Any] = []

    def add(self, env: raw_env, turn: Turn, caption: str) -> None:
        """One frame: the table after ``turn`` from the viewer (default: the player to act next)."""
        from PIL import ImageDraw

        from five_hundred_env.picture import table_image

        deal = turn.deal
        viewer = self.viewer if self.viewer is not None else (deal.to_act if deal.to_act >= 0 else turn.seat)
        assert env.game is not None
        table = self.image_module.fromarray(table_image(env.game, env.possible_agents, viewer, deal=deal))
        frame = self.image_module.new("RGB", (table.width, table.height + CAPTION_HEIGHT), (0, 0, 0))
        frame.paste(table, (0, 0))
        # the caption numbers the frames, so that no two are alike (a GIF writer merges equal frames)
        ImageDraw.Draw(frame).text((12, table.height + 6), f"{len(self.frames) + 1}. {caption}", fill=(240, 240, 240))
        self.frames.append(frame.convert("P", palette=self.image_module.Palette.ADAPTIVE))

    def save(self) -> None:
        """Write the GIF (nothing when no action was taken)."""
        if self.frames:
            first, *rest = self.frames
            write_atomic(self.path, lambda f: first.save(f, format="GIF", save_all=True, append_images=rest,
                                                         duration=self.frame_ms, loop=0))


class Spectator:
    """What the spectator is told after each action (the play loop's ``on_turn``)."""

    def __init__(self, env: raw_env, labels: Sequence[str], colour: bool, write: Write = print,
                 gif: GifRecorder | None = None, delay: float = 0.0) -> None:
        self.env, self.colour, self.write, self.gif, self.delay = env, colour, write, gif, delay
        rules = env.rules
        self.names = [f"{name} ({labels[s]})" for s, name in enumerate(env.possible_agents)]
        sides = [" & ".join(env.possible_agents[s] for s in rules.seats_of(side)) for side in range(rules.num_sides)]
        self.news = TableNews(env.possible_agents, sides, colour, write)
        self.deal: Deal | None = None
        self.deals_seen = 0

    def on_turn(self, turn: Turn) -> None:
        """Print the action and whatever it made known; add a GIF frame; wait ``delay`` seconds."""
        deal, env = turn.deal, self.env
        if deal is not self.deal:
            self.deal = deal
            self.deals_seen += 1
            self._deal_header(deal)
        text = action_text(env, turn.action, deal, self.colour)
        verb = {Phase.DISCARD: "discards ", Phase.CALL: "calls "}.get(turn.phase, "")
        self.write(f"{self.names[turn.seat]}: {verb}{text}")
        if turn.phase == Phase.BIDDING and deal.phase == Phase.DISCARD:
            self.write(f"{env.possible_agents[deal.contractor]} picks up the kitty: {cards_text(deal, deal.kitty, self.colour)}")
        assert env.game is not None
        self.news.after(turn, env.game.scores)
        if deal.phase == Phase.PLAY and not deal.trick:
            self._hands(deal, f"trick {len(deal.tricks) + 1}, the hands:")
        if self.gif is not None:
            self.gif.add(env, turn, f"{env.possible_agents[turn.seat]}: {env.action_to_str(turn.action)}")
        if self.delay > 0:
            time.sleep(self.delay)

    def _deal_header(self, deal: Deal) -> None:
        self.write(f"=== deal {self.deals_seen}, dealer {self.env.possible_agents[deal.dealer]} ===")
        self._hands(deal, "the hands as dealt:")
        self.write(f"  kitty: {cards_text(deal, deal.kitty, self.colour)}")
        if deal.rules.dead_hand_size:  # two_handed (§10.3): in play for nobody, shown to the spectator
            self.write(f"  dead hand: {cards_text(deal, deal.dead_hand, self.colour)}")

    def _hands(self, deal: Deal, title: str) -> None:
        self.write(title)
        for seat in range(deal.rules.num_players):
            hand = "(sits out)" if seat in deal.sitting_out_seats else hand_text(deal, seat, self.colour)
            self.write(f"  {self.names[seat]}: {hand}")


def watch_in_terminal(rules: Rules, specs: Sequence[str], seed: int, deals: int | None, *,
                      gif: Path | None = None, viewer: int | None = None, delay: float | None = None) -> int:
    """Agents (``specs``, one per side or per seat) play ``deals`` deals, or a game to 500 when
    ``deals`` is ``None``, printed for a spectator; ``gif``: also record the table pictures there.
    ``delay``: seconds between actions (default: 0.5 on a terminal, else 0). Returns the exit status."""
    per_seat = seat_specs(rules, specs)
    n = rules.num_players
    if viewer is not None and not 0 <= viewer < n:
        raise ValueError(f"--viewer must be a seat 0..{n - 1}, got {viewer}")
    if deals is not None and deals < 1:
        raise ValueError(f"--deals must be at least 1, got {deals}")
    if delay is not None and delay < 0:
        raise ValueError(f"--delay must be 0 or more seconds, got {delay}")
    factories = [agent_factory(spec) for spec in per_seat]
    seats = [factory(rules, seed * 100 + s) for s, factory in enumerate(factories)]
    interactive = sys.stdout.isatty()
    delay = (0.5 if interactive else 0.0) if delay is None else delay
    recorder = GifRecorder(gif, viewer, round(delay * 1000) or GIF_FRAME_MS) if gif is not None else None
    env = raw_env(rules=rules, episode="game", max_deals=deals)
    spectator = Spectator(env, [f.label for f in factories], colour_supported(sys.stdout), gif=recorder, delay=delay)
    print(f"Five Hundred ({rules.describe()}): " + ", ".join(spectator.names)
          + ". A spectator sees every hand; trumps are marked *.")
    try:
        game = play_game(env, seats, seed=seed, on_turn=spectator.on_turn)
    finally:  # the pictures so far, however the watching ended (Ctrl-C included)
        if recorder is not None:
            recorder.save()
            print(f"wrote {gif} ({len(recorder.frames)} frames)")
    scores = labelled(spectator.news.labels or [], game.scores)
    if game.is_over:
        print("game over; winners: " + ", ".join(env.possible_agents[s] for s in game.winning_seats())
              + f"; scores {scores}")
    else:
        print(f"stopped after {len(game.deals)} deal(s); scores {scores}")
    return 0


__all__ = ["GifRecorder", "Spectator", "seat_specs", "watch_in_terminal"]
