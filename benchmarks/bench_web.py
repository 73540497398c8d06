"""Load benchmark of the web table (``five-hundred serve``): N games played at once through the HTTP API.

It starts its own server (a separate process, ``python -m training.cli serve``) on a free port of
127.0.0.1, with the agents' pace at 0, its games in a temporary folder (written to disk after
every move, as in use) and its agents thinking in one process of their own (``--agent-processes``,
as ``serve`` does; 0: on the server's threads); then N scripted clients start a game to 500 against agents each and play
it to the end (they bid whenever they may, so contracts are played and games end, and play their
first legal card), waiting for their turn by long polling. The clients share one asyncio loop in
this process, each with its own keep-alive HTTP/1.1 connection (a minimal client: httpx on a
thread per client took as much CPU as the server, on the same cores).

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


class Client:
    """One person playing one game through the API; records the latency of each of their moves."""

    def __init__(self, port: int, preset: str, agents: str, players: int, think: float) -> None:
        self.http = Connection(port)
        self.preset, self.agents, self.players, self.think = preset, agents, players, think
        self.latencies: list[float] = []
        self.turns: list[float] = []
        """Each wait for the agents: from a move's answer until the client may move again."""
        self.errors: list[str] = []
        self.finished = False

    async def run(self, start: asyncio.Event) -> None:
        await start.wait()
        try:
            await self.play()
        except Exception as e:  # counted and reported, never hidden
            self.errors.append(f"{type(e).__name__}: {e}")
        finally:
            self.http.close()

    async def play(self) -> None:
        body = {"preset": self.preset, "seat": 0, "agents": [self.agents] * self.players}
        status, answer = await self.http.request("POST", "/api/games", body)
        view = json.loads(answer)
        if status != 201:
            self.errors.append(f"new game: {status} {view}")
            return
        answered: float | None = None  # when the client's last move was answered
        while not (view["over"] or view["stopped"]):
            if view["error"]:
                self.errors.append(f"game error: {view['error']}")
                return
            if not view["legal"]:
                status, answer = await self.http.request("GET", f"/api/games/{view['id']}?after={view['revision']}&wait=20")
            else:
                if answered is not None:
                    self.turns.append(time.perf_counter() - answered)
                await asyncio.sleep(self.think)
                began = time.perf_counter()
                status, answer = await self.http.request("POST", f"/api/games/{view['id']}/action", {"action": choose(view)})
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
    parser.add_argument("--games", type=int, default=50, help="games played at once (default 50)")
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
    port = free_port()
    with tempfile.TemporaryDirectory() as folder:
        cpus = None if args.server_cpus is None else {int(c) for c in args.server_cpus.split(",")}
        server = start_server(port, folder, args.games, args.workers, args.agent_processes, cpus, args.agent_nice)
        try:
            clients = [Client(port, args.preset, args.agents, players, args.think) for _ in range(args.games)]
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
        "games": args.games, "finished": sum(c.finished for c in clients), "moves": len(latencies), "errors": len(errors),
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
    print(f"{result['games']} games at once ({result['finished']} played to the end), {result['moves']} human moves "
          f"in {result['wall_s']} s: {result['moves_per_s']} moves/s; latency of a human move p50 {result['p50_ms']} ms, "
          f"p99 {result['p99_ms']} ms; the agents' turns (from a move's answer to the client's next turn) p50 "
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
