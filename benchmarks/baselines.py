"""Baselines from a random start: each algorithm trained for the same CPU budget, evaluated along the way.

    python benchmarks/baselines.py --minutes 2 --seeds 1 --presets australian --out runs/baselines.md

For every preset, algorithm and seed: a run from a random start (no imitation, no heuristic
advice in the network) trained in chunks until ``--minutes`` of this process's CPU time have
gone into training (evaluation not counted), its checkpoint evaluated in duplicate against
``random`` and ``heuristic`` (``--eval-deals`` boards, one seed for every row) at ``--points``
moments along the way. Algorithms (``--algorithms``):

* ``ppo``: ``training.algorithms.ppo`` (the default config's PPO, self-play with a snapshot pool and
  random/heuristic opponents, ``network.advice: none``, no warm start);
* ``dmc``: ``training.algorithms.dmc`` (the defaults of ``configs/dmc_australian.yaml``);
* ``scratch``: the tabula-rasa recipe, ``configs/scratch_australian.yaml`` (DMC with its curriculum,
  docs/scratch.md), the preset changed;
* ``maskable_ppo``: sb3-contrib's ``MaskablePPO`` on ``gymnasium.make("FiveHundred-v1")`` (one
  side against heuristic opponents), its defaults;
* ``rllib_ppo``: RLlib's PPO on the adapter ``five_hundred_env.integrations.rllib``, set up by
  docs/examples/rllib_ppo.py's ``build_config`` (one masked policy in every seat, sampling and
  learning in this process), its module played greedily as an agent.

Writes ``--out`` (the table: mean over seeds and the spread, CPU-minutes, learner steps; and for
reference the heuristic, the shipped ``pretrained`` network and ``pimc`` over ``--pimc-deals``
boards), one plot per preset beside it (``baselines_<preset>.png``: the score against
CPU-minutes) and ``--json`` (every evaluation point). Both are written again as each run finishes, so
a crash or a stop keeps the rows done; the same command run again resumes from ``--json``, training only
the runs it lacks (a run that failed, e.g. Ray not starting, is reported and the others go on).
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from agents.base import Agent
from five_hundred_env.files import write_atomic

Log = Callable[[str], None]
OPPONENTS = ("random", "heuristic")


def quiet(_: str) -> None:
    """Training messages are not this report's."""


class PPORun:
    """``training.algorithms.ppo`` from a random start, advanced a few updates at a time (``--resume``)."""

    chunk_updates = 2

    def __init__(self, preset: str, seed: int, folder: Path) -> None:
        from training.settings.config import config_from_dict

        self.config = config_from_dict({
            "seed": seed, "rules": {"preset": preset},
            "train": {"total_steps": 10**12, "anneal_lr": False, "num_envs": 32, "num_steps": 64},
            "network": {"advice": "none"},
            "evaluation": {"interval": 0, "final_deals": 0},
            "logging": {"dir": str(folder), "run_name": f"ppo_{preset}_{seed}", "tensorboard": False, "progress": False},
        })
        self.started, self.steps = False, 0

    def advance(self) -> None:
        from training.algorithms.ppo import train

        result = train(self.config, resume=self.started, stop_after_updates=self.chunk_updates, log=quiet)
        self.started, self.steps = True, result.global_step

    def agent(self) -> str:
        from training.records.runs import checkpoint_dir_of

        return str(checkpoint_dir_of(self.config) / "latest.pt")  # type: ignore[arg-type]


