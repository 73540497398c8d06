"""The documentation keeps its promises: every code block of README.md and docs/ runs (or is
checked), no page carries a path of the machine it was written on, the README fits one screen
and the guide's pages stay short, and every public name of the API reference has a docstring.

Code blocks, by their fence's language:

- ``python``: run, each in a fresh interpreter, in a scratch folder that holds a tiny trained
  checkpoint at ``runs/quickstart/final.pt`` (what the quickstart leaves), so that snippets that
  load "your run" run too. A block that would run a long job says so in a comment on the line
  before its fence, ``<!-- docs-test: replace "OLD" "NEW" -->`` (several pairs allowed): it runs
  with each OLD replaced by NEW, e.g. a learner's 100,000 steps by 256. A block that goes on from
  the one before it (its names, its state) says ``<!-- docs-test: continue -->``: it runs after it.
- ``bash``/``sh``: every command is checked without running it: ``five-hundred`` commands by the
  command line's own parser (and a config they name loads, with its overrides), ``python
  benchmarks/X.py --opt`` by the script's options, ``python -m M`` by the module's existence,
  ``pip install -e ".[extras]"`` by pyproject.toml's extras; files the commands name as inputs exist.
- ``<!-- docs-test: skip REASON -->`` before a fence leaves that block alone (a server address,
  a cluster): the reason is printed with the test's id.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import json
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
MARKER = re.compile(r"^<!--\s*docs-test:\s*(skip|replace|continue)\s*(.*?)\s*-->\s*$")
FENCE = re.compile(r"^(\s*)```(\{[\w-]+\}|[\w-]*)(?:\s.*)?$")  # a language, or a MyST directive
RUN_TIMEOUT_S = 600


@dataclass
class Block:
    """One fenced code block of a page."""

    page: Path
    line: int  # of the opening fence, 1-based
    language: str
    text: str
    skip: str | None = None
    replacements: list[tuple[str, str]] = field(default_factory=list)
    before: Block | None = None  # a ``continue`` block runs after the page's python block before it

    @property
    def id(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def code_blocks(page: Path) -> list[Block]:
    """The fenced blocks of a Markdown page, with the docs-test marker of the line before each."""
    lines = page.read_text(encoding="utf-8").split("\n")
    blocks, i = [], 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        indent, language = opening.groups()
        end = next(j for j in range(i + 1, len(lines)) if lines[j].strip() == "```")
        body = "\n".join(line[len(indent):] for line in lines[i + 1:end])
        block = Block(page, i + 1, language, body)
        marker = MARKER.match(lines[i - 1].strip()) if i else None
        if marker and marker.group(1) == "skip":
            block.skip = marker.group(2) or "marked"
        elif marker and marker.group(1) == "continue":
            block.before = next(b for b in reversed(blocks) if b.language == language)
        elif marker:
            block.replacements = list(zip(*[iter(shlex.split(marker.group(2)))] * 2, strict=True))
        blocks.append(block)
        i = end + 1
    return blocks


BLOCKS = [block for page in PAGES for block in code_blocks(page)]
PYTHON_BLOCKS = [b for b in BLOCKS if b.language == "python"]
SHELL_BLOCKS = [b for b in BLOCKS if b.language in ("bash", "sh")]


def test_every_block_is_python_shell_or_plain_text():
    """A block in another language would be neither run nor checked; output is written as plain text."""
    runnable = {"python", "bash", "sh", "", "text", "yaml", "console", "json"}
    strange = [f"{b.id} ({b.language})" for b in BLOCKS if b.language not in runnable and not b.language.startswith("{")]
    assert not strange, f"code blocks in a language this test neither runs nor checks: {strange}"


@pytest.mark.parametrize("block", [b for b in BLOCKS if b.language == "json"], ids=lambda b: b.id)
def test_json_blocks_parse(block):
    """A JSON example (a message of the bot protocol, a report) is one JSON value, as a reader would copy it."""
    json.loads(block.text)


# -- python blocks ----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    """A working folder as a user's would be after the quickstart: a checkpoint at runs/quickstart/final.pt."""
    from tests.network_helpers import write_checkpoint

    folder = tmp_path_factory.mktemp("docs")
    (folder / "runs" / "quickstart").mkdir(parents=True)
    write_checkpoint(folder / "runs" / "quickstart" / "final.pt")
    return folder


