"""``five-hundred serve``: its options and the server run (uvicorn, imported only here)."""

from __future__ import annotations

import argparse
import gc
import logging
from pathlib import Path
from typing import Any

from training.web.thinkers import DEFAULT_NICE, MAX_NICE

DEFAULT_FOLDER = Path("~/.five-hundred/web-games")
GC_YOUNG = 10_000
"""The garbage collector's young generation in the server, in objects (Python's default: 700)."""


def add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``serve``."""
    parser.add_argument("--host", default="127.0.0.1", help="the address to listen on (default 127.0.0.1: this machine only)")
    parser.add_argument("--port", type=int, default=8000, help="the port (default 8000)")
    parser.add_argument("--games-dir", default=str(DEFAULT_FOLDER), metavar="FOLDER",
                        help=f"where games in progress are kept, so that a restart resumes them (default {DEFAULT_FOLDER})")
    parser.add_argument("--max-games", type=int, default=100, help="how many games may exist at once (default 100)")
    parser.add_argument("--idle-minutes", type=float, default=60.0,
                        help="a game nobody has looked at for this long is deleted (default 60)")
    parser.add_argument("--pace", type=float, default=0.8,
                        help="seconds between the agents' moves, so that a person can follow (default 0.8; 0 to 5)")
    parser.add_argument("--workers", type=int, default=4, help="threads the agents' moves are played on (default 4)")
    parser.add_argument("--agent-processes", type=int, default=1, metavar="N",
                        help="processes the agents think in, beside the server's, so that their thinking does not "
                             "hold up its answers (default 1; 0: they think on the server's threads)")
    parser.add_argument("--agent-nice", type=int, default=DEFAULT_NICE, metavar="N",
                        help="how many steps of niceness below the server's priority the agent processes run, so that "
                             f"where the cores are short a person's move is answered first (default {DEFAULT_NICE}; "
                             f"0 to {MAX_NICE}; 0: the server's own priority)")
    parser.add_argument("--agent-file", action="append", default=[], metavar="PATH",
                        help="a trained checkpoint the page may choose as an agent (repeatable); no other file is loaded")
    parser.add_argument("--keep-games", metavar="DIR",
                        help="keep every finished game with a person in it in DIR (0600 files: the record, the agents' "
                             "specs and versions, people anonymous unless named), for five-hundred human-results DIR")
    parser.add_argument("--allowed-host", action="append", default=[], metavar="NAME",
                        help="a host name the server answers to besides this machine's (127.0.0.1, localhost, ::1): "
                             "the public name behind a reverse proxy (repeatable; '*': any)")


def serve(args: argparse.Namespace) -> int:
    """Run the server until Ctrl-C; every game is on disk all along."""
    try:
        import uvicorn  # noqa: F401  (the web extra is there, or the message below)

        from training.web.app import LOCAL_HOSTS, create_app
    except ImportError as e:
        raise ValueError(f"serve needs the web extra ({e}): pip install -e '.[train,web]'") from None
    from training.web.menu import AgentMenu
    from training.web.store import GameStore

    if not 0 < args.port < 65536:
        raise ValueError(f"--port must be 1 to 65535, got {args.port}")
    store = GameStore(args.games_dir, max_games=args.max_games, idle_seconds=args.idle_minutes * 60, pace=args.pace,
                      workers=args.workers, agent_processes=args.agent_processes, agent_nice=args.agent_nice,
                      menu=AgentMenu.with_files(args.agent_file), keep=args.keep_games)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    host = f"[{args.host}]" if ":" in args.host else args.host
    print(f"Five Hundred at http://{host}:{args.port}/  ({len(store.games)} games resumed from {store.folder}; Ctrl-C stops)",
          flush=True)
    # What was loaded at start (FastAPI, numpy, the agents' tables, the resumed games) stays for good:
    # kept out of the collector's full passes, which would otherwise walk it all (some 100 ms on a
    # busy machine) in the middle of someone's move.
    gc.freeze()
    # What comes later is walked too: the default young generation (700 objects) fills in a few
    # requests, and with 50 games a full pass took 20-30 ms every few seconds. A young generation of
    # GC_YOUNG objects makes the passes 14 times rarer (2-3 ms each; under 1% of the server's CPU in
    # benchmarks/bench_web.py instead of 3%, and no full pass in a run).
    gc.set_threshold(GC_YOUNG, *gc.get_threshold()[1:])
    hosts = [*LOCAL_HOSTS, *([] if args.host in ("0.0.0.0", "::") else [args.host]), *args.allowed_host]
    server = table_server(create_app(store, hosts), args.host, args.port)
    try:
        server.run()
    except KeyboardInterrupt:  # uvicorn raises the Ctrl-C again once it has stopped: the stop asked for
        pass
    return 0


def table_server(app: Any, host: str, port: int) -> Any:
    """The uvicorn server of ``app`` (:func:`~training.web.app.create_app`'s) on ``host``:``port``.

    Ctrl-C first answers the pages' waiting views (``app.close()``), so that the server's shutdown
    cuts no request short (uvicorn cancels what is left after a second, with a traceback); the
    games are written before the process exits. Nothing reads the client's address: no access log
    (a line per request, on the event loop that serves the moves; the requests carry seat tokens)
    and no proxy headers to parse. Each answer in one write (``OneWriteProtocol``)."""
    import uvicorn

    from training.web.http_protocol import OneWriteProtocol

    class TableServer(uvicorn.Server):
        async def shutdown(self, sockets: Any = None) -> None:
            app.close()
            await super().shutdown(sockets)

    return TableServer(uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False,
                                      proxy_headers=False, timeout_graceful_shutdown=1, http=OneWriteProtocol))
