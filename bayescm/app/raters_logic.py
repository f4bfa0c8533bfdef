r"""The No-labels page's ratings mode: many raters, K classes, a few gold labels.

The page's second kind of data (the first is the agreement table of binary classifiers,
:mod:`bayescm.app.nolabels_logic`): ratings typed or pasted as a table, wide (header
``item, A, B, C`` — one row per item, one column per rater, an empty cell where a rater
gave no rating) or long (header ``item, rater, rating``, one row per rating, the layout
of crowd-kit and of R's ``rater``), with an optional ``gold`` column holding an item's
known class.  It fits the Dawid–Skene model (:func:`bayescm.models.dawid_skene`: Dawid &
Skene, "Maximum likelihood estimation of observer error-rates using the EM algorithm",
1979) and shows the class prevalence, each rater's accuracy and recall and precision
per class (a rater is a classifier), and each item's most probable class.

As on the agreement side, :func:`build_ratings` reads the inputs and builds the model in
the server's process, so bad input gets its message next to its field at once and the
identifiability verdict shows before any draw; the fit runs in a
:class:`~bayescm.app.nolabels_logic.FitJob` (a child process).
"""

from __future__ import annotations

import dataclasses
import functools
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

import bayescm as bcm
from bayescm.app import fitjob
from bayescm.app.downloads import new_figure
from bayescm.app.pages_common import Built, InputError, field, prior_lines, put_prior, read_csv_text

if TYPE_CHECKING:
    import pymc as pm
    from matplotlib.figure import Figure

__all__ = ["DEFAULT_RATINGS", "MAX_CLASSES", "MAX_ITEMS", "MAX_RATERS", "Built",
           "RatersResult", "build_ratings", "parse_rating_priors", "parse_ratings",
           "summarise_ratings"]

DEFAULT_RATINGS = """item, A, B, C, D, gold
1, cat, cat, cat, dog, cat
2, dog, dog, dog, dog,
3, fox, fox, dog, fox,
4, cat, cat, cat, cat,
5, dog, cat, dog, dog, dog
6, cat, cat, fox, cat,
7, fox, fox, fox, fox, fox
8, dog, dog, dog, cat,
9, cat, cat, cat, cat,
10, dog, dog, fox, dog,
11, cat, dog, cat, cat,
12, fox, fox, fox, dog,
13, cat, cat, cat, cat,
14, dog, dog, dog, dog,
15, cat, cat, cat, ,
16, fox, dog, fox, fox,
17, cat, cat, dog, cat,
18, dog, dog, dog, ,
19, cat, cat, cat, cat,
20, fox, fox, fox, fox,"""
"""Four raters label 20 items as cat, dog or fox; three items have a gold label."""

# The page builds the model on every edit in the server's event loop: bounds that keep
# an edit under a second and a fit within the server's limits (bayescm.app.fitjob).
MAX_ITEMS = 5_000
MAX_RATERS = 30
MAX_CLASSES = 20
MAX_RATINGS = 100_000
_LONG = ("item", "rater", "rating")


