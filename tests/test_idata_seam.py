"""The InferenceData seam: only bayescm/idata.py constructs results or touches groups.

Every other module makes results with ``idata.make``, type-checks with
``idata.is_inference_data`` / ``idata.require`` and reads groups with
``idata.group`` / ``has_group`` / ``group_names``, so that the move to ArviZ 1.x
(``xarray.DataTree``) is a change of one file.  Docstring examples are strings, not
code, so users' ``idata.posterior[...]`` there is not flagged.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "bayescm"
SEAM = PACKAGE / "idata.py"
GROUPS = {"posterior", "prior", "sample_stats", "posterior_predictive", "prior_predictive",
          "observed_data", "predictions"}
# names that hold an InferenceData (or a sampler's trace) by convention
HOLDERS = {"idata", "trace"}
# attributes of these names are not groups (argparse's --prior)
NOT_RESULTS = {"args"}


def _violations(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []
    called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    for node in ast.walk(tree):
        where = f"{path.relative_to(PACKAGE.parent)}:{getattr(node, 'lineno', '?')}"
        if (isinstance(node, ast.Attribute) and node.attr in GROUPS and id(node) not in called
                and not (isinstance(node.value, ast.Name) and node.value.id in NOT_RESULTS)):
            found.append(f"{where}: group attribute .{node.attr}")
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name == "InferenceData":
                found.append(f"{where}: InferenceData(...) constructed")
            if name == "groups" and isinstance(func, ast.Attribute) and not node.args:
                found.append(f"{where}: .groups() read")
            if name == "isinstance" and len(node.args) == 2 and "InferenceData" in ast.dump(
                    node.args[1]):
                found.append(f"{where}: isinstance(..., InferenceData)")
        elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
            key = node.slice
            by_name = isinstance(key, ast.Name) and (key.id == "group"
                                                     or node.value.id in HOLDERS)
            by_value = isinstance(key, ast.Constant) and key.value in GROUPS
            if by_name or (by_value and node.value.id in HOLDERS):
                found.append(f"{where}: {node.value.id}[{ast.unparse(key)}] group access")
    return found


def test_scanner_catches_what_it_should(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        '"""Docstring: idata.posterior["tpr"] is the user\'s API."""\n'
        "import arviz as az\n"
        "def f(idata, group):\n"
        "    a = idata.posterior['tpr']\n"
        "    b = idata.sample_stats\n"
        "    c = az.InferenceData(posterior=a)\n"
        "    d = isinstance(idata, az.InferenceData)\n"
        "    e = idata.groups()\n"
        "    g = idata[group]\n"
        "    return idata['observed_data']\n"
    )
    global PACKAGE
    old, PACKAGE = PACKAGE, tmp_path
    try:
        found = _violations(bad)
    finally:
        PACKAGE = old
    assert len(found) == 7, found
    ok = "def f(args, twin):\n    return args.prior, twin.posterior(1)\n"
    assert not _violations_of_text(tmp_path, ok)
    assert not any(":1:" in f for f in found)  # the docstring is not code


def _violations_of_text(tmp_path: Path, text: str) -> list[str]:
    global PACKAGE
    path = tmp_path / "ok.py"
    path.write_text(text)
    old, PACKAGE = PACKAGE, tmp_path
    try:
        return _violations(path)
    finally:
        PACKAGE = old


@pytest.mark.parametrize(
    "path", sorted(p for p in PACKAGE.rglob("*.py") if p != SEAM),
    ids=lambda p: str(p.relative_to(PACKAGE)),
)
def test_only_the_seam_touches_inference_data(path: Path) -> None:
    found = _violations(path)
    assert not found, ("construct and read InferenceData through bayescm.idata "
                       "(make, is_inference_data, require, group, has_group, group_names, "
                       "attrs):\n" + "\n".join(found))
