"""Load benchmark of the web table (``five-hundred serve``): N tables played at once through the HTTP API.

It starts its own server (a separate process, ``python -m training.cli serve``) on a free port of
127.0.0.1, with the agents' pace at 0, its games in a temporary folder (written to disk after
every move, as in use) and its agents thinking in one process of their own (``--agent-processes``,
as ``serve`` does; 0: on the server's threads); then N tables each play a game to 500: ``--people
P`` scripted people at each (1 to 4, spread around the table: two are partners at a table of
four), agents at the other seats. The first person of a table starts it (``POST /api/games`` with
its ``seats``) and hands each other person their seat's token, as a person sends a seat link;
each then plays with that token alone. They bid whenever they may (so contracts are played and
games end) and play their first legal card, and wait for their turn by long polling. The people
share one asyncio loop in this process, each with their own keep-alive HTTP/1.1 connection (a
minimal client: httpx on a thread per client took as much CPU as the server, on the same cores).

The latency of a human move is the time from just before the client sends its ``POST
/api/games/{id}/action`` until it has read the whole answer (the new view; parsing it is not
counted): the server applies the move and builds the view within the request, the agents think
afterwards, off the request path, so their thinking is not in it (it is in the agents' turns: from
a move's answer until the client may move again, also reported). It prints the human moves per
second, the p50/p99 latency, the server's CPU time per human move (and its agent processes'),
and the requests per human move, and stops the server. ``--think S`` makes each client wait S seconds before each of its
moves, as a person would (by default they do not wait: a stress test, every client's next request
sent the moment it may). ``--server-cpus 0`` keeps the server on CPU 0 (Linux).

    python benchmarks/bench_web.py --games 50 --json OUT.json
    python benchmarks/bench_web.py --games 50 --people 2 --think 1
    python benchmarks/bench_web.py --games 10 --agents pretrained --preset french_46
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(port: int, folder: str, games: int, workers: int, agent_processes: int,
                 cpus: set[int] | None = None, agent_nice: int | None = None) -> subprocess.Popen:
    """The server, on ``port``, kept on the CPUs ``cpus`` (all when ``None``), its agent processes
    ``agent_nice`` steps of niceness below it (``None``: serve's default); returns once it answers."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    command = [sys.executable, "-m", "training.cli", "serve", "--host", "127.0.0.1", "--port", str(port),
               "--games-dir", folder, "--pace", "0", "--max-games", str(games + 10), "--workers", str(workers),
               "--agent-processes", str(agent_processes)]
    if agent_nice is not None:
        command += ["--agent-nice", str(agent_nice)]
    keep = None if cpus is None else lambda: os.sched_setaffinity(0, cpus)  # before the server starts a thread
    server = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, preexec_fn=keep)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/api/info", timeout=2).status_code == 200:
                return server
        except httpx.TransportError:
            time.sleep(0.1)
    server.kill()
    raise RuntimeError(f"the server did not start: {server.stdout.read() if server.stdout else ''}")


