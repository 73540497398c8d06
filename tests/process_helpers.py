"""How the tests start child processes whose signals they test: with the dispositions a terminal
gives, or those a background start gives, whatever the test process itself inherited (a suite
started with ``cmd &`` has SIGINT ignored, under ``nohup`` SIGHUP too, and children inherit that)."""

from __future__ import annotations

import signal


def as_from_a_terminal() -> None:
    """``preexec_fn``: SIGINT and SIGHUP at their defaults, as in a command typed at a terminal."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


def as_in_the_background_with_nohup() -> None:
    """``preexec_fn``: SIGINT and SIGHUP ignored, as in ``nohup cmd &`` started by a shell script."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