class DMCRun(PPORun):
    """``training.algorithms.dmc`` from a random start, a few updates at a time, with the settings of ``recipe``."""

    chunk_updates = 3
    recipe, name = "dmc_australian.yaml", "dmc"

    def __init__(self, preset: str, seed: int, folder: Path) -> None:
        from training.settings.config import config_from_dict, load_config
        from training.settings.dmc_config import DmcConfig

        defaults = load_config(Path(__file__).parent.parent / "configs" / self.recipe, model=DmcConfig).to_dict()
        defaults.update(seed=seed, rules={"preset": preset, "options": {}})
        defaults["train"]["total_steps"] = 10**12
        defaults["evaluation"].update(interval=0, final_deals=0)
        defaults["logging"].update(dir=str(folder), run_name=f"{self.name}_{preset}_{seed}", tensorboard=False,
                                   progress=False)
        self.config = config_from_dict(defaults, model=DmcConfig)  # type: ignore[assignment]
        self.started, self.steps = False, 0

    def advance(self) -> None:
        from training.algorithms.dmc import train_dmc

        result = train_dmc(self.config, resume=self.started, stop_after_updates=self.chunk_updates, log=quiet)  # type: ignore[arg-type]
        self.started, self.steps = True, result.global_step


class ScratchRun(DMCRun):
    """The tabula-rasa recipe (``configs/scratch_australian.yaml``: DMC with its curriculum), the preset changed."""

    recipe, name = "scratch_australian.yaml", "scratch"


class MaskablePPORun:
    """sb3-contrib's MaskablePPO on the Gymnasium environment, one side against the heuristic."""

    chunk_steps = 2048

    def __init__(self, preset: str, seed: int, folder: Path) -> None:
        import gymnasium
        from sb3_contrib import MaskablePPO

        from agents.registry import make_agent

        env = gymnasium.make("FiveHundred-v1", team=0, rules=preset, opponents=make_agent("heuristic", preset, seed))
        self.model = MaskablePPO("MlpPolicy", env, seed=seed, verbose=0)
        self.path = folder / f"maskable_ppo_{preset}_{seed}.zip"
        self.steps = 0

    def advance(self) -> None:
        self.model.learn(self.chunk_steps, reset_num_timesteps=False)
        self.steps = int(self.model.num_timesteps)

    def agent(self) -> str:
        self.model.save(self.path)
        return str(self.path)


def rllib_example() -> Any:
    """docs/examples/rllib_ppo.py as a module: its ``build_config`` is the RLlib setup this run trains."""
    import importlib.util

    path = Path(__file__).parent.parent / "docs" / "examples" / "rllib_ppo.py"
    spec = importlib.util.spec_from_file_location("rllib_ppo_example", path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


class RLlibPolicyAgent(Agent):
    """An RLlib ``ActionMaskingTorchRLModule`` as an agent: greedy (its most probable legal action),
    as the project's evaluations play the other checkpoints."""

    name = "rllib_ppo"

    def __init__(self, module: Any, rules: str, seed: int | None = None) -> None:
        super().__init__(rules, seed)
        self.module = module

    def act(self, observation: dict[str, Any]) -> int:
        import torch
        from ray.rllib.core.columns import Columns

        mask = observation["action_mask"]
        batch = {Columns.OBS: {"observations": torch.as_tensor(observation["observation"], dtype=torch.float32)[None],
                               "action_mask": torch.as_tensor(mask, dtype=torch.float32)[None]}}
        with torch.no_grad():
            logits = self.module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS][0].numpy()
        return int(np.argmax(np.where(mask > 0, logits, -np.inf)))


class RLlibPPORun:
    """RLlib's PPO through the adapter (docs/examples/rllib_ppo.py's ``build_config``: one masked policy
    shared by every seat, ``reward="score"``, sampling and learning in this process), one iteration at a time."""

    batch_size = 2000

    def __init__(self, preset: str, seed: int, folder: Path) -> None:
        import ray

        example = rllib_example()
        self.preset, self.policy_id = preset, example.SHARED_POLICY
        if not ray.is_initialized():  # one local Ray for every run of the process; no dashboard, one CPU
            ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False, configure_logging=False)
        self.algo = example.build_config(batch_size=self.batch_size, minibatch_size=250, seed=seed, rules=preset).build_algo()
        self.steps = 0

    def advance(self) -> None:
        from ray.rllib.utils.metrics import NUM_ENV_STEPS_SAMPLED_LIFETIME

        result = self.algo.train()
        self.steps = int(result["env_runners"][NUM_ENV_STEPS_SAMPLED_LIFETIME])

    def agent(self) -> RLlibPolicyAgent:
        return RLlibPolicyAgent(self.algo.get_module(self.policy_id), self.preset)

    def close(self) -> None:
        self.algo.stop()