def cpu_seconds(pid: int) -> float:
    """The CPU time (user and system) a process has used so far (Linux; NaN elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return float("nan")


def agent_processes(pid: int) -> list[int]:
    """The agent processes the server ``pid`` started (Linux; none elsewhere): its children but
    multiprocessing's resource tracker, which idles."""
    try:
        children = [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
        return [c for c in children if b"resource_tracker" not in Path(f"/proc/{c}/cmdline").read_bytes()]
    except (OSError, ValueError):
        return []


def choose(view: dict) -> str:
    bids = [a for a in view["legal"] if a != "PASS"]
    return bids[0] if bids else view["legal"][0]


class Connection:
    """A keep-alive HTTP/1.1 connection to the server, as light as can be: the clients of 50 games
    share the benchmark's one core with little CPU (httpx on 50 threads used as much as the server)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.requests = 0
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def request(self, method: str, path: str, body: dict | None = None) -> tuple[int, bytes]:
        """Send one request and read its answer: the status and the body."""
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        assert self.reader is not None
        self.requests += 1
        data = b"" if body is None else json.dumps(body).encode()
        head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {len(data)}\r\n"
        self.writer.write(head.encode() + b"\r\n" + data)
        status = int((await self.reader.readuntil(b"\r\n")).split()[1])
        length = 0
        while (line := await self.reader.readuntil(b"\r\n")) != b"\r\n":
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        return status, await self.reader.readexactly(length)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


def people_seats(players: int, people: int) -> list[int]:
    """The seats of ``people`` people at a table of ``players``, spread around it (0 and 2 of four: partners)."""
    return sorted({round(i * players / people) % players for i in range(people)})


class Table:
    """A table's setting: its preset, its seats (``"human"`` or the agents' spec), and the seat
    tokens its first person hands the others (:meth:`Client.play`)."""

    def __init__(self, preset: str, agents: str, players: int, people: int) -> None:
        self.preset = preset
        self.people = people_seats(players, people)
        self.seats = ["human" if s in self.people else agents for s in range(players)]
        self.ready = asyncio.Event()
        self.game_id = ""
        self.tokens: dict[int, str] = {}


class Client:
    """One person at one table, playing through the API with their seat's token alone; records the
    latency of each of their moves."""

    def __init__(self, port: int, table: Table, seat: int, think: float) -> None:
        self.http = Connection(port)
        self.table, self.seat, self.think = table, seat, think
        self.latencies: list[float] = []
        self.turns: list[float] = []
        """Each wait for the others: from a move's answer until the client may move again."""
        self.errors: list[str] = []
        self.finished = False

    async def run(self, start: asyncio.Event) -> None:
        await start.wait()
        try:
            await self.play()
        except Exception as e:  # counted and reported, never hidden
            self.errors.append(f"{type(e).__name__}: {e}")
        finally:
            self.table.ready.set()  # (were the table not made, the others stop too)
            self.http.close()

    async def join(self) -> tuple[str, str] | None:
        """The game and this seat's token: the first person makes the table, the others get their link from them."""
        table = self.table
        if self.seat != table.people[0]:
            await table.ready.wait()
            return (table.game_id, table.tokens[self.seat]) if table.game_id else None
        body = {"preset": table.preset, "seats": table.seats, "seat": self.seat}
        status, answer = await self.http.request("POST", "/api/games", body)
        created = json.loads(answer)
        if status != 201:
            self.errors.append(f"new game: {status} {created}")
            return None
        table.game_id = created["id"]
        table.tokens = {seat: link.rsplit("token=", 1)[1] for seat, link in zip(table.people, created["seat_links"], strict=True)}
        table.ready.set()
        return table.game_id, table.tokens[self.seat]

    async def play(self) -> None:
        joined = await self.join()
        if joined is None:
            return
        game_id, token = joined
        status, answer = await self.http.request("GET", f"/api/games/{game_id}?token={token}")
        view = json.loads(answer)
        answered: float | None = None  # when the client's last move was answered
        while not (view["over"] or view["stopped"]):
            if view["error"]:
                self.errors.append(f"game error: {view['error']}")
                return
            if not view["legal"]:
                status, answer = await self.http.request(
                    "GET", f"/api/games/{game_id}?token={token}&after={view['revision']}&wait=20")
            else:
                if answered is not None:
                    self.turns.append(time.perf_counter() - answered)
                await asyncio.sleep(self.think)
                began = time.perf_counter()
                status, answer = await self.http.request("POST", f"/api/games/{game_id}/action?token={token}",
                                                         {"action": choose(view)})
                answered = time.perf_counter()
                self.latencies.append(answered - began)
            view = json.loads(answer)
            if status != 200:
                self.errors.append(f"{status} {view}")
                return
        self.finished = True