def _label(value: Any) -> Any:
    """Whole-number floats (a column with empty cells) as integers, text stripped."""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def parse_ratings(text: str) -> bcm.RatingsTable:
    """Ratings typed as a table: wide (``item, A, B, ...[, gold]``) or long
    (``item, rater, rating[, gold]``).

    Examples
    --------
    >>> rt = parse_ratings("item, A, B, C\\n1, x, x, y\\n2, y, y, \\n3, x, y, x")
    >>> rt.raters, rt.labels, rt.n_ratings
    (('A', 'B', 'C'), ('x', 'y'), 8)
    >>> parse_ratings("item, rater, rating, gold\\n1, A, x, x\\n1, B, y, x").gold.to_dict()
    {1: 'x'}
    """
    frame = read_csv_text(text, "ratings")
    columns = [c.lower() for c in frame.columns]
    if frame.empty or len(frame.columns) < 2:
        raise InputError("ratings", "Give a header line (item, A, B, ... for one column per "
                                    "rater, or item, rater, rating for one row per rating) "
                                    "and one row below it per item or rating.")
    frame.columns = [c.lower() if c.lower() in (*_LONG, "gold") else c
                     for c in frame.columns]
    if "item" not in frame.columns:
        raise InputError("ratings", f"The first line must name an 'item' column, got "
                                    f"{list(frame.columns)}.")
    if len(frame) > MAX_ITEMS * MAX_RATERS or frame.shape[0] * frame.shape[1] > MAX_RATINGS:
        raise InputError("ratings", f"The table has {frame.size:,} cells; this page reads at "
                                    f"most {MAX_RATINGS:,}. Use bcm.RatingsTable and "
                                    "bcm.models.dawid_skene in Python for more.")
    for col in frame.columns:
        if col != "item":
            frame[col] = frame[col].map(lambda v: None if pd.isna(v) or v == "" else _label(v))
    gold = "gold" if "gold" in frame.columns else None
    with field("ratings"):
        if set(_LONG) <= set(columns):
            table = bcm.RatingsTable.from_long(frame, gold=gold)
        else:
            raters = [c for c in frame.columns if c not in ("item", "gold")]
            if not raters:
                raise ValueError("Name one column per rater after 'item' (e.g. 'item, A, B, "
                                 "C'), or give long data with 'item, rater, rating'.")
            table = bcm.RatingsTable.from_wide(frame, item="item", raters=raters, gold=gold)
    if table.n_items > MAX_ITEMS or table.n_raters > MAX_RATERS \
            or table.n_classes > MAX_CLASSES:
        raise InputError("ratings", f"{table.n_items:,} items, {table.n_raters} raters and "
                                    f"{table.n_classes} classes: this page fits at most "
                                    f"{MAX_ITEMS:,} items, {MAX_RATERS} raters and "
                                    f"{MAX_CLASSES} classes. Use bcm.models.dawid_skene in "
                                    "Python for more.")
    return table


def parse_rating_priors(text: str) -> dict[str, Any]:
    """Priors one per line: ``prevalence: dirichlet:3``, ``confusion: diagonal:8,1`` (every
    rater's rows) or ``confusion A: diagonal:8,1`` (rater A's), in the grammar of
    :func:`bayescm.priors.parse` (the CLI's and Python's).

    >>> parse_rating_priors("prevalence: dirichlet:3\\nconfusion A: diagonal:8,1")
    {'prevalence': 'dirichlet:3', 'confusion': {'A': 'diagonal:8,1'}}
    """
    out: dict[str, Any] = {}
    usage = "write 'prevalence: dirichlet:a' or 'confusion [rater]: diagonal:correct,wrong'"
    for i, name, unit, spec in prior_lines(text, usage):
        if name not in ("prevalence", "confusion"):
            line = text.splitlines()[i - 1].strip()
            raise InputError("priors", f"Line {i}: {usage}, got {line!r}.")
        if unit and name == "prevalence":
            raise InputError("priors", f"Line {i}: the prevalence has one prior (no "
                                       f"rater): 'prevalence: {spec}'.")
        put_prior(out, i, name, unit, spec)
    return out


def build_ratings(state: Any) -> Built:
    """Read the ratings and priors of a page state (fields ``ratings``, ``priors``,
    ``draws``, ``tune``, ``chains``, ``seed``, ``hdi_prob``) and build the model.

    Examples
    --------
    >>> from bayescm.app.nolabels_logic import NoLabelsState
    >>> built = build_ratings(NoLabelsState(mode="ratings"))
    >>> built.identified, built.table.n_items, built.table.labels
    ('data', 20, ('cat', 'dog', 'fox'))
    """
    table = parse_ratings(state.ratings)
    priors = parse_rating_priors(state.priors)
    fitjob.check_sampler(state)
    with field("hdi_prob"):
        bcm.stats.check_hdi_prob(state.hdi_prob)
    with field("priors"), warnings.catch_warnings():
        # the verdict is shown on the page, not raised as a warning
        warnings.simplefilter("ignore", bcm.models.IdentifiabilityWarning)
        model = bcm.models.dawid_skene(table, priors=priors)
    fitjob.check_memory(model, state)
    attrs = bcm.models.family_of(model).attrs(bcm.models.spec_of(model))
    return Built(table, model, attrs["identifiability_status"], attrs["identifiability"])


