"""Bots in any language: the agent spec ``cmd:COMMAND`` runs COMMAND as a child process that
speaks JSON lines (the protocol: docs/protocol.md).

The project writes one JSON object per line on the bot's standard input; every line that holds
``"legal_actions"`` (a ``decision``) waits for one reply line ``{"action": ID}`` on its standard
output, and the other lines (``start`` with the rules, ``deal_start``, ``deal_end``, ``game_end``)
need none. A decision carries the seat's observation twice (its named slices and the flat
vector) and the legal actions' names. What the bot writes on standard error passes through.

A bot that answers after the time-out, answers an action that is not legal, writes anything but
such an object, or dies is a :class:`BotError` naming the bot and the decision, never a hang: the
process is stopped then, and started afresh at its next message (so a match that scores the
board as forfeited, ``--on-bot-error forfeit``, goes on with a fresh bot). COMMAND is split like
a shell line (:func:`shlex.split`) but run without a shell.

Options go between brackets: ``cmd[timeout=2,startup=60]:./bot --deep``: ``timeout``, the seconds
a decision may take (default :data:`DEFAULT_TIMEOUT_S`), and ``startup``, the seconds added to
the first decision after the process starts (default :data:`DEFAULT_STARTUP_S`: an interpreter
that loads a model takes a while).
"""

from __future__ import annotations

import json
import math
import os
import re
import select
import shlex
import subprocess
import time
import weakref
from typing import Any

import numpy as np

from agents.base import Agent
from agents.split import decision_kind
from five_hundred_env.actions import ActionTable
from five_hundred_env.observation import observation_layout
from five_hundred_env.rules import Rules

PROTOCOL_VERSION = 1
DEFAULT_TIMEOUT_S = 10.0
"""Seconds a bot may take to answer one decision."""
DEFAULT_STARTUP_S = 30.0
"""Seconds added to the first decision after the bot's process starts."""
STOP_S = 2.0
"""Seconds a bot has to exit once its standard input is closed, before it is killed."""
MAX_LINE = 1 << 20
"""A reply longer than this (bytes) is garbage."""

CMD_PREFIX = "cmd"
_SPEC = re.compile(r"^cmd(?:\[([^\]]*)\])?:(.*)$", re.IGNORECASE | re.DOTALL)


def is_command_spec(text: str) -> bool:
    """Whether an agent spec is a ``cmd:`` (or ``cmd[...]:``) bot."""
    return bool(_SPEC.match(text.strip()))


def parse_command_spec(text: str) -> tuple[list[str], str]:
    """``(argv, options text)`` of a ``cmd[OPTIONS]:COMMAND`` spec; an empty or unsplittable
    command is a ``ValueError``."""
    match = _SPEC.match(text.strip())
    if not match:
        raise ValueError(f"agent spec {text!r}: expected cmd:COMMAND or cmd[timeout=S]:COMMAND")
    options, command = match.group(1) or "", match.group(2).strip()
    try:
        argv = shlex.split(command)
    except ValueError as e:
        raise ValueError(f"agent spec {text!r}: the command does not split into words ({e})") from None
    if not argv:
        raise ValueError(f"agent spec {text!r}: no command after cmd:")
    return argv, options