async def play_all(clients: list[Client]) -> None:
    start = asyncio.Event()
    tasks = [asyncio.create_task(client.run(start)) for client in clients]
    await asyncio.sleep(0)
    start.set()
    await asyncio.gather(*tasks)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=50, help="tables playing at once, a game each (default 50)")
    parser.add_argument("--people", type=int, default=1, choices=range(1, 5), metavar="P",
                        help="scripted people at each table, the others agents (1 to 4; default 1)")
    parser.add_argument("--preset", default="australian")
    parser.add_argument("--agents", default="heuristic", help="the agents' spec (default heuristic)")
    parser.add_argument("--workers", type=int, default=4, help="the server's agent threads (default 4)")
    parser.add_argument("--agent-processes", type=int, default=1,
                        help="the processes the server's agents think in (default 1, as serve's; 0: on its threads)")
    parser.add_argument("--agent-nice", type=int, metavar="N",
                        help="the agent processes' niceness below the server's (default: serve's, 10)")
    parser.add_argument("--think", type=float, default=0.0,
                        help="seconds each client waits before its move, as a person would (default 0: no wait)")
    parser.add_argument("--server-cpus", metavar="LIST", help="keep the server on these CPUs: 0, or 0,1 (Linux; default: all)")
    parser.add_argument("--json", metavar="OUT", help="write the figures as JSON")
    args = parser.parse_args(argv)
    from five_hundred_env.rules import make_rules

    players = make_rules(args.preset).num_players
    if args.people > players:
        parser.error(f"--people: a table of {args.preset} has {players} seats")
    port = free_port()
    with tempfile.TemporaryDirectory() as folder:
        cpus = None if args.server_cpus is None else {int(c) for c in args.server_cpus.split(",")}
        server = start_server(port, folder, args.games, args.workers, args.agent_processes, cpus, args.agent_nice)
        try:
            tables = [Table(args.preset, args.agents, players, args.people) for _ in range(args.games)]
            clients = [Client(port, table, seat, args.think) for table in tables for seat in table.people]
            agent_pids = agent_processes(server.pid)
            began, server_cpu, own_cpu = time.perf_counter(), cpu_seconds(server.pid), time.process_time()
            agents_cpu = sum(cpu_seconds(pid) for pid in agent_pids)
            asyncio.run(play_all(clients))
            wall = time.perf_counter() - began
            server_cpu, own_cpu = cpu_seconds(server.pid) - server_cpu, time.process_time() - own_cpu
            agents_cpu = sum(cpu_seconds(pid) for pid in agent_pids) - agents_cpu
        finally:
            server.terminate()
            server.wait(timeout=30)
    latencies = [x for c in clients for x in c.latencies]
    turns = [x for c in clients for x in c.turns]
    errors = [e for c in clients for e in c.errors]
    result = {
        "games": args.games, "people": args.people, "finished": sum(c.finished for c in clients) // args.people,
        "moves": len(latencies), "errors": len(errors),
        "moves_per_s": round(len(latencies) / wall, 1), "p50_ms": round(1000 * percentile(latencies, 0.5), 2),
        "p99_ms": round(1000 * percentile(latencies, 0.99), 2), "wall_s": round(wall, 1), "preset": args.preset,
        "agents_p50_ms": round(1000 * percentile(turns, 0.5), 2), "agents_p99_ms": round(1000 * percentile(turns, 0.99), 2),
        "agents": args.agents, "workers": args.workers, "agent_nice": args.agent_nice, "think_s": args.think,
        "cpus": os.cpu_count(),
        "server_cpus": args.server_cpus, "load_average": [round(x, 2) for x in os.getloadavg()],
        "server_cpu_s": round(server_cpu, 2), "clients_cpu_s": round(own_cpu, 2),
        "server_cpu_ms_per_move": round(1000 * server_cpu / max(1, len(latencies)), 2),
        "agent_processes": len(agent_pids), "agent_processes_cpu_s": round(agents_cpu, 2),
        "agent_processes_cpu_ms_per_move": round(1000 * agents_cpu / max(1, len(latencies)), 2),
        "requests_per_move": round(sum(c.http.requests for c in clients) / max(1, len(latencies)), 2),
    }
    for error in errors[:5]:
        print("error:", error)
    print(f"{result['games']} tables of {args.people} people at once ({result['finished']} games played to the end), "
          f"{result['moves']} human moves "
          f"in {result['wall_s']} s: {result['moves_per_s']} moves/s; latency of a human move p50 {result['p50_ms']} ms, "
          f"p99 {result['p99_ms']} ms; the others' turns (from a move's answer to the person's next turn) p50 "
          f"{result['agents_p50_ms']} ms, p99 {result['agents_p99_ms']} ms;\n{result['errors']} errors "
          f"({result['cpus']} CPUs, load average {result['load_average']}; "
          f"CPU time: the server {result['server_cpu_s']} s ({result['server_cpu_ms_per_move']} ms a human move), "
          f"the agents' {result['agent_processes']} processes {result['agent_processes_cpu_s']} s "
          f"({result['agent_processes_cpu_ms_per_move']} ms a human move), the clients {result['clients_cpu_s']} s; "
          f"{result['requests_per_move']} requests a human move)")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
        print(f"wrote {args.json}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
