"""Sphinx configuration of the documentation site: the user's guide (Markdown, through MyST), the
rules, and the API reference built from the docstrings (autodoc).

The source folder is the repository's root, so that README.md is a page of the site and the links
between it and docs/ work as they do on a forge; only README.md and docs/ are read. Build it with
(the ``docs`` extra)::

    python -m sphinx -W --keep-going -c docs -b html . docs/_build/html

``.ci/run`` does so with warnings as errors, so that a broken link or a renamed function fails CI.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the packages of this checkout, installed or not

project = "five-hundred-env"
author = "the five-hundred-env authors"
copyright = "the five-hundred-env authors"

extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.viewcode"]
source_suffix = {".md": "markdown"}
root_doc = "docs/index"
include_patterns = ["README.md", "docs/**"]
exclude_patterns = ["docs/_build", "docs/examples"]

myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 4  # links to a section by its slug: docs/configs.md#threads

autodoc_default_options = {"show-inheritance": True}
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_mock_imports: list[str] = []

html_theme = "furo"
html_title = "five-hundred-env"


def _list_every_guide_page(app, docname, source):
    """The guide's toctree (docs/index.md) names its pages in reading order; a page of docs/ it does
    not name yet (one a branch adds) is appended to it, so that no page is left out of the site."""
    if docname != "docs/index":
        return
    text = source[0]
    start = text.index(":caption: User's guide")
    end = text.index("```", start)
    named = set(text[start:end].split())
    extra = sorted(p.stem for p in (ROOT / "docs").glob("*.md") if p.stem != "index" and p.stem not in named)
    source[0] = text[:end] + "".join(f"{name}\n" for name in extra) + text[end:]


def setup(app):
    app.connect("source-read", _list_every_guide_page)