class BotError(RuntimeError):
    """A ``cmd:`` bot failed at a decision: late, illegal, garbage or dead (``reason``). The
    message names the bot and the decision; ``agent`` is the :class:`CommandAgent` at fault."""

    def __init__(self, message: str, agent: CommandAgent, reason: str) -> None:
        super().__init__(message)
        self.agent = agent
        self.reason = reason


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Close the bot's input (its cue to exit), give it :data:`STOP_S`, then kill it."""
    if proc.poll() is None:
        try:
            if proc.stdin:
                proc.stdin.close()
        except OSError:
            pass
        try:
            proc.wait(STOP_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    if proc.stdout:
        proc.stdout.close()


class _Template:
    """The JSON text of a 0/1 vector's layout, written once with every element 0: each call fills
    the element digits in with one vectorised assignment, and puts the scores (any width) in."""

    def __init__(self, zeros_json: str, size: int, scores: tuple[int, int]) -> None:
        text = np.frombuffer(zeros_json.encode(), dtype=np.uint8)
        digits = np.flatnonzero(text == ord("0"))  # the slice names hold no digit: one 0 per element, in order
        if len(digits) != size:
            raise AssertionError(f"{len(digits)} digits for {size} elements in {zeros_json[:40]!r}")
        first, last = scores
        self.text = text.copy()
        self.positions = np.concatenate([digits[:first], digits[last:]])
        self.head, self.tail = digits[first], digits[last - 1] + 1

    def fill(self, digits: np.ndarray, scores: bytes) -> bytes:
        text = self.text
        text[self.positions] = digits
        return text[:self.head].tobytes() + scores + text[self.tail:].tobytes()


class ObservationText:
    """An observation vector as the JSON of the protocol's ``observation`` (its named slices, 2-D
    ones as lists of rows) and ``vector``, fast: every slice but ``scores`` is 0/1
    (:mod:`five_hundred_env.observation`), so their digits go into a fixed text in one vectorised
    step, and only ``scores`` is written number by number. A vector with anything but 0/1
    elsewhere is written the slow way (json), to the same text."""

    def __init__(self, rules: Rules) -> None:
        self.layout = [(name, offset, shape) for name, (offset, shape) in observation_layout(rules).items()]
        self.size = sum(math.prod(shape) for _name, _offset, shape in self.layout)
        offset, (width,) = observation_layout(rules)["scores"]
        self.scores = slice(offset, offset + width)
        self.binary = np.ones(self.size, dtype=bool)
        self.binary[self.scores] = False
        zeros = np.zeros(self.size, dtype=np.int8)
        named, flat = self._slow(zeros)
        self._named = _Template(named.decode(), self.size, (offset, offset + width))
        self._flat = _Template(flat.decode(), self.size, (offset, offset + width))

    def _slow(self, vector: np.ndarray) -> tuple[bytes, bytes]:
        slices = {name: vector[o:o + math.prod(shape)].reshape(shape).tolist() for name, o, shape in self.layout}
        return json.dumps(slices, separators=(",", ":")).encode(), json.dumps(vector.tolist(), separators=(",", ":")).encode()

    def encode(self, vector: np.ndarray) -> tuple[bytes, bytes]:
        """``(observation, vector)``: the JSON texts of the named slices and of the flat vector."""
        vector = np.asarray(vector)
        digits = vector[self.binary]
        if ((digits & ~1) != 0).any():  # not the documented 0/1: no shortcut
            return self._slow(vector)
        digits = digits.astype(np.uint8) + ord("0")
        scores = ",".join(str(int(x)) for x in vector[self.scores]).encode()
        return self._named.fill(digits, scores), self._flat.fill(digits, scores)


class CommandAgent(Agent):
    """A child process playing through the JSON-lines protocol (module docstring); one process per
    agent, started at its first message. ``label`` names the bot in errors (the spec as written)."""

    name = "cmd"

    def __init__(self, rules: Rules | str = "australian", seed: int | None = None, *, argv: list[str],
                 timeout: float = DEFAULT_TIMEOUT_S, startup: float = DEFAULT_STARTUP_S, label: str | None = None) -> None:
        super().__init__(rules, seed)
        if not argv:
            raise ValueError("a cmd: bot needs a command")
        for name, value in (("timeout", timeout), ("startup", startup)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise ValueError(f"cmd: bot option {name} must be a positive number of seconds, got {value!r}")
        self.argv = list(argv)
        self.timeout, self.startup = float(timeout), float(startup)
        self.label = label or f"cmd:{shlex.join(argv)}"
        table = ActionTable(self.rules)
        self._names = [table.to_str(i) for i in range(len(table))]
        self._text = ObservationText(self.rules)
        self._layout = self._text.layout
        self._phase = next(slice(o, o + s[0]) for name, o, s in self._layout if name == "phase")
        self._proc: subprocess.Popen[bytes] | None = None
        self._finalizer: Any = None
        self._buffer = b""
        self._fresh = True  # no decision answered since the process started
        self._play_seed: int | None = seed
        self.seat: int | None = None
        self.deal = 0
        self.decision = 0

    # -- the process ---------------------------------------------------------------------------------
    def _start(self) -> subprocess.Popen[bytes]:
        try:
            proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0,
                                    start_new_session=True)  # Ctrl-C is the match's to handle: it stops the bot
        except OSError as e:
            raise BotError(f"bot {self.label!r} could not start: {e.strerror or e}", self, "dead") from None
        assert proc.stdin is not None
        os.set_blocking(proc.stdin.fileno(), False)
        self._proc, self._buffer, self._fresh = proc, b"", True
        self._finalizer = weakref.finalize(self, _stop, proc)
        rules = self.rules
        self._send({"type": "start", "protocol": PROTOCOL_VERSION, "preset": rules.preset, "rules": rules.to_dict(),
                    "num_players": rules.num_players, "num_sides": rules.num_sides, "action_names": self._names,
                    "observation_layout": {name: {"offset": o, "shape": list(s)} for name, o, s in self._layout}})
        return proc

    def close(self) -> None:
        """Stop the bot's process (a later message starts a new one)."""
        if self._finalizer is not None:
            self._finalizer()
        self._proc = self._finalizer = None

    def _send(self, message: dict[str, Any], line: bytes | None = None) -> None:
        """Write one line (``message``, or ``line`` already encoded), within the time-out: the
        pipe is non-blocking, so a bot that stops reading is late, not a hang."""
        proc = self._proc or self._start()
        assert proc.stdin is not None
        data = memoryview(line if line is not None else json.dumps(message, separators=(",", ":")).encode() + b"\n")
        fd = proc.stdin.fileno()
        deadline = time.monotonic() + self.timeout
        try:
            while data:
                try:
                    data = data[os.write(fd, data):]
                except BlockingIOError:  # the pipe is full: wait until the bot reads
                    if not select.select([], [fd], [], max(0.0, deadline - time.monotonic()))[1]:
                        self._fail("late", f"did not read {self._what(message)} within {self.timeout:g} s")
        except (BrokenPipeError, ConnectionResetError):
            self._fail("dead", f"died ({self._exit_text()}) before {self._what(message)}")

    def _exit_text(self) -> str:
        proc = self._proc
        if proc is None:
            return "not running"
        try:
            code = proc.wait(0.5)
        except subprocess.TimeoutExpired:
            return "its output closed"
        return f"exit status {code}" if code >= 0 else f"killed by signal {-code}"

    def _what(self, message: dict[str, Any]) -> str:
        if "legal_actions" not in message:
            return f"its {message.get('type', 'message')} message"
        seat = "" if self.seat is None else f"seat {self.seat}, "
        return f"decision {self.decision} of deal {self.deal} ({seat}{message['kind']})"

    def _fail(self, reason: str, text: str) -> None:
        self.close()
        raise BotError(f"bot {self.label!r} {text}", self, reason)

    def _check_quiet(self, message: dict[str, Any]) -> None:
        """Before a decision: the bot has written nothing since its last answer (a second line, or
        an answer to a line that wants none, would be taken for the next answer)."""
        proc = self._proc
        assert proc is not None and proc.stdout is not None
        fd = proc.stdout.fileno()
        extra = self._buffer or (os.read(fd, 80) if select.select([fd], [], [], 0)[0] else None)
        if extra == b"":
            self._fail("dead", f"died ({self._exit_text()}) before {self._what(message)}")
        if extra:
            self._fail("garbage", f"wrote {extra[:80].decode('utf-8', 'replace')!r} unasked, before {self._what(message)}: "
                       "one line answers each decision, nothing else")

    def _read_line(self, deadline: float, message: dict[str, Any]) -> bytes:
        proc = self._proc
        assert proc is not None and proc.stdout is not None
        fd = proc.stdout.fileno()
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                limit = self.timeout + (self.startup if self._fresh else 0.0)
                self._fail("late", f"did not answer {self._what(message)} within {limit:g} s")
            chunk = os.read(fd, 65536)
            if not chunk:
                self._fail("dead", f"died ({self._exit_text()}) at {self._what(message)}")
            self._buffer += chunk
            if len(self._buffer) > MAX_LINE:
                self._fail("garbage", f"wrote more than {MAX_LINE:,} bytes without a newline at {self._what(message)}")
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line

    # -- the agent -------------------------------------------------------------------------------------
    def seed(self, seed: int | None) -> None:
        super().seed(seed)
        self._play_seed = seed  # told to the bot with the next deal's start

    def notify(self, event: dict[str, Any]) -> None:
        if event.get("type") == "deal_start":
            self.seat, self.deal, self.decision = event.get("seat"), self.deal + 1, 0
            event = {**event, "seed": self._play_seed}
        self._send(event)

    def act(self, observation: dict[str, Any]) -> int:
        vector = observation["observation"]
        mask = observation["action_mask"]
        legal = [int(i) for i in mask.nonzero()[0]]
        if not legal:
            raise ValueError("no legal action in the mask: is it this agent's turn?")
        self.decision += 1
        kind = decision_kind(observation, self._phase)
        message = {"type": "decision", "deal": self.deal, "decision": self.decision, "seat": self.seat, "kind": kind,
                   "legal_actions": legal}
        named, flat = self._text.encode(vector)
        head = json.dumps({**message, "legal_names": [self._names[i] for i in legal]}, separators=(",", ":")).encode()
        line = head[:-1] + b',"observation":' + named + b',"vector":' + flat + b"}\n"
        if self._proc is None:
            self._start()
        self._check_quiet(message)
        limit = self.timeout + (self.startup if self._fresh else 0.0)
        self._send(message, line)
        line = self._read_line(time.monotonic() + limit, message)
        self._fresh = False
        try:
            reply = json.loads(line)
        except ValueError:
            reply = None
        action = reply.get("action") if isinstance(reply, dict) else None
        if isinstance(action, bool) or not isinstance(action, int):
            shown = line[:80].decode("utf-8", "replace") + ("..." if len(line) > 80 else "")
            self._fail("garbage", f"answered {shown!r} to {self._what(message)}: expected a line {{\"action\": ID}}")
        if action not in legal:
            self._fail("illegal", f"answered the illegal action {action} to {self._what(message)}; legal: "
                       + ", ".join(f"{i} ({self._names[i]})" for i in legal))
        return int(action)


def command_builder(label: str, argv: list[str], options: dict[str, Any]) -> Any:
    """The builder ``f(rules, seed) -> CommandAgent`` of a ``cmd:`` spec (``label``, as written),
    its command split (:func:`parse_command_spec`) and its options parsed; an option it does not
    take is a ``ValueError``."""
    unknown = sorted(set(options) - {"timeout", "startup"})
    if unknown:
        raise ValueError(f"agent spec {label!r}: cmd has no option {', '.join(map(repr, unknown))} (it takes timeout, startup)")

    def build(rules: Rules, seed: int | None) -> Agent:
        return CommandAgent(rules, seed, argv=argv, label=label, **options)

    return build


__all__ = ["DEFAULT_STARTUP_S", "DEFAULT_TIMEOUT_S", "PROTOCOL_VERSION", "BotError", "CommandAgent", "command_builder",
           "is_command_spec", "parse_command_spec"]