@dataclasses.dataclass(frozen=True)
class RatersResult:
    """What the page shows after sampling the ratings' model."""

    path: Path  # the fit as NetCDF
    prevalence: pd.DataFrame  # class -> mean, sd, hdi_lower, hdi_upper
    summary: pd.DataFrame  # rows (rater, metric, class): mean, sd, median, HDI, MCSE
    items: pd.DataFrame  # item -> class (most probable), probability, hdi_lower, hdi_upper
    converged: bool
    convergence: str
    hdi_prob: float

    def figure(self) -> Figure:
        """Each rater's accuracy and recall per class: posterior means and HDIs."""
        t = self.summary.reset_index()
        t = t[t["metric"].isin(["acc", "tpr"])]
        fig, ax = new_figure(6, 0.9 + 0.26 * len(t), left=1.8)
        y = np.arange(len(t))[::-1]
        for yi, (_, row) in zip(y, t.iterrows(), strict=True):
            color = "#4c72b0" if row["metric"] == "acc" else "#55a868"
            ax.plot([row["hdi_lower"], row["hdi_upper"]], [yi, yi], color=color, lw=2)
            ax.plot(row["mean"], yi, "o", color=color)
        names = [f"{r} accuracy" if m == "acc" else f"{r} recall [{c}]"
                 for r, m, c in zip(t["classifier"], t["metric"], t["class"], strict=True)]
        ax.set_yticks(y, names)
        ax.set_xlim(0, 1)
        ax.set_xlabel(f"posterior mean and {self.hdi_prob:.0%} HDI")
        return fig


METRICS = ("acc", "tpr", "ppv")


def summarise_ratings(idata: Any, path: Path, *, hdi_prob: float = 0.95) -> RatersResult:
    """The page's tables from a fit of :func:`bayescm.models.dawid_skene`.

    Examples
    --------
    >>> from bayescm.app.nolabels_logic import NoLabelsState
    >>> built = build_ratings(NoLabelsState(mode="ratings"))
    >>> with warnings.catch_warnings():   # far too short to converge, which is reported
    ...     warnings.simplefilter("ignore")
    ...     idata = bcm.fit(built.model, draws=100, tune=100, chains=2, random_seed=1)
    >>> res = summarise_ratings(idata, "fit.nc")
    >>> list(res.prevalence.index), res.items.loc[7, "class"], res.converged
    (['cat', 'dog', 'fox'], 'fox', False)
    """
    table = bcm.summary(idata, metrics=list(METRICS), hdi_prob=hdi_prob)
    keep = ["mean", "sd", "median", "hdi_lower", "hdi_upper", "mcse_mean"]
    table = table[[c for c in keep if c in table.columns]]
    table = table.reorder_levels(["classifier", "metric", "class"]).sort_index(
        level=["classifier", "metric"], sort_remaining=False)
    prevalence = bcm.idata.group(idata, "posterior")["prevalence"]
    draws = prevalence.stack(sample=("chain", "draw")).transpose("class", "sample")
    lower, upper = bcm.stats.hdi(draws.values, hdi_prob)
    prevalence = pd.DataFrame(
        {"mean": draws.mean("sample").values, "sd": draws.std("sample").values,
         "hdi_lower": lower, "hdi_upper": upper},
        index=pd.Index([_label(c) for c in draws["class"].values], name="class"))
    classes = bcm.analysis.item_classes(idata, hdi_prob=hdi_prob)
    best = classes.most_probable
    pick = [classes.mean.columns.get_loc(c) for c in best]
    rows = np.arange(len(best))
    items = pd.DataFrame({"class": best,
                          "probability": classes.mean.to_numpy()[rows, pick],
                          "hdi_lower": classes.hdi_lower.to_numpy()[rows, pick],
                          "hdi_upper": classes.hdi_upper.to_numpy()[rows, pick]},
                         index=classes.mean.index)
    report = bcm.check_convergence(idata)
    return RatersResult(Path(path), prevalence, table, items, report.ok, report.message(),
                        hdi_prob)


def _model_of(state: Any) -> pm.Model:
    """The ratings model, built again in the fit's child process."""
    return build_ratings(state).model


def fit_job(state: Any, *, directory: str | Path | None = None) -> fitjob.FitJob:
    """A :class:`~bayescm.app.fitjob.FitJob` fitting the ratings of ``state`` (its NetCDF
    in ``directory``, default a new temporary one)."""
    return fitjob.FitJob(state, model=functools.partial(_model_of, state),
                         summary=functools.partial(summarise_ratings, hdi_prob=state.hdi_prob),
                         directory=directory)
