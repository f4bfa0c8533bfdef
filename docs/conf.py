"""Sphinx configuration of bayescm's documentation site (``make docs``).

The build needs no network: no intersphinx, MathJax served from the site itself
(sphinx-mathjax-offline).  Three parts of the site are generated here at every build
and are git-ignored (``docs/.gitignore``):

* ``docs/models/<family>.md``: the model cards ``models/<family>/README.md``, with their
  links rewritten for the site;
* ``docs/notebooks/*.ipynb``: copies of ``notebooks/*.ipynb``, executed by myst-nb at
  build time with the reduced sizes stored in each notebook's ``parameters`` cell
  (``docs/_ext/nbparams.py``; ``BAYESCM_NOTEBOOK_FAST=0`` builds with the full sizes);
* ``docs/api/*.rst``: the API reference, one autosummary page per public name, listed
  from ``bayescm.__all__`` and each public subpackage's ``__all__``, so a new public
  name gets its page without editing the docs (``docs/_ext/apigen.py``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(DOCS / "_ext"))
sys.path.insert(0, str(ROOT))

# the notebooks' kernels inherit the environment: reduced sizes; and no MPLBACKEND, so
# that ipykernel uses its inline backend as in a reader's Jupyter (with MPLBACKEND=Agg a
# notebook without `%matplotlib inline` would show no figure; Sphinx's own process is
# headless either way)
os.environ.setdefault("BAYESCM_NOTEBOOK_FAST", "1")
os.environ.pop("MPLBACKEND", None)

import apigen  # noqa: E402
import generated  # noqa: E402

import bayescm  # noqa: E402

generated.model_cards(ROOT / "models", DOCS / "models")
generated.notebooks(ROOT / "notebooks", DOCS / "notebooks",
                    fast=os.environ["BAYESCM_NOTEBOOK_FAST"] == "1")
apigen.write_api(DOCS / "api")

project = "bayescm"
author = "bayescm contributors"
copyright = "bayescm contributors"
release = bayescm.__version__
version = release

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "sphinx_design",
    "sphinx-mathjax-offline",
]

exclude_patterns = ["_build", "_ext", "_templates", "**.ipynb_checkpoints", "jupyter_execute"]
templates_path = ["_templates"]
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}

# MyST: $...$ and $$...$$ math as in the model cards, heading anchors for their
# "#section" links
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]
myst_heading_anchors = 3

# notebooks: executed at every build; an error in a cell fails the build, and output
# on stderr (a stray warning in a reader's notebook) is a build warning, so an error
# under -W, as in tests/test_notebooks.py
nb_execution_mode = "force"
# BAYESCM_DOCS_EXECUTE: "all" (default), "none", or the notebooks to execute by name
# (``01_quickstart,07_multiclass``): the others are shown without outputs (the quick
# build of tests/test_docs.py)
_execute = os.environ.get("BAYESCM_DOCS_EXECUTE", "all").strip()
if _execute == "none":
    nb_execution_mode = "off"
elif _execute != "all":
    _chosen = {name.strip() for name in _execute.split(",")}
    nb_execution_excludepatterns = [f"notebooks/{p.stem}.ipynb"
                                    for p in sorted((ROOT / "notebooks").glob("*.ipynb"))
                                    if p.stem not in _chosen]
nb_execution_timeout = 900
nb_execution_raise_on_error = True
nb_execution_show_tb = True
nb_output_stderr = "warn"
nb_merge_streams = True

# API reference: the numpydoc docstrings through numpydoc (as PyMC and ArviZ), which
# keeps "draws, tune, chains" one entry; the type hints stay in the signatures
autosummary_generate = True
autosummary_imported_members = True
autodoc_typehints = "signature"
autodoc_member_order = "bysource"
numpydoc_show_class_members = False  # the class template documents the members
numpydoc_xref_param_type = False
numpydoc_validation_checks: set[str] = set()

html_theme = "pydata_sphinx_theme"
html_title = "bayescm"
html_static_path: list[str] = []
html_theme_options = {
    "navbar_align": "left",
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version", "theme-version"],
}
html_last_updated_fmt = None
html_copy_source = False
html_show_sourcelink = False

# Warnings that are errors under -W but are not about this site (each listed in the
# report of issue 30); keep this list as short as possible.
suppress_warnings: list[str] = []


def _drop_builtin_docstrings(app, what, name, obj, options, lines):
    """A constant (``bcm.metrics.REGISTRY``, a dict) has no docstring of its own: autodoc
    would show its type's (``dict``'s, not reStructuredText); show none instead."""
    if what in ("data", "attribute") and lines:
        own = getattr(obj, "__doc__", None)
        if own is not None and own == getattr(type(obj), "__doc__", None):
            lines.clear()


def setup(app):
    app.connect("autodoc-process-docstring", _drop_builtin_docstrings)
