"""Pages the docs build copies from the repository (git-ignored where they land).

The model cards and the notebooks stay where readers of the repository find them
(``models/<family>/README.md``, ``notebooks/``); the site gets copies written at every
build, so there is one source for each.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import nbparams

# a model card's link to another card: ../<family>/README.md[#anchor]
_CARD_LINK = re.compile(r"\]\(\.\./(?P<family>[a-z_]+)/README\.md(?P<anchor>#[^)]*)?\)")
# a model card's link to a file of the repository (the JAGS twins): kept as its path
_REPO_LINK = re.compile(r"\[(?P<text>[^\]]+)\]\(\.\./\.\./(?P<path>[^)#]+)\)")


def _write_if_changed(path: Path, text: str) -> None:
    # an unchanged file keeps its time stamp: Sphinx then need not re-read it
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def _prune(folder: Path, keep: set[str], pattern: str) -> None:
    for stale in folder.glob(pattern):
        if stale.name not in keep:
            stale.unlink()


def model_cards(source: Path, target: Path) -> list[str]:
    """Copy ``source/<family>/README.md`` to ``target/<family>.md``; return the families."""
    target.mkdir(parents=True, exist_ok=True)
    families = sorted(p.parent.name for p in source.glob("*/README.md"))
    for family in families:
        text = (source / family / "README.md").read_text(encoding="utf-8")
        text = _CARD_LINK.sub(lambda m: f"]({m['family']}.md{m['anchor'] or ''})", text)
        text = _REPO_LINK.sub(lambda m: m["text"] if m["text"].startswith("`")
                              else f"`{m['path']}`", text)
        _write_if_changed(target / f"{family}.md", text)
    _prune(target, {f"{f}.md" for f in families}, "*.md")
    return families


def notebooks(source: Path, target: Path, *, fast: bool) -> list[str]:
    """Copy ``source/*.ipynb`` to ``target``, with the reduced sizes when ``fast``."""
    target.mkdir(parents=True, exist_ok=True)
    names = []
    for path in sorted(source.glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        if fast:
            nbparams.use_fast_sizes(nb)
        _write_if_changed(target / path.name, nbformat.writes(nb) + "\n")
        names.append(path.name)
    _prune(target, set(names), "*.ipynb")
    return names
