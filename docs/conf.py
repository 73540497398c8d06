"""Sphinx configuration of the documentation site: the user's guide (Markdown, through MyST), the
rules, and the API reference built from the docstrings (autodoc).

Build it with ``python -m sphinx -W --keep-going -b html docs docs/_build/html`` (the ``docs``
extra); ``.ci/run`` does so, so that a broken link or a renamed function fails CI.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the packages of this checkout, installed or not

project = "five-hundred-env"
author = "the five-hundred-env authors"
copyright = "the five-hundred-env authors"  # noqa: A001 - Sphinx's own name for it

extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.viewcode"]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "examples", "Thumbs.db", ".DS_Store"]

myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 4  # links to a section by its slug: docs/configs.md#threads

autodoc_default_options = {"members": True, "show-inheritance": True}
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_mock_imports: list[str] = []

html_theme = "furo"
html_title = "five-hundred-env"
