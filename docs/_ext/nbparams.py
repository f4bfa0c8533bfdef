"""Reduced sizes for the notebooks, set from outside: the test suite and the docs build.

Each notebook in ``notebooks/`` keeps its sizes (draws, simulation repeats, ...) in one
code cell tagged ``parameters`` (papermill's convention), written for readers::

    DRAWS = 2000  # per chain, 4 chains

The cell's metadata holds the reduced values the test suite and the docs build run
with, ``{"tags": ["parameters"], "bayescm": {"fast": {"DRAWS": 1000}}}``: invisible in
the notebook, so no harness code is left in it.  :func:`use_fast_sizes` rewrites the
assignments of that cell in an in-memory copy, leaving the full value in a comment so
that a reader of the executed copy sees what ran.  No Sphinx or bayescm import here:
``tests/test_notebooks.py`` and ``docs/conf.py`` both load this file.
"""

from __future__ import annotations

import re
from typing import Any

TAG = "parameters"
NOTE = "reduced for the test suite and the docs build"


def parameters_cell(nb: Any) -> Any | None:
    """The code cell tagged ``parameters`` of notebook ``nb``, or None."""
    for cell in nb.cells:
        if cell.cell_type == "code" and TAG in cell.get("metadata", {}).get("tags", []):
            return cell
    return None


def fast_values(nb: Any) -> dict[str, Any]:
    """The reduced values (name -> Python literal) stored with the parameters cell."""
    cell = parameters_cell(nb)
    if cell is None:
        return {}
    return dict(cell.metadata.get("bayescm", {}).get("fast", {}))


def use_fast_sizes(nb: Any) -> dict[str, Any]:
    """Set the reduced values in ``nb``'s parameters cell, in place; return them.

    Every name must be assigned on a line of its own (``NAME = value  # comment``);
    a name the cell does not assign is an error, so the metadata cannot silently go
    stale when a notebook's parameters are renamed.
    """
    values = fast_values(nb)
    if not values:
        return values
    cell = parameters_cell(nb)
    lines = cell.source.splitlines()
    for name, value in values.items():
        pattern = re.compile(rf"^{re.escape(name)}\s*=\s*(?P<full>[^#]*?)\s*(#.*)?$")
        hits = [i for i, line in enumerate(lines) if pattern.match(line)]
        if len(hits) != 1:
            raise ValueError(
                f"the parameters cell assigns {name!r} on {len(hits)} lines, not one: "
                f"write it as its own line `{name} = ...` or remove it from the cell's "
                "metadata bayescm.fast")
        full = pattern.match(lines[hits[0]]).group("full")
        lines[hits[0]] = f"{name} = {value!r}  # {NOTE} (full run: {full})"
    cell.source = "\n".join(lines)
    return values