RUNS = {"ppo": PPORun, "dmc": DMCRun, "maskable_ppo": MaskablePPORun, "rllib_ppo": RLlibPPORun, "scratch": ScratchRun}

NOTES = [
    "## What these runs are",
    "",
    "- **ppo**: `training.algorithms.ppo` with the default config but `network.advice: none`, `num_envs: 32`, `num_steps: 64`,",
    "  no learning-rate annealing and no warm start (self-play, a snapshot pool, random and heuristic opponents).",
    "- **dmc**: `training.algorithms.dmc` with `configs/dmc_australian.yaml`'s settings (docs/dmc.md), the preset changed.",
    "- **scratch**: the tabula-rasa recipe, `configs/scratch_australian.yaml` (DMC with a curriculum, docs/scratch.md), the",
    "  preset changed; at these budgets its curriculum has barely begun to fade (it spans 100 M learner steps).",
    "- **maskable_ppo**: sb3-contrib's `MaskablePPO` (`MlpPolicy`, its defaults) on",
    "  `gymnasium.make(\"FiveHundred-v1\", team=0, opponents=heuristic)`: one side against heuristic opponents.",
    "- **rllib_ppo**: RLlib's PPO (new API stack) on `five_hundred_env.integrations.rllib.FiveHundredMultiAgentEnv`,",
    "  built by docs/examples/rllib_ppo.py's `build_config` (one masked policy in every seat, `reward=\"score\"`,",
    "  2,000 agent steps per iteration, minibatches of 250, sampling and learning in this process on a local",
    "  one-CPU Ray); evaluated by the project's duplicate evaluator with its module wrapped as an agent",
    "  (`RLlibPolicyAgent`, greedy). Ray's own processes (raylet, GCS) are not in its CPU budget; its start",
    "  (about 10 s wall-clock) is not either.",
    "- The references: the heuristic, the shipped `pretrained` network and `pimc` (search, its defaults) played",
    "  by the same evaluator, with their 95% intervals; `pimc` over fewer boards (`--pimc-deals`: seconds per board).",
    "- Reading the scores: on `australian`, about +500 against random together with a loss to the heuristic is",
    "  what a player that never bids scores (random's contracts fail, the heuristic's go unopposed): the plateau",
    "  every short run here reached first (docs/dmc.md measures DMC on it for a million learner steps).",
    "- The budget is this process's CPU time spent training (one torch thread); the evaluations are not counted.",
    "  Learner steps are the decisions each algorithm trained on (for MaskablePPO and RLlib, environment steps).",
    "  A cold numba cache (a fresh checkout) compiles the batched engine inside the first run's budget.",
    "",
    "## The full run, the short setting, the tests",
    "",
    "- **The full run** of issue 21 (every algorithm, 2 seeds, 4 CPU-minutes of training a run, `australian` and",
    "  `italian_3p`): one process per preset, side by side on the 2 cores, then one table from both JSON files:",
    "",
    *(f"      python benchmarks/baselines.py --minutes 4 --seeds 2 --presets {p} --points 3 --eval-deals 200"
      f" --pimc-deals 40 --out runs/baselines_{p}.md" for p in ("australian", "italian_3p")),
    "      python benchmarks/baselines.py --from-json runs/baselines_australian.json runs/baselines_italian_3p.json",
    "",
    "  Its wall-clock is the longer process's (above, when this page is the full run); on one core, run them one",
    "  after the other: about twice that.",
    "- **The short setting** (one seed, about a CPU-minute a run; about 18 minutes on the loaded 2-core machine):",
    "  `--minutes 1 --seeds 1 --presets australian italian_3p --points 2 --eval-deals 100 --pimc-deals 20`. Its",
    "  figures say where each algorithm stands after a few CPU-minutes, not where it ends.",
    "- **The tests** run the same code at a tiny budget (`tests/test_baselines.py`: every algorithm, 0.2",
    "  CPU-minutes, 24 boards, must beat a random start against random).",
    "",
]


