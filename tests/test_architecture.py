"""The house: layers without cycles, small modules, every public name where users find it.

The import graph of ``bayescm/`` is built from the source (AST): every ``import`` and
``from ... import``, inside functions too, and ``importlib.import_module`` of a
constant name; only ``if TYPE_CHECKING:`` blocks are exempt.  Importing a submodule
runs its packages' ``__init__`` first, so an import of ``bayescm.a.b`` from outside
package ``bayescm.a`` is also an edge to ``bayescm.a``.
"""

from __future__ import annotations

import ast
import functools
import json
import pathlib
import subprocess
import sys

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "bayescm"
MAX_LINES = 500
MAX_TOP_MODULES = 12

# Lowest first.  A module may import its own layer and those below it, never above:
# data flows counts -> data -> models -> fit -> InferenceData -> analysis -> report/app/cli.
# ``plots`` sits below ``analysis``: a result's ``.plot()`` calls down into it, and the
# pictures read results by their public attributes.  The package root, the CLI and the
# app may import anything.
LAYERS: list[set[str]] = [
    {"_version", "_quiet", "_errors", "deprecation", "stats", "idata", "scheduling"},
    {"data"},
    {"metrics"},
    {"family"},
    {"priors"},
    {"models"},
    {"inference", "summary", "summary_stream"},
    {"exact", "intervals", "curves"},
    {"plots"},
    {"analysis"},
    {"report"},
    {"app", "cli", ""},
]


def _modules() -> dict[str, tuple[pathlib.Path, bool]]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        out[".".join(parts)] = (path, is_package)
    return out


MODULES = _modules()


def _resolve(name: str) -> str | None:
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            test = node.test
            if (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
                    isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"):
                for child in node.body:
                    skip.update(id(n) for n in ast.walk(child))
    return skip


def _imports(module: str, path: pathlib.Path, is_package: bool) -> set[str]:
    """The bayescm modules ``module`` imports (anywhere in it), by resolved name."""
    tree = ast.parse(path.read_text())
    skip = _type_checking_nodes(tree)
    package = module if is_package else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                origin = ".".join(base + ([node.module] if node.module else []))
            else:
                origin = node.module or ""
            targets = [f"{origin}.{a.name}" if f"{origin}.{a.name}" in MODULES else origin
                       for a in node.names]
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr == "import_module" and node.args
              and isinstance(node.args[0], ast.Constant)):
            targets = [str(node.args[0].value)]
        for target in targets:
            if target.split(".")[0] != "bayescm":
                continue
            resolved = _resolve(target)
            if resolved and resolved != module:
                found.add(resolved)
    # importing bayescm.a.b from outside bayescm.a runs bayescm/a/__init__.py first
    for target in list(found):
        parts = target.split(".")
        for i in range(2, len(parts)):
            parent = ".".join(parts[:i])
            if parent in MODULES and not module.startswith(parent + ".") and parent != module:
                found.add(parent)
    return found


@functools.cache
def graph() -> dict[str, set[str]]:
    """Each module's bayescm imports, parsed when a test first asks (not at collection,
    which every pytest-xdist worker pays)."""
    return {m: _imports(m, path, pkg) for m, (path, pkg) in MODULES.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                out.append(sorted(part))

    sys.setrecursionlimit(max(10_000, sys.getrecursionlimit()))
    for v in graph:
        if v not in index:
            visit(v)
    return out


def _layer(module: str) -> int:
    top = module.split(".")[1] if "." in module else ""
    for i, names in enumerate(LAYERS):
        if top in names:
            return i
    raise AssertionError(f"{module} belongs to no layer: add its top-level name to LAYERS")


def test_the_cycle_finder_finds_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]


def test_the_graph_sees_imports_inside_functions_and_package_inits():
    # bayescm.data.confusion imports bayescm.data.slices inside a method
    assert "bayescm.data.slices" in graph()["bayescm.data.confusion"]
    # bayescm.models.three_beta.model imports bayescm.priors (a package) by name
    assert "bayescm.priors" in graph()["bayescm.models.three_beta.model"]


def test_no_import_cycle_in_the_package():
    assert _cycles(graph()) == []


def test_no_import_climbs_a_layer():
    climbs = [f"{m} -> {t}" for m, targets in graph().items() for t in sorted(targets)
              if _layer(t) > _layer(m)]
    assert climbs == []


def test_nothing_below_the_cli_and_the_app_knows_them():
    users = [f"{m} -> {t}" for m, targets in graph().items() for t in targets
             if t.split(".")[1:2] in (["cli"], ["app"])
             and m.split(".")[1:2] not in (["cli"], ["app"]) and m != "bayescm"]
    assert users == []


