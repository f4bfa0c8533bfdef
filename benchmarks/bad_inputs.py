"""Bad inputs to bayescm's public API and CLI: does each get a clear error?

A broad table of invalid inputs (:func:`cases`) is fed to the data constructors, the
priors, the model builders, ``fit``, the summaries, the analysis functions, the plots,
``report`` and the command line (``bayescm.cli.main``).  Each outcome is one of

``clear``
    bayescm's own error, or a ``ValueError``/``TypeError``/``KeyError`` (an
    ``OSError`` for a path), raised by bayescm or Python itself, whose message names
    the argument (or option) that is wrong;
``unclear``
    one of those types, but the message does not name the argument
    (``'int' object is not iterable``);
``raw``
    anything else: ``AttributeError``, ``IndexError``, an error of numpy, pandas,
    xarray, PyTensor, ... (their internals, not what the user passed), or a traceback
    printed by the CLI;
``accepted``
    no error at all: the bad input was taken;
``hang``
    no answer within the case's time bound.

Run it to print the tallies (``not clear k of N`` per area) and every case that is not
clear, as ``area: input -> error``::

    .venv/bin/python benchmarks/bad_inputs.py [--all]

``tests/test_bad_inputs.py`` runs the same table and asserts that every case is clear.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib.util
import io
import sys
import tempfile
import threading
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

AREAS = ("data", "priors", "models", "fit", "summary", "analysis", "plots", "report", "cli")
ALLOWED = (ValueError, TypeError, KeyError)
BOUND = 30.0  # seconds per case


@dataclass(frozen=True)
class Case:
    """One bad input: ``call()`` must raise a clear error naming one of ``names``."""

    area: str
    label: str
    call: Callable[[], Any]
    names: tuple[str, ...]
    bound: float = BOUND


@dataclass(frozen=True)
class Outcome:
    case: Case
    verdict: str  # clear, unclear, raw, accepted, hang
    error: str  # the exception's type and message, or the CLI's stderr

    def line(self) -> str:
        return f"{self.case.area}: {self.case.label} -> [{self.verdict}] {self.error}"


class CliExit(Exception):
    """What a CLI call ended with: its return code and stderr."""

    def __init__(self, code: int, err: str) -> None:
        super().__init__(err)
        self.code, self.err = code, err


# -- fixtures: small valid objects the bad inputs are mixed into ------------------------
class Fixtures:
    """Valid inputs, made on first use (exact fits: no MCMC)."""

    @functools.cached_property
    def bcm(self) -> Any:
        import matplotlib

        matplotlib.use("Agg")
        import bayescm

        return bayescm

    @functools.cached_property
    def cm(self) -> Any:
        return self.bcm.ConfusionMatrix(tp=26, fn=0, fp=2, tn=6)

    @functools.cached_property
    def cms(self) -> Any:
        return self.bcm.ConfusionMatrix(tp=[45, 40, 30], fn=[5, 10, 20], fp=[3, 4, 9],
                                        tn=[47, 46, 41], classifier=["a", "b", "c"])

    @functools.cached_property
    def mc(self) -> Any:
        return self.bcm.MulticlassConfusionMatrix([[50, 3, 2], [4, 40, 6], [1, 2, 30]],
                                                  labels=["cat", "dog", "bird"])

    @functools.cached_property
    def tab(self) -> Any:
        return self.bcm.AgreementTable.from_counts({"++": 40, "+-": 3, "-+": 7, "--": 100})

    @functools.cached_property
    def sliced(self) -> Any:
        return self.bcm.ConfusionMatrix.from_predictions(
            [1, 0, 1, 0, 1, 0, 1, 1], [1, 0, 0, 0, 1, 1, 1, 1],
            groups={"sex": list("FFFFMMMM")})

    @functools.cached_property
    def model(self) -> Any:
        return self.bcm.models.three_beta(self.cms)

    @functools.cached_property
    def idata(self) -> Any:
        return self.bcm.fit(self.model, sampler="exact", draws=200, random_seed=1)

    @functools.cached_property
    def idata_sliced(self) -> Any:
        return self.bcm.fit(self.bcm.models.three_beta(self.sliced), sampler="exact",
                            draws=200, random_seed=1)

    @functools.cached_property
    def idata_windows(self) -> Any:
        days = pd.to_datetime(["2024-01-01", "2024-01-02", "2024-01-09", "2024-01-10"] * 2)
        cm = self.bcm.ConfusionMatrix.from_predictions(
            [1, 0, 1, 0, 1, 0, 1, 1], [1, 0, 0, 0, 1, 1, 1, 1], time=days, window="7D")
        return self.bcm.fit(self.bcm.models.three_beta(cm), sampler="exact", draws=200,
                            random_seed=1)

    @functools.cached_property
    def roc(self) -> Any:
        rng = np.random.default_rng(0)
        y = np.repeat([1, 0], 30)
        return self.bcm.curves.roc(rng.normal(y, 1.0), y, draws=100, random_seed=1)

    @functools.cached_property
    def pr(self) -> Any:
        rng = np.random.default_rng(0)
        y = np.repeat([1, 0], 30)
        return self.bcm.curves.precision_recall(rng.normal(y, 1.0), y, draws=100,
                                                random_seed=1)

    @functools.cached_property
    def folder(self) -> Path:
        """CSV files for the CLI cases."""
        root = Path(tempfile.mkdtemp(prefix="bcm-bad-inputs-"))
        y = [1, 0, 1, 0, 1, 1]
        frames = {
            "ok": {"y_true": y, "A": [1, 0, 0, 0, 1, 1], "B": [1, 1, 1, 0, 0, 1]},
            "three": {"y_true": ["a", "b", "c", "a", "b", "c"], "A": list("abcabc")},
            "blank": {"y_true": ["1", "0", "", "1", "0", "1"], "A": list("101011")},
            "notruth": {"label": y, "A": y},
            "words": {"y_true": ["ill", "well"] * 3, "A": ["ill", "ill", "well"] * 2},
            "one": {"A": y},
            "dates": {"y_true": y, "A": y, "when": ["x"] * 6},
        }
        for name, cols in frames.items():
            pd.DataFrame(cols).to_csv(root / f"{name}.csv", index=False)
        (root / "empty.csv").write_text("")
        (root / "header.csv").write_text("y_true,A\n")
        return root


F = Fixtures()


def _raises_cli(argv: list[str]) -> Callable[[], Any]:
    """A CLI call that raises :class:`CliExit` with its code and stderr (0: accepted)."""
    def call() -> Any:
        from bayescm import cli

        err, out = io.StringIO(), io.StringIO()
        code: Any
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            try:
                code = cli.main([str(a) for a in argv])
            except SystemExit as stop:  # argparse
                code = stop.code
        raise CliExit(int(code or 0), err.getvalue())
    return call


# -- the table ---------------------------------------------------------------------------
def cases() -> list[Case]:
    """Every bad input, by area."""
    out: list[Case] = []

    def add(area: str, label: str, call: Callable[[], Any], *names: str,
            bound: float = BOUND) -> None:
        out.append(Case(area, label, call, names, bound))

    bcm = F.bcm
    cm_ = bcm.ConfusionMatrix
    mc_ = bcm.MulticlassConfusionMatrix
    at_ = bcm.AgreementTable
    df = pd.DataFrame

    # data ------------------------------------------------------------------------------
    for label, kw, names in [
        ("tp=-1", {"tp": -1}, ("tp", "negative", ">= 0")),
        ("tp=1.5", {"tp": 1.5}, ("tp", "whole")),
        ("tp=nan", {"tp": np.nan}, ("tp", "NaN", "finite")),
        ("tp=inf", {"tp": np.inf}, ("tp", "finite", "inf")),
        ("tp='a'", {"tp": "a"}, ("tp",)),
        ("tp=True", {"tp": True}, ("tp", "bool")),
        ("tp=None", {"tp": None}, ("tp",)),
        ("tp=[1, 2], fn=1", {"tp": [1, 2]}, ("tp", "fn", "length", "shape")),
        ("tp=[[1, 2]]", {"tp": [[1, 2]]}, ("tp", "1-d", "shape")),
        ("tp=10**20", {"tp": 10**20}, ("tp", "large")),
        ("tp=[] (no matrix)", {"tp": [], "fn": [], "fp": [], "tn": []}, ("empty", "no ")),
        ("all cells 0", {"tp": 0, "fn": 0, "fp": 0, "tn": 0}, ("zero", "empty", "no cases")),
        ("classifier=['a', 'a']", {"tp": [1, 1], "fn": [1, 1], "fp": [1, 1], "tn": [1, 1],
                                   "classifier": ["a", "a"]}, ("classifier", "unique",
                                                               "duplicate")),
        ("classifier=['a'] for 2", {"tp": [1, 1], "fn": [1, 1], "fp": [1, 1], "tn": [1, 1],
                                    "classifier": ["a"]}, ("classifier", "names")),
    ]:
        args = {"tp": 1, "fn": 1, "fp": 1, "tn": 1, **kw}
        add("data", f"ConfusionMatrix({label})", lambda a=args: cm_(**a), *names)
    add("data", "ConfusionMatrix.from_counts({'tp': 1})",
        lambda: cm_.from_counts({"tp": 1}), "fn", "missing")
    add("data", "ConfusionMatrix.from_counts(+ 'xx')",
        lambda: cm_.from_counts({"tp": 1, "fn": 1, "fp": 1, "tn": 1, "xx": 1}), "xx")
    add("data", "ConfusionMatrix.from_counts('x')", lambda: cm_.from_counts("x"),
        "counts", "mapping", "dict")
    add("data", "from_frame(no cells)", lambda: cm_.from_frame(df({"a": [1]})), "tp",
        "column")
    add("data", "from_frame('x')", lambda: cm_.from_frame("x"), "DataFrame", "frame")
    add("data", "from_frame(no rows)",
        lambda: cm_.from_frame(df(columns=["tp", "fn", "fp", "tn"])), "rows", "empty")
    add("data", "from_frame(classifier='nope')",
        lambda: cm_.from_frame(df({"tp": [1], "fn": [1], "fp": [1], "tn": [1]}),
                               classifier="nope"), "nope")
    add("data", "from_frame(y_true only)",
        lambda: cm_.from_frame(df({"y": [1, 0]}), y_true="y"), "y_pred")
    fp_ = cm_.from_predictions
    for label, call, names in [
        ("lengths 2 and 1", lambda: fp_([1, 0], [1]), ("y_true", "length", "paired")),
        ("empty", lambda: fp_([], []), ("y_true", "empty")),
        ("None label", lambda: fp_([1, None], [1, 0]), ("y_true", "missing", "None")),
        ("three labels", lambda: fp_([1, 2, 3], [1, 2, 3]), ("label", "two")),
        ("labels a/b, no positive", lambda: fp_(["a", "b"], ["a", "b"]), ("positive",)),
        ("positive='z'", lambda: fp_([1, 0], [1, 0], positive="z"), ("positive",)),
        ("y_true=5", lambda: fp_(5, 5), ("y_true", "1-d", "labels")),
        ("2-d y_true", lambda: fp_([[1, 0]], [[1, 0]]), ("y_true", "1-d")),
        ("groups of 1 for 2", lambda: fp_([1, 0], [1, 0], groups=["a"]), ("group",)),
        ("groups={}", lambda: fp_([1, 0], [1, 0], groups={}), ("groups",)),
        ("window without time", lambda: fp_([1, 0], [1, 0], window="7D"), ("time",)),
        ("window='7X'", lambda: fp_([1, 0], [1, 0], time=pd.to_datetime(["2024-01-01"] * 2),
                                    window="7X"), ("window",)),
        ("groups=[unnamed Series]",
         lambda: fp_([1, 0], [1, 0], groups=[pd.Series(["a", "b"])]), ("groups", "name")),
        ("groups with NaN", lambda: fp_([1, 0], [1, 0], groups={"g": ["a", None]}),
         ("group", "missing")),
        ("time not dates", lambda: fp_([1, 0], [1, 0], time=["x", "y"], window="7D"),
         ("time",)),
    ]:
        add("data", f"ConfusionMatrix.from_predictions({label})", call, *names)
    for label, call, names in [
        ("ragged", lambda: mc_([[1, 2], [3]], labels=["a", "b"]), ("square", "rows",
                                                                      "shape")),
        ("negative", lambda: mc_([[1, -1], [0, 1]], labels=["a", "b"]), (">= 0",
                                                                           "negative")),
        ("fractional", lambda: mc_([[1.5, 0], [0, 1]], labels=["a", "b"]), ("whole",)),
        ("NaN", lambda: mc_([[np.nan, 0], [0, 1]], labels=["a", "b"]), ("NaN", "finite")),
        ("labels twice", lambda: mc_([[1, 0], [0, 1]], labels=["a", "a"]), ("unique",
                                                                              "labels")),
        ("3 labels for K=2", lambda: mc_([[1, 0], [0, 1]], labels=["a", "b", "c"]),
         ("labels",)),
        ("K=1", lambda: mc_([[3]], labels=["a"]), ("K", "two", "2 classes", "classes")),
        ("counts='x'", lambda: mc_("x"), ("counts", "matrix")),
        ("all zero", lambda: mc_([[0, 0], [0, 0]], labels=["a", "b"]), ("zero", "empty")),
    ]:
        add("data", f"MulticlassConfusionMatrix({label})", call, *names)
    mfp = mc_.from_predictions
    add("data", "MulticlassConfusionMatrix.from_predictions(lengths)",
        lambda: mfp([1, 2], [1]), "y_true", "length")
    add("data", "MulticlassConfusionMatrix.from_predictions(labels miss one)",
        lambda: mfp(["a", "b", "c"], ["a", "b", "c"], labels=["a", "b"]), "labels", "'c'")
    add("data", "MulticlassConfusionMatrix.from_predictions(empty)", lambda: mfp([], []),
        "y_true", "empty")
    add("data", "MulticlassConfusionMatrix.from_predictions(None label)",
        lambda: mfp(["a", None], ["a", "b"]), "y_true", "missing")
    for label, call, names in [
        ("from_counts(missing patterns)", lambda: at_.from_counts({"++": 1}), ("pattern",
                                                                               "--")),
        ("from_counts(bad pattern)", lambda: at_.from_counts({"+x": 1, "++": 1}),
         ("+x", "pattern")),
        ("from_counts(negative)",
         lambda: at_.from_counts({"++": -1, "+-": 1, "-+": 1, "--": 1}), ("negative",
                                                                          ">= 0")),
        ("from_counts(mixed lengths)",
         lambda: at_.from_counts({"++": 1, "+-": 1, "-+": 1, "--": 1, "+": 1}), ("pattern",
                                                                                 "'+'")),
        ("from_counts('x')", lambda: at_.from_counts("x"), ("counts", "mapping", "dict")),
        ("from_counts(1.5)", lambda: at_.from_counts({"++": 1.5, "+-": 1, "-+": 1, "--": 1}),
         ("whole",)),
        ("from_predictions(lengths)", lambda: at_.from_predictions([1, 0], [1]),
         ("length", "same")),
        ("from_predictions(3 labels)", lambda: at_.from_predictions([1, 2, 3], [1, 0, 1]),
         ("label", "two")),
        ("from_predictions(population length)",
         lambda: at_.from_predictions([1, 0], [1, 0], population=["a"]), ("population",)),
        ("from_predictions(y_true length)",
         lambda: at_.from_predictions([1, 0], [1, 0], y_true=[1]), ("y_true",)),
        ("from_predictions()", lambda: at_.from_predictions(), ("prediction", "classifier")),
    ]:
        add("data", f"AgreementTable.{label}", call, *names)
    if hasattr(bcm, "RatingsTable"):  # (a newer family: not in every version measured)
        rt = bcm.RatingsTable.from_long
        add("data", "RatingsTable.from_long(no columns)", lambda: rt(df({"x": [1]})), "item",
            "column")
        add("data", "RatingsTable.from_long('x')", lambda: rt("x"), "DataFrame", "df",
            "frame")
        add("data", "RatingsTable.from_long(rater='nope')",
            lambda: rt(df({"item": [1], "rater": ["a"], "rating": [1]}), rater="nope"),
            "nope")

    # priors ----------------------------------------------------------------------------
    P = bcm.priors
    for label, call, names in [
        ("parse('beta:1')", lambda: P.parse("beta:1"), ("beta:1", "beta:a,b")),
        ("parse('beta:a,b')", lambda: P.parse("beta:a,b"), ("beta:a,b", "numbers")),
        ("parse(5)", lambda: P.parse(5), ("string", "text", "prior")),
        ("parse('jeffreys') without K", lambda: P.parse("jeffreys"), ("k=", "categories")),
        ("parse('dirichlet:-1', k=3)", lambda: P.parse("dirichlet:-1", k=3), (">= 0",
                                                                                 "alpha")),
        ("parse('lognormal:1,2')", lambda: P.parse("lognormal:1,2"), ("lognormal",)),
        ("coerce(object())", lambda: P.coerce(object(), name="tpr"), ("tpr",)),
        ("coerce((1, 2, 3), kind='beta')", lambda: P.coerce((1, 2, 3), kind="beta",
                                                            name="tpr"), ("tpr",)),
        ("coerce(-1)", lambda: P.coerce(-1, name="tpr"), ("tpr",)),
        ("coerce(kind='lognormal')", lambda: P.coerce((1, 1), kind="lognormal"), ("kind",)),
        ("Beta(-1, 1)", lambda: P.Beta(-1, 1), ("alpha",)),
        ("Beta('a', 1)", lambda: P.Beta("a", 1), ("alpha",)),
        ("Beta(nan, 1)", lambda: P.Beta(np.nan, 1), ("alpha",)),
        ("Dirichlet([])", lambda: P.Dirichlet([]), ("alpha", "concentrations")),
        ("Dirichlet(ragged)", lambda: P.Dirichlet([[1, 2], [3]]), ("alpha", "equal length")),
        ("Dirichlet([1, -1])", lambda: P.Dirichlet([1, -1]), ("alpha", ">= 0")),
        ("Dirichlet(2x3)", lambda: P.Dirichlet([[1, 2, 3], [1, 2, 3]]), ("K×K", "shape")),
        ("Dirichlet.flat(1)", lambda: P.Dirichlet.flat(1), ("k",)),
        ("Dirichlet.flat('3')", lambda: P.Dirichlet.flat("3"), ("k",)),
        ("Dirichlet.diagonal(1)", lambda: P.Dirichlet.diagonal(1, correct=1, wrong=1),
         ("K", "classes")),
        ("Gamma(-1, 1)", lambda: P.Gamma(-1, 1), ("alpha",)),
        ("elicit_beta(mode=2)", lambda: P.elicit_beta(mode=2, lower=0.5), ("mode",)),
        ("elicit_beta(mode only)", lambda: P.elicit_beta(mode=0.9), ("lower", "upper")),
        ("elicit_beta(lower > mode)", lambda: P.elicit_beta(mode=0.9, lower=0.95),
         ("lower", "mode")),
        ("elicit_beta(prob=2)", lambda: P.elicit_beta(mode=0.9, lower=0.8, prob=2),
         ("prob",)),
        ("beta_pert(1, 0, 2)", lambda: P.beta_pert(1, 0, 2), ("mode", "minimum")),
        ("beta_from_mean(2, 10)", lambda: P.beta_from_mean(2, 10), ("mean",)),
        ("beta_from_mean(0.5, -1)", lambda: P.beta_from_mean(0.5, -1), ("weight",)),
        ("dirichlet_from_mean([0.5, 0.6], 10)", lambda: P.dirichlet_from_mean([0.5, 0.6], 10),
         ("mean", "sum")),
        ("defaults('nope')", lambda: P.defaults("nope"), ("nope",)),
        ("resolve(unknown name)", lambda: P.resolve("three_beta", {"x": (1, 1)}, ["a"]),
         ("'x'", "x")),
    ]:
        add("priors", label, call, *names)

    # models ----------------------------------------------------------------------------
    M = bcm.models
    for label, call, names in [
        ("three_beta('x')", lambda: M.three_beta("x"), ("ConfusionMatrix", "cm")),
        ("three_beta(priors={'sens': ...})",
         lambda: M.three_beta(F.cm, priors={"sens": (1, 1)}), ("sens",)),
        ("three_beta(priors='beta:1,1')", lambda: M.three_beta(F.cm, priors="beta:1,1"),
         ("priors",)),
        ("three_beta(priors={'tpr': (1, 2, 3)})",
         lambda: M.three_beta(F.cm, priors={"tpr": (1, 2, 3)}), ("tpr",)),
        ("three_beta(priors={'tpr': 'dirichlet:1,1'})",
         lambda: M.three_beta(F.cm, priors={"tpr": "dirichlet:1,1"}), ("tpr",)),
        ("three_beta(prevalence=2)", lambda: M.three_beta(F.cm, prevalence=2),
         ("prevalence",)),
        ("three_beta(prevalence='x')", lambda: M.three_beta(F.cm, prevalence="x"),
         ("prevalence",)),
        ("three_beta(prevalence=[0.5, 0.5]) for 1",
         lambda: M.three_beta(F.cm, prevalence=[0.5, 0.5]), ("prevalence",)),
        ("three_beta(priors={'tpr': 'beta:0,0'}, fn=0)",
         lambda: M.three_beta(bcm.ConfusionMatrix(tp=0, fn=0, fp=1, tn=1),
                              priors={"tpr": "beta:0,0"}), ("tpr", "improper")),
        ("dirichlet_multinomial(theta of 2)",
         lambda: M.dirichlet_multinomial(F.cm, priors={"theta": (1, 1)}), ("theta",)),
        ("dirichlet_multinomial(mc)", lambda: M.dirichlet_multinomial(F.mc),
         ("ConfusionMatrix", "binary", "multiclass_cells")),
        ("multiclass_rows('x')", lambda: M.multiclass_rows("x"), ("MulticlassConfusionMatrix",
                                                                  "cm")),
        ("multiclass_rows(rows of 2)",
         lambda: M.multiclass_rows(F.mc, priors={"rows": "dirichlet:1,1"}), ("rows",)),
        ("multiclass_rows(prevalence=[0.5, 0.5])",
         lambda: M.multiclass_rows(F.mc, prevalence=[0.5, 0.5]), ("prevalence",)),
        ("multiclass_cells(priors={'rows': ...})",
         lambda: M.multiclass_cells(F.mc, priors={"rows": (1, 1)}), ("rows",)),
        ("hui_walter(cm)", lambda: M.hui_walter(F.cm), ("AgreementTable", "table")),
        ("hui_walter(conditional_dependence='x')",
         lambda: M.hui_walter(F.tab, conditional_dependence="x"), ("conditional_dependence",
                                                                   "dependence")),
        ("hui_walter(dependence on 'Z')",
         lambda: M.hui_walter(F.tab, conditional_dependence=[("A", "Z")]), ("Z",)),
        ("hui_walter(priors for classifier 'Z')",
         lambda: M.hui_walter(F.tab, priors={"sensitivity": {"Z": (2, 1)}}), ("Z",)),
        ("hui_walter(identifiability='x')",
         lambda: M.hui_walter(F.tab, identifiability="x"), ("identifiability",)),
        ("folds('x')", lambda: M.folds("x"), ("ConfusionMatrix", "cms", "folds")),
        ("groups(unsliced)", lambda: M.groups(F.cms), ("slice", "groups")),
        ("hui_walter(conditional_dependence=[('A',)])",
         lambda: M.hui_walter(F.tab, conditional_dependence=[("A",)]),
         ("conditional_dependence", "pair")),
        ("groups(factors=['nope'])", lambda: M.groups(F.sliced, factors=["nope"]), ("nope",)),
        ("groups(priors={'x': ...})", lambda: M.groups(F.sliced, priors={"x": 1}), ("x",)),
        ("get_family('nope')", lambda: M.get_family("nope"), ("nope",)),
    ]:
        add("models", label, call, *names)
    if hasattr(M, "dawid_skene"):
        add("models", "dawid_skene('x')", lambda: M.dawid_skene("x"), "RatingsTable",
            "ratings")

    # fit -------------------------------------------------------------------------------
    fit = bcm.fit
    for label, call, names in [
        ("fit('x')", lambda: fit("x"), ("model", "pm.Model")),
        ("fit(draws=0)", lambda: fit(F.model, sampler="exact", draws=0), ("draws",)),
        ("fit(draws=-1)", lambda: fit(F.model, sampler="exact", draws=-1), ("draws",)),
        ("fit(draws=1.5)", lambda: fit(F.model, sampler="exact", draws=1.5), ("draws",)),
        ("fit(draws='10')", lambda: fit(F.model, sampler="exact", draws="10"), ("draws",)),
        ("fit(chains=0)", lambda: fit(F.model, sampler="exact", chains=0), ("chains",)),
        ("fit(sampler='foo')", lambda: fit(F.model, sampler="foo"), ("sampler",)),
        ("fit(engine='foo')", lambda: fit(F.model, engine="foo"), ("engine",)),
        ("fit(random_seed='a')", lambda: fit(F.model, sampler="exact", random_seed="a"),
         ("random_seed", "seed")),
        ("fit(random_seed=-1)", lambda: fit(F.model, sampler="exact", random_seed=-1),
         ("random_seed", "seed")),
        ("fit(random_seed=True)", lambda: fit(F.model, sampler="exact", random_seed=True),
         ("random_seed",)),
        ("fit(tune=-1)", lambda: fit(F.model, tune=-1, draws=10), ("tune",)),
        ("fit(target_accept=2)", lambda: fit(F.model, target_accept=2, draws=10),
         ("target_accept",)),
        ("fit(metrics=['nope'])", lambda: fit(F.model, sampler="exact", metrics=["nope"]),
         ("nope",)),
        ("fit(metrics=42)", lambda: fit(F.model, sampler="exact", metrics=42), ("metrics",)),
        ("fit(target_accept='high')", lambda: fit(F.model, target_accept="high", draws=10),
         ("target_accept",)),
        ("fit(predictive_n=-5)", lambda: fit(F.model, sampler="exact", predictive_n=-5),
         ("predictive_n",)),
        ("fit(hui_walter, sampler='exact')",
         lambda: fit(M.hui_walter(F.tab, identifiability="ignore"), sampler="exact"),
         ("exact", "sampler")),
    ]:
        add("fit", label, call, *names)

    # summary ---------------------------------------------------------------------------
    for label, call, names in [
        ("summary('x')", lambda: bcm.summary("x"), ("idata", "InferenceData")),
        ("summary(metrics=42)", lambda: bcm.summary(F.idata, metrics=42), ("metrics",)),
        ("summary(metrics=['nope'])", lambda: bcm.summary(F.idata, metrics=["nope"]),
         ("nope",)),
        ("summary(hdi_prob=0)", lambda: bcm.summary(F.idata, hdi_prob=0), ("hdi_prob",)),
        ("summary(hdi_prob=1.5)", lambda: bcm.summary(F.idata, hdi_prob=1.5), ("hdi_prob",)),
        ("summary(hdi_prob='a')", lambda: bcm.summary(F.idata, hdi_prob="a"), ("hdi_prob",)),
        ("summary(classifiers=['nope'])",
         lambda: bcm.summary(F.idata, classifiers=["nope"]), ("nope",)),
        ("summary(group='nope')", lambda: bcm.summary(F.idata, group="nope"), ("nope",)),
        ("check_convergence('x')", lambda: bcm.check_convergence("x"), ("idata",
                                                                      "InferenceData")),
        ("check_convergence(rhat_max=0)",
         lambda: bcm.check_convergence(F.idata, rhat_max=0), ("rhat_max",)),
        ("check_convergence(ess_min=-1)",
         lambda: bcm.check_convergence(F.idata, ess_min=-1), ("ess_min",)),
        ("summary_exact('x')", lambda: bcm.summary_exact("x"), ("ConfusionMatrix",
                                                                "data_or_model")),
        ("summary_exact(draws=0)", lambda: bcm.summary_exact(F.cm, draws=0), ("draws",)),
        ("summary_exact(metrics=['nope'])",
         lambda: bcm.summary_exact(F.cm, metrics=["nope"]), ("nope",)),
        ("summary_exact(chains=0)", lambda: bcm.summary_exact(F.cm, chains=0), ("chains",)),
        ("exact_posterior(hui_walter model)",
         lambda: bcm.exact_posterior(M.hui_walter(F.tab, identifiability="ignore")),
         ("exact", "closed form", "hui_walter")),
        ("posterior_predictive_check('x')", lambda: bcm.posterior_predictive_check("x"),
         ("idata", "InferenceData")),
        ("posterior_predictive_check(statistic='x')",
         lambda: bcm.posterior_predictive_check(F.idata, statistic="x"), ("statistic",)),
    ]:
        add("summary", label, call, *names)

    # analysis --------------------------------------------------------------------------
    A = bcm.analysis
    y, a, b = [1, 0, 1, 0, 1, 1], [1, 0, 0, 0, 1, 1], [1, 1, 1, 0, 0, 1]
    cm2 = bcm.ConfusionMatrix(tp=20, fn=5, fp=3, tn=9)
    for label, call, names in [
        ("compare(metric='nope')", lambda: A.compare(F.cm, cm2, "nope"), ("nope",)),
        ("compare('x', 'y')", lambda: A.compare("x", "y", "acc"), ("ConfusionMatrix", "a")),
        ("compare(binary, multiclass)", lambda: A.compare(F.cm, F.mc, "acc"),
         ("multiclass", "binary")),
        ("compare(margin='a')", lambda: A.compare(F.cm, cm2, "acc", margin="a"), ("margin",)),
        ("compare(hdi_prob=2)", lambda: A.compare(F.cm, cm2, "acc", hdi_prob=2),
         ("hdi_prob",)),
        ("compare(draws=0)", lambda: A.compare(F.cm, cm2, "acc", draws=0), ("draws",)),
        ("compare(label= for binary)", lambda: A.compare(F.cm, cm2, "acc", label="x"),
         ("label",)),
        ("compare_paired(lengths)", lambda: A.compare_paired(y, a, b[:-1], "acc"),
         ("pred_b", "length")),
        ("compare_paired(metric='nope')", lambda: A.compare_paired(y, a, b, "nope"),
         ("nope",)),
        ("compare_paired(margin=nan)", lambda: A.compare_paired(y, a, b, "acc", np.nan),
         ("margin",)),
        ("compare_paired(positive='z')",
         lambda: A.compare_paired(y, a, b, "acc", positive="z"), ("positive",)),
        ("compare_paired(prior_counts=-1)",
         lambda: A.compare_paired(y, a, b, "acc", prior_counts=-1), ("prior_counts",)),
        ("compare_paired(names=('a',))",
         lambda: A.compare_paired(y, a, b, "acc", names=("a",)), ("names",)),
        ("compare_paired(draws=0)", lambda: A.compare_paired(y, a, b, "acc", draws=0),
         ("draws",)),
        ("paired_counts(lengths)", lambda: A.paired_counts(y, a, b[:-1]), ("pred_b",
                                                                         "length")),
        ("paired_table(labels miss one)",
         lambda: A.paired_table(y, a, b, labels=[1]), ("labels",)),
        ("leaderboard('x')", lambda: A.leaderboard("x"), ("leaderboard", "InferenceData")),
        ("leaderboard(one classifier)", lambda: A.leaderboard(F.cm), ("2 submissions",
                                                                      "two")),
        ("leaderboard(metric='nope')", lambda: A.leaderboard(F.cms, "nope"), ("nope",)),
        ("leaderboard(prizes=[-1])", lambda: A.leaderboard(F.cms, prizes=[-1]), ("prize",)),
        ("leaderboard(draws=0)", lambda: A.leaderboard(F.cms, draws=0), ("draws",)),
        ("leaderboard(top=0)", lambda: A.leaderboard(F.cms, top=0), ("top",)),
        ("leaderboard(label= for binary)", lambda: A.leaderboard(F.cms, label="x"),
         ("label",)),
        ("leaderboard(scheduler='x')", lambda: A.leaderboard(F.cms, scheduler="x"),
         ("scheduler",)),
        ("leaderboard_from_accuracy(120%)",
         lambda: A.leaderboard_from_accuracy({"a": 120, "b": 50}, 100), ("accuracy",
                                                                         "100")),
        ("leaderboard_from_accuracy(n=0)",
         lambda: A.leaderboard_from_accuracy({"a": 50, "b": 60}, 0), ("n",)),
        ("deception('x')", lambda: A.deception("x"), ("data", "ConfusionMatrix",
                                                      "InferenceData")),
        ("deception(rope=-1)", lambda: A.deception(F.cm, -1), ("rope",)),
        ("deception(metric='nope')", lambda: A.deception(F.cm, metric="nope"), ("nope",)),
        ("disparity(unsliced)", lambda: A.disparity(F.idata, "tpr"), ("slice",)),
        ("disparity(metric='nope')", lambda: A.disparity(F.idata_sliced, "nope"), ("nope",)),
        ("disparity(threshold=-1)",
         lambda: A.disparity(F.idata_sliced, "tpr", threshold=-1), ("threshold",)),
        ("disparity(by='nope')", lambda: A.disparity(F.idata_sliced, "tpr", by="nope"),
         ("nope",)),
        ("disparity(reference='x')",
         lambda: A.disparity(F.idata_sliced, "tpr", reference="x"), ("reference",)),
        ("alerts(threshold=2)", lambda: A.alerts(F.idata_windows, "tpr", threshold=2),
         ("threshold",)),
        ("alerts(threshold='a')", lambda: A.alerts(F.idata_windows, "tpr", threshold="a"),
         ("threshold",)),
        ("alerts(prob=1.5)", lambda: A.alerts(F.idata_windows, "tpr", prob=1.5), ("prob",)),
        ("alerts(no windows)", lambda: A.alerts(F.idata_sliced, "tpr"), ("window",)),
        ("prior_sensitivity('x')", lambda: A.prior_sensitivity("x"), ("model",)),
        ("prior_sensitivity(alternatives='nope')",
         lambda: A.prior_sensitivity(F.model, "nope"), ("nope", "alternatives")),
        ("prior_sensitivity(scale=-1)", lambda: A.prior_sensitivity(F.model, scale=-1),
         ("scale",)),
        ("sample_size(-0.1)", lambda: A.sample_size(-0.1, metric="tpr", pilot=F.cm),
         ("target_width",)),
        ("sample_size(metric='nope')", lambda: A.sample_size(0.1, metric="nope", pilot=F.cm),
         ("nope",)),
        ("sample_size(pilot='x')", lambda: A.sample_size(0.1, metric="tpr", pilot="x"),
         ("pilot",)),
        ("sample_size(assurance=1.5)",
         lambda: A.sample_size(0.1, metric="tpr", pilot=F.cm, assurance=1.5),
         ("assurance",)),
        ("sample_size_rule(mu=0)", lambda: A.sample_size_rule(0), ("mu",)),
        ("metric_uncertainty(metric='nope')", lambda: A.metric_uncertainty(F.cm, "nope"),
         ("nope",)),
        ("beta_hdi(-1, 1)", lambda: A.beta_hdi(-1, 1), ("a",)),
        ("at_prevalence(prevalence=2)", lambda: A.at_prevalence(F.cm, 2), ("prevalence",)),
        ("exact.metric_pmf(metric='nope')", lambda: bcm.exact.metric_pmf(F.cm, "nope", 5, 5),
         ("nope",)),
        ("exact.metric_pmf(n_pos=-1)", lambda: bcm.exact.metric_pmf(F.cm, "tpr", -1, 5),
         ("n_pos",)),
        ("exact.metric_pmf(n_pos=1.5)", lambda: bcm.exact.metric_pmf(F.cm, "tpr", 1.5, 5),
         ("n_pos",)),
        ("exact.metric_pmf('x')", lambda: bcm.exact.metric_pmf("x", "tpr", 5, 5),
         ("ConfusionMatrix", "cm")),
        ("exact.metric_pmf(model='x')",
         lambda: bcm.exact.metric_pmf(F.cm, "tpr", 5, 5, model="x"), ("model",)),
        ("curves.roc(lengths)", lambda: bcm.curves.roc([0.1, 0.2], [1]), ("scores",
                                                                          "y_true")),
        ("curves.roc(NaN score)", lambda: bcm.curves.roc([0.1, np.nan], [1, 0]),
         ("scores", "NaN")),
        ("curves.roc(one class)", lambda: bcm.curves.roc([0.1, 0.2], [1, 1]),
         ("y_true", "class", "negative")),
        ("curves.roc(draws=0)", lambda: bcm.curves.roc([0.1, 0.2], [1, 0], draws=0),
         ("draws",)),
        ("intervals.binomial(k > n)", lambda: bcm.intervals.binomial(5, 3), ("k",)),
        ("intervals.binomial(method='x')",
         lambda: bcm.intervals.binomial(1, 3, method="x"), ("method",)),
        ("intervals.coverage(n=0)",
         lambda: bcm.intervals.coverage("wilson", 0, [0.5]), ("n",)),
    ]:
        add("analysis", label, call, *names)

    # plots -----------------------------------------------------------------------------
    PL = bcm.plots
    for label, call, names in [
        ("metric_posterior('x')", lambda: PL.metric_posterior("x", "tpr"),
         ("idata", "InferenceData")),
        ("metric_posterior(metric='nope')", lambda: PL.metric_posterior(F.idata, "nope"),
         ("nope",)),
        ("metric_posterior(kind='pie')",
         lambda: PL.metric_posterior(F.idata, "tpr", kind="pie"), ("kind",)),
        ("metric_posterior(hdi_prob=0)",
         lambda: PL.metric_posterior(F.idata, "tpr", hdi_prob=0), ("hdi_prob",)),
        ("metric_posterior(classifiers=['nope'])",
         lambda: PL.metric_posterior(F.idata, "tpr", classifiers=["nope"]), ("nope",)),
        ("metric_posterior(ax='x')", lambda: PL.metric_posterior(F.idata, "tpr", ax="x"),
         ("ax", "Axes")),
        ("curve_bands('x')", lambda: PL.curve_bands("x"), ("Curve",)),
        ("curve_bands([])", lambda: PL.curve_bands([]), ("curves", "empty")),
        ("curve_bands(ROC and PR)", lambda: PL.curve_bands([F.roc, F.pr]), ("ROC",
                                                                           "precision")),
        ("coverage({})", lambda: PL.coverage({}), ("frames", "empty")),
        ("coverage(frame without p)", lambda: PL.coverage(df({"x": [1]})), ("coverage",
                                                                            "'p'")),
        ("metric_pmf(n_pos=-1)", lambda: PL.metric_pmf(F.cm, "tpr", -1, 5), ("n_pos",)),
        ("leaderboard('x')", lambda: PL.leaderboard("x"), ("Leaderboard", "board")),
        ("prior_sensitivity('x')", lambda: PL.prior_sensitivity("x"), ("PriorSensitivity",
                                                                       "result")),
        ("disparity('x')", lambda: PL.disparity("x"), ("Disparity", "result")),
        ("sample_size_curve('x')", lambda: PL.sample_size_curve("x"), ("SampleSizePlan",
                                                                       "plan")),
        ("alert_timeline('x')", lambda: PL.alert_timeline("x"), ("Alerts", "result")),
    ]:
        add("plots", label, call, *names)

    # report ----------------------------------------------------------------------------
    folder = F.folder
    for label, call, names in [
        ("report('x')", lambda: bcm.report("x"), ("idata", "InferenceData")),
        ("report(path='x.pdf')", lambda: bcm.report(F.idata, folder / "x.pdf"), ("x.pdf",
                                                                                ".pdf")),
        ("report(format='pdf')", lambda: bcm.report(F.idata, format="pdf"), ("format",)),
        ("report(hdi_prob=2)", lambda: bcm.report(F.idata, hdi_prob=2), ("hdi_prob",)),
        ("report(sensitivity='x')", lambda: bcm.report(F.idata, sensitivity="x"),
         ("sensitivity",)),
        ("report(path in a missing folder)",
         lambda: bcm.report(F.idata, folder / "nope" / "r.html"), ("nope", "r.html")),
        ("report(format='markdown', path='r.html')",
         lambda: bcm.report(F.idata, folder / "r.html", format="markdown"), ("r.html",
                                                                            "format")),
    ]:
        add("report", label, call, *names)

    # cli -------------------------------------------------------------------------------
    csv = {p.stem: str(p) for p in folder.glob("*.csv")}
    cells = ["--tp", "26", "--fn", "0", "--fp", "2", "--tn", "6"]
    mat = ["--matrix", "a,b,c; 5,1,0; 1,7,1; 0,1,9"]
    s = ["summarize"]
    for argv, names in [
        ([*s, "--tp", "x", "--fn", "0", "--fp", "2", "--tn", "6"], ("--tp",)),
        ([*s, "--tp", "-1", "--fn", "0", "--fp", "2", "--tn", "6"], ("tp",)),
        ([*s, "--tp", "1.5", "--fn", "0", "--fp", "2", "--tn", "6"], ("tp",)),
        ([*s, "--tp", "1", "--fn", "1"], ("--fp", "--tn")),
        ([*s], ("--tp", "--matrix", "--csv")),
        ([*s, *cells, *mat], ("--matrix", "--tp")),
        ([*s, "--matrix", "a,b; 1"], ("matrix", "square")),
        ([*s, "--matrix", "a,b; 1,x; 2,3"], ("matrix", "count")),
        ([*s, "--csv", "no-such.csv"], ("no-such.csv",)),
        ([*s, "--csv", csv["empty"]], ("empty.csv",)),
        ([*s, "--csv", csv["header"]], ("header.csv",)),
        ([*s, "--csv", csv["notruth"]], ("true labels", "--truth")),
        ([*s, "--csv", csv["three"], "--positive", "a"], ("--positive",)),
        ([*s, "--csv", csv["blank"]], ("y_true",)),
        ([*s, "--csv", csv["ok"], "--labels", "0"], ("labels",)),
        ([*s, "--csv", csv["ok"], "--classifiers", "nope"], ("nope",)),
        ([*s, "--csv", csv["ok"], "--truth", "nope"], ("nope",)),
        ([*s, "--csv", csv["words"]], ("--positive",)),
        ([*s, "--csv", csv["ok"], "--positive", "z"], ("positive", "'z'")),
        ([*s, "--csv", csv["ok"], "--groups", "nope"], ("nope",)),
        ([*s, "--csv", csv["dates"], "--time", "when", "--window", "7D"], ("when",)),
        ([*s, "--csv", csv["ok"], "--window", "7D"], ("time",)),
        ([*s, *cells, "--groups", "sex"], ("--csv",)),
        ([*s, *cells, "--prior", "tpr"], ("--prior",)),
        ([*s, *cells, "--prior", "tpr=beta:1"], ("tpr",)),
        ([*s, *cells, "--prior", "sens=beta:1,1"], ("sens",)),
        ([*s, *mat, "--prior", "rows=x"], ("rows",)),
        ([*s, *cells, "--metrics", "nope"], ("nope",)),
        ([*s, *cells, "--hdi-prob", "0"], ("hdi_prob", "--hdi-prob")),
        ([*s, *cells, "--hdi-prob", "2"], ("hdi_prob", "--hdi-prob")),
        ([*s, *cells, "--draws", "0"], ("draws",)),
        ([*s, *cells, "--draws", "-5"], ("draws",)),
        ([*s, *cells, "--chains", "0"], ("chains",)),
        ([*s, *cells, "--seed", "-1"], ("seed",)),
        ([*s, *cells, "--seed", "x"], ("--seed",)),
        ([*s, *cells, "--model", "nope"], ("--model",)),
        ([*s, *cells, "--model", "groups"], ("groups", "--model")),
        ([*s, *cells, "--prevalence", "x"], ("--prevalence",)),
        ([*s, *cells, "--prevalence", "2"], ("prevalence",)),
        ([*s, *mat, "--prevalence", "0.5"], ("prevalence",)),
        ([*s, *cells, "--sampler", "foo"], ("--sampler",)),
        (["unlabeled", "--counts", "++=40,+-=3"], ("pattern",)),
        (["unlabeled", "--counts", "++40"], ("pattern=count", "++40")),
        (["unlabeled", "--counts", "++=x,+-=1,-+=1,--=1"], ("x", "count")),
        (["unlabeled", "--csv", csv["one"]], ("two classifiers", "classifier")),
        (["unlabeled", "--csv", csv["three"]], ("label", "two")),
        (["unlabeled", "--csv", csv["ok"], "--positive", "z"], ("positive", "'z'")),
        (["unlabeled", "--csv", "no-such.csv"], ("no-such.csv",)),
        (["unlabeled", "--csv", csv["ok"], "--population-column", "nope"], ("nope",)),
        (["unlabeled", "--counts", "++=40,+-=3,-+=7,--=100", "--dependence", "A~Z"],
         ("Z",)),
        (["unlabeled", "--counts", "++=40,+-=3,-+=7,--=100", "--prior", "x=beta:1,1"],
         ("x",)),
        (["unlabeled", "--counts", "++=40,+-=3,-+=7,--=100", "--metrics", "nope"],
         ("nope",)),
        (["unlabeled", "--counts", "++=40,+-=3,-+=7,--=100", "--draws", "0"], ("draws",)),
        (["unlabeled"], ("--counts", "--csv")),
        (["nope"], ("nope", "choose")),
    ]:
        shown = [Path(x).name if x in csv.values() else x for x in argv]
        add("cli", "bayescm " + " ".join(shown), _raises_cli(argv), *names)
    return out


# -- running ------------------------------------------------------------------------------
def _message(exc: BaseException) -> str:
    if isinstance(exc, KeyError) and exc.args:
        return str(exc.args[0])
    return str(exc)


def verdict(case: Case, exc: BaseException | None) -> tuple[str, str]:
    """The outcome of one case (module notes) and the error as shown."""
    if exc is None:
        return "accepted", "(no error)"
    if type(exc).__name__ == "Hang":
        return "hang", str(exc)
    if isinstance(exc, CliExit):
        err = exc.err.strip()
        shown = err.splitlines()[-1] if err else "(no message)"
        if exc.code == 0:
            return "accepted", "(exit 0)"
        if "Traceback" in err:
            return "raw", shown
        named = any(n.lower() in err.lower() for n in case.names)
        return ("clear" if named else "unclear"), shown
    msg = _message(exc)
    shown = f"{type(exc).__name__}: {' '.join(msg.split())[:200]}"
    module = type(exc).__module__.split(".")[0]
    allowed = ALLOWED + ((OSError,) if case.area == "report" else ())
    if not isinstance(exc, allowed) or module not in ("builtins", "bayescm"):
        return "raw", shown
    named = any(n.lower() in msg.lower() for n in case.names)
    return ("clear" if named else "unclear"), shown


@contextlib.contextmanager
def _alarm(seconds: float, what: str) -> Iterator[None]:
    """The time bound of ``tests/timebound.py`` (loaded from there when present)."""
    path = Path(__file__).resolve().parents[1] / "tests" / "timebound.py"
    spec = importlib.util.spec_from_file_location("bayescm_timebound", path)
    if spec is None or threading.current_thread() is not threading.main_thread():
        yield
        return
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with module.time_bound(seconds, what):
        yield


def run_case(case: Case, bound: Callable[[float, str], Any] | None = None) -> Outcome:
    """Run one case within its time bound (``bound(seconds, what)``, a context manager:
    ``tests.timebound.time_bound``; default the same, loaded from the file)."""
    guard = bound or _alarm
    exc: BaseException | None = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            with guard(case.bound, case.label):
                case.call()
        except KeyboardInterrupt:
            raise
        except BaseException as err:  # every outcome is recorded
            exc = err
    found, shown = verdict(case, exc)
    return Outcome(case, found, shown)


def tallies(outcomes: list[Outcome]) -> pd.DataFrame:
    """Per area: N, clear, unclear, raw, accepted, hang, and not clear (k of N)."""
    frame = pd.DataFrame({"area": [o.case.area for o in outcomes],
                          "verdict": [o.verdict for o in outcomes]})
    table = pd.crosstab(frame["area"], frame["verdict"]).reindex(
        columns=["clear", "unclear", "raw", "accepted", "hang"], fill_value=0)
    table = table.reindex([a for a in AREAS if a in table.index])
    table.insert(0, "N", table.sum(axis=1))
    table["not clear"] = table["N"] - table["clear"]
    table.loc["all"] = table.sum()
    return table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--all", action="store_true", help="list every case, not only "
                                                           "those without a clear error")
    parser.add_argument("--area", choices=AREAS, default=None)
    args = parser.parse_args(argv)
    chosen = [c for c in cases() if args.area in (None, c.area)]
    outcomes = [run_case(c) for c in chosen]
    for o in outcomes:
        if args.all or o.verdict != "clear":
            print(o.line())
    table = tallies(outcomes)
    print("\nRaw or unclear errors (and inputs accepted or hanging), per area:")
    print(table.to_string())
    print("\n" + ", ".join(f"{a}: {int(r['not clear'])} of {int(r['N'])}"
                           for a, r in table.iterrows()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