def evaluate(agent: str | Agent, preset: str, deals: int, seed: int) -> dict[str, list[float]]:
    """``agent``'s (an agent spec or an agent) duplicate score per deal against each opponent: [mean, ci low, ci high]."""
    from agents.registry import make_agent
    from training.evaluation.evaluate import duplicate_match

    player = make_agent(agent, preset, seed) if isinstance(agent, str) else agent
    scores = {}
    for opponent in OPPONENTS:
        report = duplicate_match(preset, player, make_agent(opponent, preset, seed + 1), deals, seed=seed)
        d = report.to_dict()["score_diff_per_deal"]
        scores[opponent] = [float(d["mean"]), float(d["ci95"][0]), float(d["ci95"][1])]
    return scores


def train_and_evaluate(algorithm: str, preset: str, seed: int, minutes: float, points: int, deals: int,
                       folder: Path, log: Log) -> dict[str, Any]:
    """One run: its evaluation points (CPU-minutes of training, learner steps, scores)."""
    run = RUNS[algorithm](preset, seed, folder)
    budget, used, curve = minutes * 60, 0.0, []
    try:
        for k in range(1, points + 1):
            while used < budget * k / points:
                start = time.process_time()
                run.advance()
                used += time.process_time() - start
            scores = evaluate(run.agent(), preset, deals, 9000 + seed)
            curve.append({"cpu_minutes": used / 60, "steps": run.steps, **scores})
            log(f"{algorithm} {preset} seed {seed}: {used / 60:.1f} CPU-min, {run.steps} steps, "
                f"vs random {scores['random'][0]:+.0f}, vs heuristic {scores['heuristic'][0]:+.0f}")
    finally:
        if hasattr(run, "close"):  # RLlib's algorithm holds actors and threads
            run.close()
    return {"algorithm": algorithm, "preset": preset, "seed": seed, "curve": curve}


def reference_rows(presets: list[str], deals: int, pimc_deals: int, log: Log) -> list[dict[str, Any]]:
    """The reference agents' scores: ``heuristic`` and ``pretrained`` over ``deals`` boards, ``pimc``
    (its defaults: seconds per board) over ``pimc_deals``; a preset without a shipped network has no
    ``pretrained`` row."""
    rows = []
    for preset in presets:
        for spec, boards in (("heuristic", deals), ("pretrained", deals), ("pimc", pimc_deals)):
            if boards == 0:
                continue
            try:
                scores = evaluate(spec, preset, boards, 9000)
            except (ValueError, FileNotFoundError) as e:  # no shipped network for this preset
                log(f"reference {spec} on {preset}: not available ({e})")
                continue
            rows.append({"agent": spec, "preset": preset, "deals": boards, **scores})
            log(f"reference {spec} {preset} ({boards} boards): vs random {scores['random'][0]:+.0f}, "
                f"vs heuristic {scores['heuristic'][0]:+.0f}")
    return rows


def fmt(values: list[float]) -> str:
    """Mean over seeds, and the spread (min..max) when there are several."""
    mean = float(np.mean(values))
    return f"{mean:+.0f}" if len(values) == 1 else f"{mean:+.0f} ({min(values):+.0f}..{max(values):+.0f})"