def runnable_source(block: Block) -> str:
    """The block's code as the test runs it: after the block it continues, with its replacements made."""
    source = block.text if block.before is None else runnable_source(block.before) + "\n" + block.text
    for old, new in block.replacements:
        assert old in source, f"{block.id}: the docs-test marker replaces {old!r}, which the block does not hold"
        source = source.replace(old, new)
    return source


@pytest.mark.parametrize("block", PYTHON_BLOCKS, ids=[b.id for b in PYTHON_BLOCKS])
def test_python_block_runs(block: Block, scratch: Path):
    if block.skip:
        pytest.skip(block.skip)
    source = runnable_source(block)
    compile(source, block.id, "exec")  # a SyntaxError names the block before a process is started
    script = scratch / "block.py"  # a file, as a user copies it (worker processes re-import a script, not `-c`)
    script.write_text(source)
    done = subprocess.run([sys.executable, str(script)], cwd=scratch, capture_output=True, text=True,
                          timeout=RUN_TIMEOUT_S, env={**_environment(), "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, f"{block.id} failed:\n{done.stderr[-3000:]}"


def _environment() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


# -- shell blocks -----------------------------------------------------------------------------------
def shell_commands(text: str) -> list[list[str]]:
    """The commands of a shell block: continuation lines joined, comments dropped, ``&&`` chains
    and ``cmd > file``/``&`` endings split off."""
    joined = re.sub(r"\\\n\s*", " ", text)
    commands = []
    for line in joined.split("\n"):
        words = shlex.split(line, comments=True)
        current: list[str] = []
        redirected = False  # the word after `>` is the file written, not an argument
        for word in [*words, "&&"]:
            if word in ("&&", "&", "||", ";"):
                if current:
                    commands.append(current)
                current, redirected = [], False
            elif redirected:
                redirected = False
            elif word.startswith((">", "2>")):
                redirected = word in (">", "2>")
            else:
                current.append(word)
    return commands


def _extras() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return set(project["optional-dependencies"])


def check_five_hundred(words: list[str]) -> None:
    """The command line's parser takes the words; a config a train or exit command names loads."""
    from training.cli import build_parser

    if words[:1] == ["exit"]:  # the command line hands these words to expert iteration's own parser
        from training.algorithms.expert_iteration import load_exit_config

        config, *rest = words[1:]
        load_exit_config(config, [w for w in rest if "=" in w and not w.startswith("-")])
        return
    parser = build_parser()
    try:
        args = parser.parse_args(words)
    except SystemExit as stop:
        if stop.code not in (0, None):  # --help exits 0
            raise AssertionError(f"five-hundred {' '.join(words)}: the parser refused it") from None
        return
    command = words[0] if words else ""
    if command == "train":
        from training.cli import _take_valued_options
        from training.settings.run_configs import load_training_config

        load_training_config(args.config, [w for w in _take_valued_options(args.overrides)[0] if not w.startswith("-")])


def check_python_command(words: list[str]) -> None:
    """``python X.py --opt`` names a script that has those options; ``python -m M`` an importable module."""
    if words[:2] == ["-m", "training.cli"]:  # the five-hundred command itself
        check_five_hundred(words[2:])
        return
    if words[:1] == ["-m"]:
        module = words[1]
        if module in ("venv", "pytest", "pip", "sphinx"):
            return
        assert importlib.util.find_spec(module) is not None, f"python -m {module}: no such module"
        source = inspect.getsource(importlib.import_module(module))
    else:
        script = ROOT / words[0]
        assert script.is_file(), f"python {words[0]}: no such script"
        source = script.read_text()
    for option in (w.split("=", 1)[0] for w in words if w.startswith("--")):
        assert f'"{option}"' in source, f"python {' '.join(words)}: the script has no option {option}"


def check_shell_command(words: list[str]) -> None:
    program, rest = words[0], words[1:]
    if program in ("PYTHONPATH=.",):
        program, rest = rest[0], rest[1:]
    if program == "five-hundred":
        check_five_hundred(rest)
    elif program in ("python", "python3"):
        check_python_command(rest)
    elif program == "pip" and "-e" in rest:
        target = rest[rest.index("-e") + 1]
        wanted = set(re.findall(r"\[(.*)\]", target)[0].split(",")) if "[" in target else set()
        assert wanted <= _extras(), f"pip install {target}: no extra {sorted(wanted - _extras())} in pyproject.toml"
    elif program == "nohup":
        check_shell_command(rest)
    # Anything else (git, mkdir, tensorboard, ruff, lint-imports, activate) is the user's shell.


@pytest.mark.parametrize("block", SHELL_BLOCKS, ids=[b.id for b in SHELL_BLOCKS])
def test_shell_block_commands_are_real(block: Block):
    if block.skip:
        pytest.skip(block.skip)
    commands = shell_commands(block.text)
    assert commands, f"{block.id}: an empty shell block"
    for words in commands:
        check_shell_command(words)


def test_the_shell_check_refuses_what_it_should():
    """The checks fail on the mistakes they are there for (an unknown option, a missing config, an override of a
    key that does not exist, a benchmark option that is not there, an extra that is not there)."""
    for broken in ("five-hundred evaluate heuristic random --dealz 3", "five-hundred train configs/nothing.yaml",
                   "five-hundred train configs/quickstart.yaml train.no_such_key=1",
                   "python benchmarks/bench_engine.py --no-such-option", "pip install -e .[nothing]"):
        with pytest.raises((AssertionError, ValueError, OSError)):
            check_shell_command(shell_commands(broken)[0])


def test_markers_are_read(tmp_path):
    page = tmp_path / "page.md"
    page.write_text('<!-- docs-test: replace "100_000" "256" "64" "8" -->\n```python\nx = 100_000 * 64\n```\n\n'
                    '<!-- docs-test: skip needs a server -->\n```bash\ncurl x\n```\n')
    replaced, skipped = code_blocks(page)
    assert runnable_source(replaced) == "x = 256 * 8" and replaced.skip is None
    assert skipped.skip == "needs a server" and skipped.language == "bash"
    page.write_text('```python\nx = 1\n```\n<!-- docs-test: continue -->\n```python\nprint(x)\n```\n')
    first, then = code_blocks(page)
    assert then.before is first and runnable_source(then) == "x = 1\nprint(x)"


# -- the pages themselves -------------------------------------------------------------------------
MACHINE_PATH = re.compile(r"(?<![\w.~-])(/(work|home|root|Users|mnt|tmp|opt)/\w|[A-Z]:\\\\?\w)")
CHECKED_FOR_PATHS = [ROOT / "README.md", *sorted(p for p in (ROOT / "docs").rglob("*")
                                                 if p.suffix in (".md", ".json", ".py", ".yaml")),
                     *sorted((ROOT / "configs").glob("*.yaml"))]


def test_no_machine_paths():
    """A path of the machine a page was written on (a home, a scratch folder) means nothing to a reader."""
    found = [f"{p.relative_to(ROOT)}:{n}: {line.strip()[:100]}"
             for p in CHECKED_FOR_PATHS for n, line in enumerate(p.read_text(encoding="utf-8").split("\n"), 1)
             if MACHINE_PATH.search(line)]
    assert not found, "machine paths in the docs:\n" + "\n".join(found)


def test_machine_path_pattern():
    assert MACHINE_PATH.search("--out /work/run/x.md") and MACHINE_PATH.search("cd /home/me")
    assert not MACHINE_PATH.search("docs/notes/x.md, runs/work/, /dev/full, https://a.b/home/")


README_LINES, PAGE_LINES = 170, 450


def test_the_readme_fits_one_screen():
    lines = len((ROOT / "README.md").read_text(encoding="utf-8").split("\n"))
    assert lines <= README_LINES, f"README.md has {lines} lines (at most {README_LINES}: histories go to docs/notes/)"


def test_guide_pages_stay_short():
    """Histories of measurement rounds go to dated notes (docs/notes/); the rules are the one long page."""
    long = {p.relative_to(ROOT).as_posix(): n for p in (ROOT / "docs").glob("*.md")
            if p.name != "rules.md" and (n := len(p.read_text(encoding="utf-8").split("\n"))) > PAGE_LINES}
    assert not long, f"pages over {PAGE_LINES} lines (move their histories to docs/notes/): {long}"


def test_every_note_is_dated_and_linked():
    pages_text = "\n".join(p.read_text(encoding="utf-8") for p in PAGES)
    for note in (ROOT / "docs" / "notes").glob("*.md"):
        assert re.match(r"\d{4}-\d{2}-\d{2}-", note.name), f"{note.name}: a note's name starts with its date"
        assert f"notes/{note.name}" in pages_text, f"docs/notes/{note.name} is linked from no page"


# -- the API reference ----------------------------------------------------------------------------
def api_modules() -> dict[str, list[str] | None]:
    """The modules the API reference documents (every ``.. automodule::`` of docs/api/), each with the
    members its ``:members:`` option names (``None``: all of them)."""
    found: dict[str, list[str] | None] = {}
    for page in sorted((ROOT / "docs" / "api").glob("*.md")):
        for module, members in re.findall(r"^\.\. automodule:: ([\w.]+)\n\s+:members:(.*)$", page.read_text(), re.M):
            found[module] = [m.strip() for m in members.split(",")] if members.strip() else None
    return found


def public_names(module_name: str, members: list[str] | None = None) -> list[tuple[str, object]]:
    """What autodoc shows of a module: the members named, else ``__all__``, else its public functions and
    classes defined there; with the public methods and properties of each class."""
    module = importlib.import_module(module_name)
    names = members or getattr(module, "__all__", None) or [
        n for n, v in vars(module).items()
        if not n.startswith("_") and (inspect.isfunction(v) or inspect.isclass(v)) and v.__module__ == module_name]
    found = []
    for name in names:
        value = getattr(module, name)
        if not (inspect.isfunction(value) or inspect.isclass(value)):
            continue
        found.append((f"{module_name}.{name}", value))
        if inspect.isclass(value):
            found += [(f"{module_name}.{name}.{m}", v) for m, v in vars(value).items()
                      if not m.startswith("_") and (inspect.isfunction(v) or isinstance(v, (property, classmethod,
                                                                                            staticmethod)))]
    return found


def test_the_api_reference_covers_the_public_modules():
    modules = api_modules()
    for wanted in ("five_hundred_env", "five_hundred_env.vector", "agents", "training.cli"):
        assert wanted in modules, f"docs/api/ documents no module {wanted}"


def test_every_public_name_of_the_api_reference_has_a_docstring():
    missing = []
    for module_name, members in api_modules().items():
        assert importlib.import_module(module_name).__doc__, f"{module_name} has no docstring"
        for qualified, value in public_names(module_name, members):
            inner = value.fget if isinstance(value, property) else getattr(value, "__func__", value)
            if not inspect.getdoc(inner):
                missing.append(qualified)
    assert not missing, f"public names of the API reference without a docstring: {missing}"


def test_the_docstring_check_sees_a_missing_docstring(tmp_path, monkeypatch):
    (tmp_path / "undocumented_module.py").write_text('"""A module."""\n\ndef shown(x):\n    return x\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    names = public_names("undocumented_module")
    assert [n for n, v in names if not inspect.getdoc(v)] == ["undocumented_module.shown"]


def test_python_blocks_are_python():
    """A signature or a transcript in a python fence fails when copied; it belongs in a text block."""
    for block in PYTHON_BLOCKS:
        try:
            ast.parse(runnable_source(block))
        except SyntaxError as error:
            pytest.fail(f"{block.id}: not Python ({error.msg}, line {error.lineno}): write it as a text block")