def test_no_module_over_500_lines_and_at_most_a_dozen_at_the_top():
    long = {str(p.relative_to(PACKAGE)): n for p, _ in MODULES.values()
            if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert long == {}
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(top) <= MAX_TOP_MODULES, top


# Underscore names that are public API in their libraries (namedtuple's, IPython's).
PUBLIC_UNDERSCORED = {"_asdict", "_fields", "_replace", "_make", "_repr_html_",
                      "_repr_mimebundle_", "_ipython_display_"}


def _private_names_of_bayescm() -> set[str]:
    names: set[str] = set()
    for path, _ in MODULES.values():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
            elif isinstance(node, ast.alias):
                names.add(node.asname or node.name.split(".")[-1])
            elif isinstance(node, ast.keyword) and node.arg:
                names.add(node.arg)
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                  and node.func.attr == "__setattr__" and len(node.args) >= 2
                  and isinstance(node.args[1], ast.Constant)):
                names.add(str(node.args[1].value))
    return {n for n in names if n.startswith("_")}


def test_nothing_reads_another_packages_private_attributes():
    """``x._name`` only for ``_name`` that bayescm itself defines (not nutpie's
    ``_sampler``, say): another package's private attributes change without notice."""
    ours = _private_names_of_bayescm() | PUBLIC_UNDERSCORED
    hits = []
    for module, (path, _) in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text())):
            name = None
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
                name = node.attr
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                  and node.func.id in ("getattr", "hasattr") and len(node.args) >= 2
                  and isinstance(node.args[1], ast.Constant)):
                name = str(node.args[1].value)
            if (name and name.startswith("_") and not name.startswith("__")
                    and name not in ours):
                hits.append(f"{module}:{node.lineno} reads {name}")
    assert hits == []


# Every public name users and the README rely on, resolved in a fresh interpreter.
PUBLIC = {
    "bayescm": None,  # every name in bayescm.__all__
    "bayescm.analysis": None,
    "bayescm.metrics": None,
    "bayescm.models": None,
    "bayescm.priors": None,
    "bayescm.plots": None,
    "bayescm.data": ["ConfusionMatrix", "MulticlassConfusionMatrix", "AgreementTable",
                     "CountsError", "CELLS", "validate_counts", "resolve_positive"],
    "bayescm.inference": ["fit", "check_convergence", "save", "load", "rebuild",
                          "posterior_predictive_check"],
    "bayescm.exact": ["metric_pmf", "predictive_pmf", "exact_posterior"],
    "bayescm.intervals": ["binomial", "metric_interval", "coverage", "coverage_composite"],
    "bayescm.curves": ["roc", "precision_recall", "Curve"],
    "bayescm.report": ["report", "Report"],
    "bayescm.cli": ["main"],
    "bayescm.stats": ["hdi", "beta_hdi"],
}
ATTRIBUTES = ["bcm.analysis.deception", "bcm.analysis.leaderboard", "bcm.curves.roc",
              "bcm.exact.metric_pmf", "bcm.intervals.binomial", "bcm.priors.elicit_beta",
              "bcm.priors.beta_pert", "bcm.priors.defaults", "bcm.models.three_beta",
              "bcm.models.hui_walter", "bcm.models.get_family", "bcm.datasets",
              "bcm.summary_exact", "bcm.exact_posterior", "bcm.plots.metric_posterior"]


def test_every_public_name_resolves_in_a_fresh_interpreter():
    script = f"""
import importlib, json, bayescm as bcm
public = {PUBLIC!r}
missing = []
for name, attrs in public.items():
    module = importlib.import_module(name)
    for attr in (attrs if attrs is not None else module.__all__):
        if not hasattr(module, attr):
            missing.append(f"{{name}}.{{attr}}")
for path in {ATTRIBUTES!r}:
    obj = bcm
    for part in path.split(".")[1:]:
        obj = getattr(obj, part, None)
    if obj is None:
        missing.append(path)
print(json.dumps(missing))
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []


@pytest.mark.parametrize("path", ["bayescm.data", "bayescm.priors", "bayescm.inference",
                                  "bayescm.models", "bayescm.metrics", "bayescm.analysis"])
def test_old_import_paths_still_import(path):
    out = subprocess.run([sys.executable, "-c", f"import {path}"], capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr


def test_the_command_runs_as_a_module():
    out = subprocess.run([sys.executable, "-m", "bayescm.cli", "summarize", "--tp", "26",
                          "--fn", "0", "--fp", "2", "--tn", "6", "--json"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "tnr" in out.stdout