def write_report(results: list[dict[str, Any]], references: list[dict[str, Any]], args: argparse.Namespace,
                 commands: list[str], wall_s: float) -> None:
    """``--out`` (the table and the notes) and a plot per preset, from the runs of ``commands`` (several:
    processes run side by side, ``wall_s`` the longest)."""
    out = Path(args.out)
    lines = [
        "# Baselines from a random start",
        "",
        "What standard RL reaches on this game from a **random start** (no imitation, no heuristic advice),",
        "per CPU budget. Every number below was printed by "
        + ("this command (its JSON beside it):" if len(commands) == 1 else
           f"these {len(commands)} commands, run side by side, one process each (their JSON beside it):"),
        "",
        *(f"    {command}" for command in commands),
        "",
        f"It took {wall_s / 60:.0f} minutes of wall-clock on the 2-core machine it ran on (shared with other jobs).",
        f"Scores are duplicate points per deal ({args.eval_deals} boards, seed 9000 + the run's seed; 95% intervals in",
        f"the JSON), the mean over the {args.seeds} seed(s) with the spread (min..max) when there are several.",
        "",
        "| algorithm | preset | vs random | vs heuristic | CPU-minutes | learner steps |",
        "|---|---|---|---|---|---|",
    ]
    for preset in args.presets:
        for algorithm in args.algorithms:
            finals = [r["curve"][-1] for r in results if r["preset"] == preset and r["algorithm"] == algorithm]
            if finals:
                lines.append(f"| {algorithm} | {preset} | {fmt([f['random'][0] for f in finals])} | "
                             f"{fmt([f['heuristic'][0] for f in finals])} | {np.mean([f['cpu_minutes'] for f in finals]):.1f} | "
                             f"{int(np.mean([f['steps'] for f in finals])):,} |")
        for ref in references:
            if ref["preset"] == preset:
                scores = " | ".join(f"{ref[o][0]:+.0f} [{ref[o][1]:+.0f}, {ref[o][2]:+.0f}]" for o in OPPONENTS)
                lines.append(f"| *{ref['agent']}* (reference, {ref.get('deals', args.eval_deals)} boards) | {preset} | "
                             f"{scores} | – | – |")
    lines += ["", "Plots: " + ", ".join(f"[{p}](baselines_{p}.png)" for p in args.presets) + ".", "", *NOTES]
    out.write_text("\n".join(lines) + "\n")
    plot(results, args.presets, out.parent)


