"""House rules of the code base that a test can keep: no product file over 500 lines, and every
"§N" that the code, the tests and the docs cite names a section of the project's rules document."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PRODUCT = ("five_hundred_env", "agents", "training")


def test_no_product_file_over_500_lines() -> None:
    long = {str(p.relative_to(ROOT)): n for package in PRODUCT for p in (ROOT / package).rglob("*.py")
            if (n := len(p.read_text().splitlines())) > 500}
    assert not long, f"split these files (one file, one job): {long}"


def test_every_cited_section_exists_in_the_rules_document() -> None:
    """docs/rules.md is the rules document every "§N" points to (its headings are "## §N …",
    its readings "§11.k")."""
    rules = (ROOT / "docs" / "rules.md").read_text()
    sections = set(re.findall(r"^#+ §(\d+)", rules, flags=re.M)) | set(re.findall(r"§(11\.\d+)", rules))
    assert {str(n) for n in range(1, 12)} <= sections
    cited: dict[str, set[str]] = {}
    files = [p for d in (*PRODUCT, "tests", "docs", "benchmarks") for p in (ROOT / d).rglob("*") if p.suffix in (".py", ".md")]
    for path in [*files, ROOT / "README.md"]:
        for number in re.findall(r"§(\d+(?:\.\d+)?)", path.read_text()):
            cited.setdefault(number, set()).add(path.name)
    missing = {n: sorted(where) for n, where in cited.items() if n not in sections and n.split(".")[0] not in sections}
    assert not missing, f"sections cited but not in docs/rules.md: {missing}"
