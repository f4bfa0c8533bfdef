r"""What the One-classifier page computes, without Panel: inputs in, library results out.

The page's numbers are the library's, for the same input:

* the posterior: the draws of ``bcm.fit(model, sampler="exact", draws=DRAWS,
  chains=4, random_seed=seed)`` of ``three_beta`` (binary) or ``multiclass_rows``
  (K classes), with the page's priors -- exact i.i.d. draws of the conjugate
  posterior, no MCMC -- made from the closed form without building the PyMC model
  (:func:`analyse`); the NetCDF download runs ``bcm.fit`` itself (:meth:`Analysis.fit`);
* the table: ``bcm.summary(idata, metrics=..., hdi_prob=...)`` (its ``hdi_width`` is
  Tötsch & Hoffmann's metric uncertainty);
* worse than guessing: ``bcm.analysis.deception(idata)``, :math:`P(BM < 0 \mid D)`
  (Powers' informedness; multiclass informedness for K classes);
* the predictive pmf: ``bcm.exact.metric_pmf`` at the future test set's class sizes;
* the sample size: ``bcm.analysis.sample_size`` with the matrix as pilot, and the
  closed-form normal rule ``sample_size_rule`` next to it.

Priors are typed as text in the library's one grammar (:func:`bayescm.priors.parse`,
the same as ``bcm.priors.parse`` in Python and ``--prior NAME=TEXT`` in the CLI).
Binary (three-Beta model: prevalence, TPR, TNR, each a Beta): ``beta:a,b``; ``flat``,
``jeffreys``; ``mean:m;weight:w``; ``elicit:mode,lower,prob`` (a Beta with that mode and
:math:`P(X > lower) = prob`, :func:`bayescm.priors.elicit_beta`);
``elicit_upper:mode,upper,prob`` (:math:`P(X < upper) = prob`); ``pert:min,mode,max``
(:func:`bayescm.priors.beta_pert`).

K classes (``multiclass_rows``: class prevalence :math:`\pi \sim \mathrm{Dirichlet}(\alpha)`,
and actual class ``a``'s row of predicted-class probabilities
:math:`\rho_a \sim \mathrm{Dirichlet}(\beta_{a\cdot})`), one text per parameter
(:func:`parse_k_prior`), numbers in the matrix's class order:

* ``dirichlet:c`` -- every concentration ``c`` (``dirichlet:1`` is flat);
  ``dirichlet:a1,...,aK`` -- the concentrations; for the rows also a K×K matrix,
  ``dirichlet:row1;row2;...`` (row ``a`` for actual class ``a``);
* ``flat``, ``jeffreys``, ``perks`` -- :meth:`bayescm.priors.Dirichlet.flat` (1),
  ``.jeffreys`` (1/2), ``.perks`` (1/K);
* ``mean:m1,...,mK;weight:w`` -- :func:`bayescm.priors.dirichlet_from_mean`:
  expected proportions worth ``w`` pseudo-observations, :math:`\alpha_j = w\,m_j`
  (for the rows, one mean row for every class or K rows ``mean:row1;...;rowK;weight:w``);
* ``diagonal:correct,wrong`` (rows) -- :meth:`bayescm.priors.Dirichlet.diagonal`: each
  class's recall is a priori Beta(correct, (K - 1) wrong).

Each is then checked with the data by the family's own closed form (its prior
resolution and propriety check), so a wrong length, a matrix for the prevalence or a
prior whose posterior would be improper gets the library's message.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from bayescm.data.confusion import ConfusionMatrix
from bayescm.data.multiclass import MulticlassConfusionMatrix
from bayescm.family import default_family
from bayescm.metrics import registry_for
from bayescm.priors import Dirichlet

__all__ = ["EXAMPLE", "K_PRIORS", "Analysis", "analyse", "forest", "k_prior", "matrix",
           "parse_k_prior", "parse_prior", "predictive", "priors_of", "sample_size",
           "table_rows"]

# Tötsch & Hoffmann's cocaine-purity classifier (Rodrigues et al. 2013), bcm.datasets.cocaine()
EXAMPLE = {"tp": 26, "fn": 0, "fp": 2, "tn": 6}
EXAMPLE_MATRIX = "cat,dog,bird; 50,3,2; 4,40,6; 1,2,30"
# Classes of a K-class matrix: every edit draws the exact posterior in the server's event
# loop; at K = 20 that takes about 1.3 s and 210 MB, at K = 30 2.8 s and 450 MB, at
# K = 100 3.5 GB (a link can carry such a matrix: checked before anything is drawn)
MAX_CLASSES = 20
DEFAULT_METRICS = ("tpr", "tnr", "ppv", "npv", "acc", "bm")
# Draws per chain (4 chains).  Prevalence, TPR and TNR (and a class's recall) are shown
# exactly, from their Beta posteriors (bcm.summary's exact rows: the cocaine TNR is
# 0.432-0.946 here as in the CLI and the README); the other metrics come from 20,000
# i.i.d. draws, whose HDI bounds have a Monte Carlo sd of about 0.004 (the table's
# mcse_hdi_* columns), at a cost a shared server can give every edit.
DRAWS = 5000
RATES = ("prevalence", "tpr", "tnr")
# The K-class model's priors: class prevalence and the rows (multiclass_rows' names)
K_PRIORS = ("prevalence", "rows")
K_PRESETS = ("flat", "jeffreys", "perks")
CLASSIFIER = "your classifier"


def matrix(kind: str, *, tp: int = 0, fn: int = 0, fp: int = 0, tn: int = 0,
           text: str = "") -> ConfusionMatrix | MulticlassConfusionMatrix:
    """The confusion matrix the page describes: four cells, or a K-class matrix as text.

    ``text`` is the CLI's ``--matrix`` format (``"cat,dog; 5,1; 2,7"``: labels, then
    one row per actual class) or a block pasted from a spreadsheet: lines are rows,
    tabs or commas separate cells.  Without a line of labels the classes are 0..K-1.

    Examples
    --------
    >>> matrix("multiclass", text="a\\tb\\n5\\t1\\n2\\t7").counts[0].tolist()
    [[5, 1], [2, 7]]
    >>> list(matrix("multiclass", text="5,1;2,7").labels)
    [0, 1]
    """
    if kind == "binary":
        return ConfusionMatrix(tp=tp, fn=fn, fp=fp, tn=tn, classifier=CLASSIFIER)
    if kind != "multiclass":
        raise ValueError(f"kind must be 'binary' or 'multiclass', got {kind!r}.")
    from bayescm.data.text import parse_matrix

    rows = [re.split(r"\s*[,\t]\s*", line.strip())
            for line in re.split(r"[;\n]", text.strip()) if line.strip()]
    text = "; ".join(",".join(r) for r in rows)
    first = rows[0] if rows else []
    numeric = bool(first) and all(re.fullmatch(r"[-+.\deE]+", x) for x in first)
    if numeric and len(rows) == len(first):  # no line of labels: classes 0..K-1
        labels, counts = list(range(len(first))), parse_matrix(
            ",".join(map(str, range(len(first)))) + "; " + text, what="the matrix")[1]
    else:
        labels, counts = parse_matrix(text, what="the matrix")
    if len(labels) > MAX_CLASSES:  # before any draw: a link may carry a 100 x 100 matrix
        raise ValueError(
            f"The matrix has {len(labels)} classes; this page analyses at most {MAX_CLASSES} "
            "so that every reader's edits stay quick. In Python, bcm.summary_exact("
            "bcm.MulticlassConfusionMatrix(counts, labels=labels)) summarises any K.")
    return MulticlassConfusionMatrix(counts, labels=labels, classifier=CLASSIFIER)


def parse_prior(text: str, name: str) -> Any:
    """A Beta prior from the page's text: :func:`bayescm.priors.parse` with
    ``kind="beta"`` (the grammar and the messages are the library's).

    Examples
    --------
    >>> parse_prior("beta:2,3", "tpr"), parse_prior("pert:0,0.8,1", "tpr")
    (Beta(2, 3), Beta(4.2, 1.8))
    >>> parse_prior("jeffreys", "tnr")
    Beta(0.5, 0.5)
    """
    from bayescm import priors

    return priors.parse(text, kind="beta", name=name)


def priors_of(texts: dict[str, str]) -> dict[str, Any]:
    """``{rate: Beta}`` of the three-Beta model from the page's prior texts."""
    return {name: parse_prior(text, name) for name, text in texts.items()}


def parse_k_prior(text: str, name: str, k: int) -> Dirichlet:
    """A Dirichlet prior of the K-class model from the page's text:
    :func:`bayescm.priors.parse` with ``kind="dirichlet"`` and ``k`` classes.

    ``k`` is the number of classes, for the forms that do not list K numbers
    (``dirichlet:c``, the presets, ``diagonal``).  The lengths and the parameter a
    matrix may be given for are checked with the data by :func:`k_prior`.

    Examples
    --------
    >>> parse_k_prior("dirichlet:2", "prevalence", 3), parse_k_prior("jeffreys", "rows", 2)
    (Dirichlet(2, 2, 2), Dirichlet(0.5, 0.5))
    >>> parse_k_prior("mean:0.5,0.3,0.2;weight:20", "prevalence", 3)
    Dirichlet(10, 6, 4)
    >>> parse_k_prior("dirichlet:5,1;1,5", "rows", 2)
    Dirichlet([[5, 1], [1, 5]])
    >>> parse_k_prior("diagonal:8,1", "rows", 3)
    Dirichlet([[8, 1, 1], [1, 8, 1], [1, 1, 8]])
    """
    from bayescm import priors

    return priors.parse(text, k=k, kind="dirichlet", name=name)


def k_prior(text: str, name: str, data: MulticlassConfusionMatrix) -> Dirichlet:
    """The prior ``name`` of the K-class model read from ``text``, checked with ``data``.

    The check is the family's own: its closed form with this prior resolves it against
    the data's classes and refuses a prior whose posterior would be improper.  Blank
    text is the family's default for these classes (Dirichlet(2/K) per cell), the prior
    ``bcm.models.multiclass_rows`` uses when none is given.

    Examples
    --------
    >>> mc = matrix("multiclass", text="a,b; 5,1; 2,7")
    >>> k_prior("diagonal:8,1", "rows", mc)
    Dirichlet([[8, 1], [1, 8]])
    >>> k_prior("dirichlet:1,2,3", "prevalence", mc)
    Traceback (most recent call last):
    ...
    bayescm.priors.PriorError: Prior for 'prevalence' needs 2 concentrations.
    """
    family = default_family(registry_for(data).kind)
    if not str(text).strip():
        return family.closed_form(data).spec.priors[name][0]
    prior = parse_k_prior(text, name, data.n_classes)
    family.closed_form(data, {name: prior})
    return prior


@dataclass(frozen=True)
class Analysis:
    """One input's results: the exact fit (``idata``), its summary table and the deception risk."""

    data: ConfusionMatrix | MulticlassConfusionMatrix
    priors: dict[str, Any]
    idata: Any
    table: pd.DataFrame
    deception: pd.DataFrame
    hdi_prob: float
    seed: int
    draws: int

    def fit(self) -> Any:
        """The full ``bcm.fit(model, sampler="exact")`` of the same input and seed: the
        same posterior draws plus the prior and predictive groups and the model record
        (``bcm.rebuild``), for the NetCDF download."""
        import bayescm as bcm

        family = default_family(registry_for(self.data).kind)
        model = getattr(bcm.models, family.name)(self.data, priors=self.priors or None)
        return bcm.fit(model, sampler="exact", draws=self.draws, chains=4,
                       random_seed=self.seed)


def analyse(data: ConfusionMatrix | MulticlassConfusionMatrix, *,
            priors: dict[str, Any] | None = None, metrics: Sequence[str] = DEFAULT_METRICS,
            hdi_prob: float = 0.95, seed: int = 1, draws: int = DRAWS,
            also: Sequence[str] = ()) -> Analysis:
    """The exact posterior of ``data`` and what the page shows of it.

    The posterior is the family's closed form drawn without building a PyMC model
    (``bayescm.inference.fit_closed_form``: the draws of ``bcm.fit(model,
    sampler="exact")`` with the same seed), with only the metrics shown computed:
    this is what keeps an edit's update within half a second.  ``also``: metrics
    computed (for a plot) but not in the table.

    Examples
    --------
    >>> import bayescm as bcm
    >>> a = analyse(bcm.ConfusionMatrix(**EXAMPLE, classifier=CLASSIFIER), metrics=["tnr"])
    >>> lo, hi = a.table.loc[(CLASSIFIER, "tnr"), ["hdi_lower", "hdi_upper"]]
    >>> round(float(lo), 4), round(float(hi), 4)      # TNR ~ Beta(7, 3), exactly
    (0.4324, 0.9458)
    """
    import bayescm as bcm
    from bayescm import idata as idata_mod
    from bayescm.inference.fit import fit_closed_form

    if not metrics:
        raise ValueError("Choose at least one metric.")
    family = default_family(registry_for(data).kind)
    priors = dict(priors or {})
    tree = fit_closed_form(family, data, priors=priors or None, draws=draws, chains=4,
                           random_seed=seed, metrics=list(dict.fromkeys([*metrics, *also, "bm"])))
    table = bcm.summary(tree, metrics=list(metrics), hdi_prob=hdi_prob)
    # deception reads an arviz.InferenceData: the same groups, wrapped
    idata = idata_mod.make({g: tree[g].to_dataset() for g in tree.children}, tree.attrs)
    return Analysis(data, priors, idata, table, bcm.analysis.deception(idata), hdi_prob,
                    seed, draws)


def table_rows(table: pd.DataFrame) -> pd.DataFrame:
    """The summary of one classifier, one row per metric (``tpr[cat]`` for a class).

    Columns ``label``, ``mean``, ``median``, ``hdi_lower``, ``hdi_upper``,
    ``hdi_width`` (the metric uncertainty), ``plug_in``, then ``mcse_hdi_lower``,
    ``mcse_hdi_upper`` (Monte Carlo errors of the bounds) and ``exact`` (the row is its
    closed-form Beta marginal); index the row keys.

    Examples
    --------
    >>> import bayescm as bcm
    >>> a = analyse(bcm.ConfusionMatrix(**EXAMPLE), metrics=["tpr", "tnr"], draws=500)
    >>> rows = table_rows(a.table)
    >>> list(rows.index), float(rows.loc["tnr", "plug_in"]), rows.loc["tnr", "label"]
    (['tpr', 'tnr'], 0.75, 'True negative rate (specificity)')
    >>> k = analyse(matrix("multiclass", text="a,b; 5,1; 2,7"), metrics=["tpr"], draws=500)
    >>> list(table_rows(k.table).index)      # a class's rate: metric[class]
    ['tpr[a]', 'tpr[b]']
    """
    from bayescm import metrics as registry

    frame = table.droplevel("classifier")
    keys, labels = [], []
    for idx in frame.index:
        cls, metric = idx if isinstance(idx, tuple) else ("", idx)
        keys.append(f"{metric}[{cls}]" if cls != "" else metric)
        try:
            labels.append(registry.get(metric).label)
        except KeyError:  # multiclass-only keys (f1_macro, ...) live in the other registry
            labels.append(metric)
    cols = ["mean", "median", "hdi_lower", "hdi_upper", "hdi_width", "plug_in",
            "mcse_hdi_lower", "mcse_hdi_upper", "exact"]
    out = frame[cols].copy()
    out.index = pd.Index(keys, name="metric")
    out.insert(0, "label", labels)
    return out


def forest(rows: pd.DataFrame, ax: Any, *, hdi_prob: float = 0.95) -> Any:
    """Each metric's HDI as a line and posterior mean as a dot, one row per metric
    (the first on top), the plug-in value as a cross.

    Examples
    --------
    >>> import bayescm as bcm
    >>> from bayescm.app.downloads import new_figure
    >>> a = analyse(bcm.ConfusionMatrix(**EXAMPLE), metrics=["tpr", "tnr"], draws=500)
    >>> rows = table_rows(a.table)
    >>> fig, ax = new_figure()
    >>> ax = forest(rows, ax)
    >>> [t.get_text() for t in ax.get_yticklabels()]
    ['tpr', 'tnr']
    >>> (lo, y), (hi, _) = ax.collections[0].get_segments()[1]   # the TNR's line, at y = 0
    >>> y, (lo, hi) == tuple(rows.loc["tnr", ["hdi_lower", "hdi_upper"]])
    (np.float64(0.0), True)
    """
    y = np.arange(len(rows))[::-1]
    ax.hlines(y, rows["hdi_lower"], rows["hdi_upper"], color="C0", lw=2.5)
    ax.plot(rows["mean"], y, "o", color="C0", ms=5, label="posterior mean")
    ax.plot(rows["plug_in"], y, "x", color="C3", ms=6, label="plug-in (observed)")
    ax.set_yticks(y, rows.index)
    ax.set_xlabel(f"{hdi_prob:.0%} HDI (line), posterior mean (dot)")
    ax.grid(axis="x", alpha=0.3)
    ax.legend(loc="lower left", bbox_to_anchor=(0, 1.0), ncol=2, frameon=False,
              fontsize="small")
    return ax


# the pmf has one outcome per (tp, tn) of the future test set; 10^6 take ~0.2 s and the
# page's server is shared by its readers
MAX_PMF_OUTCOMES = 1_000_000


def predictive(data: ConfusionMatrix, metric: str, n_pos: int, n_neg: int, *,
               priors: dict[str, Any] | None = None) -> pd.DataFrame:
    """Exact pmf of ``metric`` on a future test set of ``n_pos`` + ``n_neg`` cases
    (:func:`bayescm.exact.metric_pmf`, the page's TPR and TNR priors).

    Examples
    --------
    The cocaine classifier (26 of 26 positives found), flat priors: TPR ~ Beta(27, 1)
    and a future test set of 4 positives is all found with probability
    :math:`E[\\mathrm{TPR}^4] = 27/31`:

    >>> import bayescm as bcm
    >>> pmf = predictive(bcm.ConfusionMatrix(**EXAMPLE), "tpr", 4, 2)
    >>> pmf["value"].tolist()
    [0.0, 0.25, 0.5, 0.75, 1.0]
    >>> bool(abs(pmf["probability"].iloc[-1] - 27 / 31) < 1e-12)
    True
    """
    from bayescm import exact

    if not isinstance(data, ConfusionMatrix):
        raise ValueError("The exact predictive pmf is for a binary confusion matrix; switch "
                         "to Binary to see it.")
    outcomes = (int(n_pos) + 1) * (int(n_neg) + 1)
    if outcomes > MAX_PMF_OUTCOMES:
        raise ValueError(
            f"A future test set of {n_pos} positives and {n_neg} negatives has {outcomes:,} "
            f"possible confusion matrices; the page computes at most {MAX_PMF_OUTCOMES:,} "
            "(e.g. 1,000 and 999) so that it stays quick for every reader. Choose a smaller "
            "test set, or call bcm.exact.metric_pmf in Python.")
    rate_priors = {k: v for k, v in (priors or {}).items() if k in ("tpr", "tnr")}
    frame = exact.metric_pmf(data, metric, n_pos, n_neg, priors=rate_priors or None)
    return frame.loc[data.classifiers[0]]


def pmf_plot(frame: pd.DataFrame, metric: str, ax: Any) -> Any:
    """Stems of the pmf (values of negligible probability left out)."""
    values = frame["value"].to_numpy(float)
    probs = frame["probability"].to_numpy(float)
    # values holding at least 1e-4 of the largest mass: where the mass is, as plots.metric_pmf
    shown = np.isfinite(values) & (probs >= 1e-4 * probs.max())
    ax.vlines(values[shown], 0, probs[shown], color="C0", lw=1)  # stems, drawn in one call
    ax.plot(values[shown], probs[shown], "o", color="C0", ms=3)
    ax.set_ylim(bottom=0)
    ax.set_xlabel(f"{metric} of the future test set")
    ax.set_ylabel("probability")
    return ax


def sample_size(data: ConfusionMatrix | MulticlassConfusionMatrix, metric: str,
                target_width: float, *, assurance: float = 0.95, seed: int = 1) -> Any:
    """``bcm.analysis.sample_size`` with ``data`` as the pilot study (it simulates a
    thousand studies at each size it tries: about half a second).

    Examples
    --------
    >>> import bayescm as bcm
    >>> plan = sample_size(bcm.ConfusionMatrix(**EXAMPLE), "tnr", 0.3)
    >>> plan.n_required   # in total: some 8 in 34 are negatives, which set the TNR's width
    250
    >>> bool(plan.curve.loc[plan.n_required, "width_quantile"] <= 0.3)   # 95% of studies
    True
    """
    from bayescm.analysis import sample_size as plan

    return plan(target_width, metric=metric, pilot=data, assurance=assurance,
                random_seed=seed)