def plot(results: list[dict[str, Any]], presets: list[str], folder: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    for preset in presets:
        fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharex=True)
        for r in (r for r in results if r["preset"] == preset):
            x = [p["cpu_minutes"] for p in r["curve"]]
            for ax, opponent in zip(axes, OPPONENTS, strict=True):
                ax.plot(x, [p[opponent][0] for p in r["curve"]], marker="o", label=f"{r['algorithm']} seed {r['seed']}")
        for ax, opponent in zip(axes, OPPONENTS, strict=True):
            ax.set(title=f"{preset}: vs {opponent}", xlabel="training CPU-minutes", ylabel="duplicate points per deal")
            ax.axhline(0, color="grey", lw=0.5)
        axes[0].legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(folder / f"baselines_{preset}.png", dpi=80)
        plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=2.0,
                        help="training CPU-minutes per run (the smallest that runs every phase: 0.2, what the tests use; "
                             "1 for the short setting, 4 for the full run)")
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--presets", nargs="+", default=["australian"])
    parser.add_argument("--algorithms", nargs="+", default=list(RUNS), choices=list(RUNS))
    parser.add_argument("--points", type=int, default=3, help="evaluations along each run")
    parser.add_argument("--eval-deals", type=int, default=200)
    parser.add_argument("--pimc-deals", type=int, default=40, help="boards of the pimc reference row (0: none)")
    parser.add_argument("--out", default="runs/baselines.md",
                        help="the table (default: %(default)s; docs/baselines.md is the published one)")
    parser.add_argument("--json", default=None, help="default: --out with .json")
    parser.add_argument("--from-json", nargs="+", default=None,
                        help="write --out again from runs' JSON files (no training); several: runs made side by side, "
                             "e.g. one process per preset, in one table")
    args = parser.parse_args(argv)
    if args.eval_deals < 2 or args.pimc_deals == 1 or args.pimc_deals < 0:
        parser.error("--eval-deals needs at least 2 boards and --pimc-deals 0 or at least 2 (an interval needs two)")
    if args.from_json:
        runs = [json.loads(Path(f).read_text()) for f in args.from_json]
        ran = [parser.parse_args(shlex.split(data["command"])[2:]) for data in runs]
        if len({(r.seeds, r.eval_deals, tuple(r.algorithms)) for r in ran}) > 1:
            parser.error("--from-json: the runs differ in --seeds, --eval-deals or --algorithms; one table needs them equal")
        merged = ran[0]
        merged.out, merged.presets = args.out, [p for r in ran for p in r.presets]
        write_report([x for data in runs for x in data["runs"]], [x for data in runs for x in data["references"]], merged,
                     [data["command"] for data in runs], max(data["wall_s"] for data in runs))
        return 0
    import torch

    torch.set_num_threads(1)
    command = shown_command(sys.argv[1:] if argv is None else argv)
    json_path = Path(args.json or Path(args.out).with_suffix(".json"))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    done = resumed(json_path, command, parser)
    results, references, wall_before = done["runs"], done["references"], done["wall_s"]
    started = time.time()

    def save() -> None:
        """The JSON and the table as they stand: a crash or a stop after this keeps every finished run."""
        wall = wall_before + time.time() - started
        text = json.dumps({"command": command, "wall_s": wall, "runs": results, "references": references}, indent=1)
        write_atomic(json_path, lambda f: f.write(text.encode()))
        write_report(results, references, args, [command], wall)

    failed = []
    with tempfile.TemporaryDirectory() as folder:
        for preset in args.presets:
            for algorithm in args.algorithms:
                for seed in range(1, args.seeds + 1):
                    if any((r["preset"], r["algorithm"], r["seed"]) == (preset, algorithm, seed) for r in results):
                        continue  # resumed: this run is in the JSON already
                    try:
                        results.append(train_and_evaluate(algorithm, preset, seed, args.minutes, args.points,
                                                          args.eval_deals, Path(folder), print))
                    except Exception as error:  # one algorithm's failure (Ray not starting) costs its row alone
                        failed.append(f"{algorithm} on {preset}, seed {seed}")
                        print(f"baselines: {failed[-1]} failed ({type(error).__name__}: {error}); the others go on")
                        continue
                    save()
    if not references:
        references = reference_rows(args.presets, args.eval_deals, args.pimc_deals, print)
    save()
    print(f"wrote {args.out} and {json_path} in {(time.time() - started) / 60:.1f} minutes")
    if failed:
        print(f"baselines: {len(failed)} run(s) failed ({'; '.join(failed)}): run the same command again to retry them")
        return 1
    return 0


def shown_command(argv: list[str]) -> str:
    """The command as the report shows it: a file given by an absolute path is shown by its name alone
    (the report tells how to run it, not where on one machine it ran)."""
    words = [Path(w).name if Path(w).is_absolute() else w for w in argv]
    return "python benchmarks/baselines.py " + " ".join(words)


def resumed(json_path: Path, command: str, parser: argparse.ArgumentParser) -> dict[str, Any]:
    """What an earlier run of the same command left in ``json_path`` (nothing when it does not exist)."""
    if not json_path.exists():
        return {"runs": [], "references": [], "wall_s": 0.0}
    try:
        data = json.loads(json_path.read_text())
        ran = data["command"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        parser.error(f"{json_path} is not a baselines JSON to resume from ({error}): give another --out or --json")
    if ran != command:
        parser.error(f"{json_path} holds the runs of another command ({ran}): give another --out or --json to start anew")
    print(f"resuming from {json_path}: {len(data['runs'])} run(s) done")
    return data


if __name__ == "__main__":
    sys.exit(main())
