"""Every notebook in notebooks/ runs top to bottom from a fresh kernel.

Notebooks read two environment variables:

* ``BAYESCM_NOTEBOOK_FAST=1``: reduced draws and simulation sizes (set here);
* ``BAYESCM_FIGURE_DIR``: where the main figures are written as PNG (set here to
  ``notebook-figures/`` in the test's temporary directory, or to the value of this
  variable when it is set outside, so the pictures can be looked at).

A notebook fails the test on any error and on any output to stderr, which is where
stray warnings would appear in a user's notebook.
"""

import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def test_notebooks_exist():
    assert len(NOTEBOOKS) >= 1, "notebooks/ has no notebooks"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs_cleanly(path, tmp_path, monkeypatch):
    figures = Path(os.environ.get("BAYESCM_FIGURE_DIR", tmp_path / "notebook-figures"))
    figures.mkdir(parents=True, exist_ok=True)
    monkeypatch.setenv("BAYESCM_NOTEBOOK_FAST", "1")
    monkeypatch.setenv("BAYESCM_FIGURE_DIR", str(figures))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    for i, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream" and out.get("name") == "stderr":
                pytest.fail(f"{path.name}, cell {i}: output on stderr:\n{out.get('text')}")
            if out.get("output_type") == "error":
                pytest.fail(f"{path.name}, cell {i}: {out.get('ename')}: {out.get('evalue')}")
