r"""Multiclass metrics from a K×K table: per class, averaged and overall.

Every metric is computed from a K×K table :math:`C` with the class axes named
(``actual`` rows, ``predicted`` columns): counts give plug-in values, posterior draws
of the cell probabilities :math:`\theta` (dims ``chain, draw, classifier, actual,
predicted``) give the metric's posterior, with the same formula -- each is a ratio of
terms of the same degree.  Everything is vectorised over the other dims.

Notation: :math:`r_k = \sum_j C_{kj}` (actual class totals), :math:`c_k = \sum_i
C_{ik}` (predicted class totals), :math:`n = \sum_k r_k`, :math:`p_k = r_k / n`
(prevalence), :math:`b_k = c_k / n` (bias).

Per class (dim ``class``)
    Every binary registry metric of class *k* against the rest, with
    :math:`tp_k = C_{kk}`, :math:`fn_k = r_k - C_{kk}`, :math:`fp_k = c_k - C_{kk}`,
    :math:`tn_k = n - r_k - c_k + C_{kk}`, under its binary name (``tpr``, ``ppv``,
    ``f1``, ...).  The six binary names that the overall metrics below take
    (``acc, ba, kappa, mcc, bm, mk``) get the suffix ``_ovr`` per class
    (``mcc_ovr`` is class k's one-vs-rest MCC).
Averages (no ``class`` dim)
    ``<m>_macro`` (mean over classes) and ``<m>_weighted`` (weights :math:`p_k`) for
    ``tpr, tnr, fpr, fnr, ppv, npv, fdr, for, f1, f2, f05, jaccard, fm, gmean, mcc,
    bm, mk, kappa``; micro-averaging (sum the one-vs-rest cells, then the binary
    formula) only gives ``jaccard_micro`` :math:`= \sum_k C_{kk} / (2n - \sum_k
    C_{kk})`.  Not averaged: ``prevalence`` and ``bias`` (macro = 1/K), ``acc``,
    ``err`` (macro = :math:`1 - 2\,err/K`), ``ba`` (macro = (``bm_macro`` + 1)/2),
    unbounded ratios (``lr_pos, lr_neg, dor, log_dor``), ``pt`` and the ``*_bal``
    variants.
Overall (no ``class`` dim), Powers (2011) and Gorodkin (2004)
    .. math::

        acc &= \textstyle\sum_k C_{kk} / n \\
        ba &= \tfrac1K \textstyle\sum_k C_{kk} / r_k \quad(\text{mean recall}) \\
        kappa &= \frac{n \sum_k C_{kk} - \sum_k r_k c_k}{n^2 - \sum_k r_k c_k}
            \quad(\text{Cohen}) \\
        mcc &= \frac{n \sum_k C_{kk} - \sum_k r_k c_k}
                   {\sqrt{(n^2 - \sum_k r_k^2)(n^2 - \sum_k c_k^2)}}
            \quad(\text{Gorodkin's } R_K) \\
        bm &= \textstyle\sum_k b_k\, bm_k, \quad
            bm_k = \frac{n C_{kk} - r_k c_k}{r_k (n - r_k)}
            \quad(\text{informedness, weighted by bias}) \\
        mk &= \textstyle\sum_k p_k\, mk_k, \quad
            mk_k = \frac{n C_{kk} - r_k c_k}{c_k (n - c_k)}
            \quad(\text{markedness, weighted by prevalence})

    At K = 2 all six equal the binary metrics of either class against the other.

Averages that coincide (single-label multiclass) are not reported twice: each
name below is an *alias* of the one metric it equals, not a second variable.

* micro-precision = micro-recall = micro-F-beta = micro-FM = ``acc``
  (``ppv_micro``, ``tpr_micro``, ``f1_micro``, ``f2_micro``, ``f05_micro``,
  ``fm_micro`` -> ``acc``): every error is one false negative and one false positive.
* macro recall = ``ba`` (``tpr_macro`` -> ``ba``); prevalence-weighted recall =
  ``acc`` (``tpr_weighted`` -> ``acc``); prevalence-weighted markedness = ``mk``
  (``mk_weighted`` -> ``mk``).
* Complements are kept, as in the binary registry: ``fnr_macro = 1 - ba``,
  ``fnr_weighted = 1 - acc``, ``fpr_macro = 1 - tnr_macro``, ...  ``fnr_micro`` and
  ``fdr_micro`` (both ``1 - acc``) are not offered.

Undefined values
----------------
As in the binary registry, a per-class metric whose denominator is zero is NaN
(precision of a class never predicted, recall of a class with no cases).  An average
runs over the classes where the metric is defined (weights renormalised over them) and
is NaN only when it is defined for none; ``ba``, ``bm`` and ``mk`` follow the same
rule; ``acc``, ``kappa`` and ``mcc`` are NaN when their denominator is zero.  These are
exactly scikit-learn's values with ``zero_division=np.nan`` (its default
``zero_division="warn"`` puts 0 in place of each undefined per-class value and
averages it in; ``matthews_corrcoef`` returns 0 for a constant prediction or a
single actual class, where ``mcc`` here is NaN; when every class where a metric is
defined has no cases, its weighted average falls back to the unweighted mean, NaN
here; ``jaccard_score`` has no ``nan`` option).  pycm reports ``"None"`` for an
undefined per-class value (NaN here) and for any macro average that includes one
(here the mean over the defined classes).  Posterior draws of :math:`\theta` lie
inside the simplex, so none of this touches posteriors: only plug-in values of
tables with empty rows or columns.  A plug-in macro precision of a classifier that
never predicts some class averages over the classes it predicts; macro-F1 is defined
for every class with cases and has no such blind spot.

References
----------
Powers, "Evaluation: from precision, recall and F-measure to ROC, informedness,
markedness and correlation", J. Mach. Learn. Technol. 2(1) (2011).
Gorodkin, "Comparing two K-category assignments by a K-category correlation
coefficient", Comput. Biol. Chem. 28 (2004).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import xarray as xr

from bayescm.data.confusion import CELLS
from bayescm.data.multiclass_tables import align_predicted, one_vs_rest_cells
from bayescm.metrics import binary
from bayescm.metrics.binary import REGISTRY, div

__all__ = [
    "AVERAGED",
    "MULTICLASS_ALIASES",
    "MULTICLASS_LOWER_IS_BETTER",
    "MULTICLASS_REGISTRY",
    "OVERALL",
    "MulticlassMetric",
    "compute_multiclass",
    "evaluate_multiclass",
    "get_multiclass",
    "higher_is_better",
    "multiclass_names",
    "resolve_multiclass",
]

OVERALL: tuple[str, ...] = ("acc", "ba", "kappa", "mcc", "bm", "mk")
"""Overall multiclass metrics; per class, these binary names take the suffix ``_ovr``."""

AVERAGED: tuple[str, ...] = ("tpr", "tnr", "fpr", "fnr", "ppv", "npv", "fdr", "for", "f1",
                             "f2", "f05", "jaccard", "fm", "gmean", "mcc", "bm", "mk", "kappa")
"""Binary metrics with macro and weighted averages."""

MULTICLASS_ALIASES: dict[str, str] = {
    "tpr_macro": "ba", "tpr_weighted": "acc", "mk_weighted": "mk",
    **{f"{b}_micro": "acc" for b in ("tpr", "ppv", "f1", "f2", "f05", "fm")},
}
"""Averages that equal another metric exactly, mapped to it (never reported twice)."""

_NOT_OFFERED = {
    "fnr_micro": "it equals 1 - acc", "fdr_micro": "it equals 1 - acc",
    "acc_macro": "it equals 1 - 2 (1 - acc) / K; use acc",
    "ba_macro": "it equals (bm_macro + 1) / 2; use bm_macro",
}


class Table:
    """Margins and one-vs-rest cells of K×K tables, class axis *first*, computed once.

    ``cells`` has the actual and predicted axes first: ``(K, K, ...)``.  Per-class
    arrays are ``(K, ...)``; per-class binary metrics are cached, so averages reuse
    them.
    """

    def __init__(self, cells: np.ndarray) -> None:
        ovr = one_vs_rest_cells(cells, axes=(0, 1), class_axis=0)
        self.tp, self.fn, self.fp, self.tn = (ovr[c] for c in CELLS)
        self.actual = self.tp + self.fn       # r_k
        self.predicted = self.tp + self.fp    # c_k
        self.n = self.actual.sum(axis=0)
        self.k = self.tp.shape[0]
        self._cache: dict[str, np.ndarray] = {}

    def per_class(self, key: str) -> np.ndarray:
        """Binary registry metric ``key`` of every class against the rest."""
        if key not in self._cache:
            self._cache[key] = np.asarray(REGISTRY[key](self.tp, self.fn, self.fp, self.tn),
                                          dtype=float)
        return self._cache[key]


def _average(values: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """Mean over classes (axis 0) of the defined values, weights renormalised over them."""
    defined = ~np.isnan(values)
    if defined.all():
        if weights is None:
            return values.mean(axis=0)
        return div((weights * values).sum(axis=0), weights.sum(axis=0))
    if weights is None:
        return div(np.where(defined, values, 0.0).sum(axis=0), defined.sum(axis=0))
    w = np.where(defined, weights, 0.0)
    return div((w * np.where(defined, values, 0.0)).sum(axis=0), w.sum(axis=0))


def _agreement(t: Table) -> tuple[np.ndarray, np.ndarray]:
    """``n sum_k C_kk`` and ``sum_k r_k c_k`` (chance agreement times n^2)."""
    return t.n * t.tp.sum(axis=0), (t.actual * t.predicted).sum(axis=0)


def _kappa(t: Table) -> np.ndarray:
    observed, chance = _agreement(t)
    return div(observed - chance, t.n**2 - chance)


def _mcc(t: Table) -> np.ndarray:
    observed, chance = _agreement(t)
    n2 = t.n**2
    with np.errstate(invalid="ignore"):
        den = np.sqrt((n2 - (t.actual**2).sum(axis=0)) * (n2 - (t.predicted**2).sum(axis=0)))
    return div(observed - chance, den)


@dataclass(frozen=True)
class MulticlassMetric:
    """A metric of K×K tables.

    Attributes
    ----------
    key
        Name used everywhere (variable names, ``summary``).
    label
        Readable name.
    kind
        ``"class"`` (one value per class, dim ``class``), ``"macro"``, ``"weighted"``,
        ``"micro"`` or ``"overall"`` (one value per table).
    formula
        ``f(table)`` of a :class:`Table`.
    bounds
        Range ``(lower, upper)``.
    math
        The definition, for documentation.
    base
        The binary registry key it is built on (``None`` for overall metrics).
    """

    key: str
    label: str
    kind: str
    formula: Callable[[Table], Any]
    bounds: tuple[float, float]
    math: str
    base: str | None = None

    @property
    def per_class(self) -> bool:
        """Whether the metric has one value per class (dim ``class``)."""
        return self.kind == "class"

    @property
    def higher_is_better(self) -> bool:
        """Whether a larger value is better (the base metric's direction)."""
        return self.base not in binary.LOWER_IS_BETTER

    def __call__(self, table: Table) -> Any:
        return self.formula(table)


def _build() -> dict[str, MulticlassMetric]:
    mm = MulticlassMetric
    out = [
        mm("acc", "Accuracy", "overall", lambda t: div(t.tp.sum(axis=0), t.n), (0, 1),
           "sum_k C_kk / n"),
        mm("ba", "Balanced accuracy (mean recall)", "overall",
           lambda t: _average(t.per_class("tpr")), (0, 1), "mean_k C_kk / r_k"),
        mm("kappa", "Cohen's kappa", "overall", _kappa, (-1, 1),
           "(n sum_k C_kk - sum_k r_k c_k) / (n^2 - sum_k r_k c_k)"),
        mm("mcc", "Matthews correlation coefficient (Gorodkin's R_K)", "overall", _mcc, (-1, 1),
           "(n sum_k C_kk - sum_k r_k c_k) / sqrt((n^2 - sum_k r_k^2)(n^2 - sum_k c_k^2))"),
        mm("bm", "Multiclass informedness (Powers)", "overall",
           lambda t: _average(t.per_class("bm"), t.predicted), (-1, 1),
           "sum_k b_k bm_k, bias-weighted one-vs-rest informedness"),
        mm("mk", "Multiclass markedness (Powers)", "overall",
           lambda t: _average(t.per_class("mk"), t.actual), (-1, 1),
           "sum_k p_k mk_k, prevalence-weighted one-vs-rest markedness"),
    ]
    for m in REGISTRY.values():
        key = f"{m.key}_ovr" if m.key in OVERALL else m.key
        out.append(mm(key, f"{m.label}, one vs rest", "class",
                      lambda t, b=m.key: t.per_class(b), m.bounds,
                      f"{m.math} with tp = C_kk, fn = r_k - C_kk, fp = c_k - C_kk, "
                      "tn = n - r_k - c_k + C_kk", m.key))
    for kind, how, weights in (("macro", "mean over classes", None),
                               ("weighted", "prevalence-weighted mean", "actual")):
        for b in AVERAGED:
            key = f"{b}_{kind}"
            if key in MULTICLASS_ALIASES:
                continue
            out.append(mm(key, f"{REGISTRY[b].label}, {kind} average", kind,
                          lambda t, b=b, w=weights: _average(t.per_class(b),
                                                             None if w is None else t.actual),
                          REGISTRY[b].bounds, f"{how} of {b} per class", b))
    out.append(mm("jaccard_micro", "Jaccard index, micro average", "micro",
                  lambda t: div(t.tp.sum(axis=0), 2 * t.n - t.tp.sum(axis=0)), (0, 1),
                  "sum_k C_kk / (2 n - sum_k C_kk) = acc / (2 - acc)", "jaccard"))
    return {m.key: m for m in out}


MULTICLASS_REGISTRY: dict[str, MulticlassMetric] = _build()
"""Every multiclass metric by key: overall, per class, macro, weighted, micro."""

MULTICLASS_LOWER_IS_BETTER: frozenset[str] = frozenset(
    k for k, m in MULTICLASS_REGISTRY.items() if not m.higher_is_better)
"""Multiclass metrics for which smaller is better (``fpr``, ``fnr_macro``, ...)."""


def multiclass_names(kind: str | None = None) -> list[str]:
    """Keys of the multiclass metrics (of one ``kind``), in display order.

    Examples
    --------
    >>> from bayescm import metrics
    >>> metrics.multiclass_names("overall")
    ['acc', 'ba', 'kappa', 'mcc', 'bm', 'mk']
    """
    return [k for k, m in MULTICLASS_REGISTRY.items() if kind is None or m.kind == kind]


def _canonical(key: str) -> str:
    if key in MULTICLASS_REGISTRY:
        return key
    if key in MULTICLASS_ALIASES:
        return MULTICLASS_ALIASES[key]
    base, sep, suffix = key.rpartition("_")
    if sep and suffix in ("macro", "weighted", "micro", "ovr"):
        key = f"{binary.ALIASES.get(base, base)}_{suffix}"
        return MULTICLASS_ALIASES.get(key, key)
    return binary.ALIASES.get(key, key)


def get_multiclass(name: str | MulticlassMetric) -> MulticlassMetric:
    """Look up a multiclass metric by key or alias (case-insensitive).

    Binary aliases work per class and in averages (``"recall"`` -> ``tpr``,
    ``"precision_macro"`` -> ``ppv_macro``); averages that equal another metric
    resolve to it (``"f1_micro"`` -> ``acc``).

    Examples
    --------
    >>> from bayescm import metrics
    >>> [metrics.get_multiclass(k).key for k in ("F1_micro", "recall_macro", "accuracy")]
    ['acc', 'ba', 'acc']
    """
    if isinstance(name, MulticlassMetric):
        return name
    key = _canonical(str(name).lower())
    if key in MULTICLASS_REGISTRY:
        return MULTICLASS_REGISTRY[key]
    why = _NOT_OFFERED.get(key)
    base, _, suffix = key.rpartition("_")
    if why is None and suffix in ("macro", "weighted", "micro") and base in REGISTRY:
        why = ("averages are offered for " + ", ".join(AVERAGED) + "; micro only as "
               "jaccard_micro (micro precision, recall and F equal acc)")
    raise KeyError(f"Unknown multiclass metric {name!r}" + (f": {why}." if why else ". ")
                   + f" Known: {', '.join(MULTICLASS_REGISTRY)}.")


def resolve_multiclass(metrics: str | Iterable[str] | None) -> list[MulticlassMetric]:
    """Metrics for a name, a list of names or aliases, or ``None`` (= all); no repeats."""
    if metrics is None:
        return list(MULTICLASS_REGISTRY.values())
    if isinstance(metrics, str):
        metrics = [metrics]
    found: dict[str, MulticlassMetric] = {}
    for m in metrics:
        metric = get_multiclass(m)
        found.setdefault(metric.key, metric)
    return list(found.values())


def higher_is_better(metric: Any) -> bool:
    """Direction of a binary or multiclass metric (key, alias or metric object).

    Examples
    --------
    >>> from bayescm import metrics
    >>> metrics.higher_is_better("f1_macro"), metrics.higher_is_better("fnr_weighted")
    (True, False)
    """
    if isinstance(metric, MulticlassMetric):
        return metric.higher_is_better
    try:
        return binary.higher_is_better(metric)
    except KeyError:
        return get_multiclass(metric).higher_is_better


def evaluate_multiclass(metric: str | MulticlassMetric, cells: Any, *,
                        axes: tuple[int, int] = (-2, -1)) -> np.ndarray:
    """One multiclass metric of NumPy K×K tables (counts or probabilities).

    Parameters
    ----------
    cells
        Array whose ``axes`` are (actual, predicted); other axes broadcast.

    Returns
    -------
    numpy.ndarray
        The other axes; per-class metrics add the class axis last.

    Examples
    --------
    >>> from bayescm import metrics
    >>> table = [[5, 1, 0], [2, 7, 1], [0, 3, 9]]
    >>> round(float(metrics.evaluate_multiclass("acc", table)), 4)
    0.75
    >>> metrics.evaluate_multiclass("tpr", table).round(3).tolist()
    [0.833, 0.7, 0.75]
    """
    m = get_multiclass(metric)
    value = np.asarray(m(Table(np.moveaxis(np.asarray(cells, dtype=float), axes, (0, 1)))))
    return np.moveaxis(value, 0, -1) if m.per_class else value


def compute_multiclass(
    cells: Any,
    metrics: str | Sequence[str] | None = None,
    *,
    actual: str = "actual",
    predicted: str = "predicted",
    class_dim: str = "class",
    dtype: Any = np.float64,
) -> xr.Dataset:
    """Every requested multiclass metric of K×K tables with named class dims.

    Parameters
    ----------
    cells
        Cell probabilities (posterior ``theta``, dims e.g. ``chain, draw, classifier,
        actual, predicted``) or counts, as a DataArray; or a
        :class:`~bayescm.MulticlassConfusionMatrix`.  The ``predicted`` axis is matched
        to ``actual`` by label coords, never by position.
    metrics
        Keys or aliases; every multiclass metric by default (aliases of the same metric
        give one variable).
    actual, predicted
        Names of the class dims.
    class_dim
        Name of the class dim of per-class metrics (coords: the labels).
    dtype
        Floating type of the results (evaluation is always in float64).

    Returns
    -------
    xarray.Dataset
        One variable per metric: per-class metrics with the other dims and
        ``class_dim``; averages and overall metrics with the other dims only.

    Examples
    --------
    >>> import bayescm as bcm
    >>> mc = bcm.MulticlassConfusionMatrix([[5, 1, 0], [2, 7, 1], [0, 3, 9]],
    ...                                    labels=["cat", "dog", "bird"])
    >>> ds = bcm.metrics.compute_multiclass(mc, ["f1", "f1_macro", "f1_micro", "mcc"])
    >>> list(ds.data_vars), ds["f1"].dims
    (['f1', 'f1_macro', 'acc', 'mcc'], ('classifier', 'class'))
    >>> round(float(ds["f1_macro"].sel(classifier="cm")), 4)
    0.7514
    """
    da = cells if isinstance(cells, xr.DataArray) else getattr(cells, "to_xarray", None)
    if not isinstance(da, xr.DataArray):
        if not callable(da):
            raise TypeError("compute_multiclass needs a DataArray with dims "
                            f"{actual!r} and {predicted!r}, or a MulticlassConfusionMatrix.")
        da = da()
    missing = [d for d in (actual, predicted) if d not in da.dims]
    if missing:
        raise ValueError(f"Array has no dim(s) {missing} (dims: {da.dims}).")
    da = align_predicted(da, actual=actual, predicted=predicted)
    template = da.isel({actual: 0, predicted: 0}, drop=True)
    k = da.sizes[actual]
    flat = da.transpose(*template.dims, actual, predicted).values.reshape(-1, k, k)
    chosen = resolve_multiclass(metrics)
    values = _evaluate(flat, chosen, dtype)
    labels = da[actual].values if actual in da.coords else np.arange(k)
    out = {}
    for m in chosen:
        dims, shape = ((*template.dims, class_dim), (*template.shape, k)) if m.per_class \
            else (template.dims, template.shape)
        out[m.key] = (dims, values[m.key].reshape(shape),
                      {"label": m.label, "formula": m.math, "kind": m.kind})
    coords = dict(template.coords)
    if any(m.per_class for m in chosen):
        coords[class_dim] = labels
    # one Dataset from (dims, values) tuples: no DataArray per metric to align
    return xr.Dataset(out, coords=coords)


_CHUNK = 2**15
"""Cells per per-class array in one block of :func:`_evaluate` (K × tables): a few MB,
so a block's temporaries stay in cache and the allocator reuses them."""


def _evaluate(flat: np.ndarray, chosen: Sequence[MulticlassMetric], dtype: Any
              ) -> dict[str, np.ndarray]:
    """Metrics of ``flat`` (tables × K × K) in blocks of tables, two threads.

    Results: per-class metrics (tables, K), the others (tables,).
    """
    m_tables, k = flat.shape[0], flat.shape[1]
    out = {m.key: np.empty((m_tables, k) if m.per_class else (m_tables,), dtype=dtype)
           for m in chosen}
    step = max(1, _CHUNK // k)

    def block(start: int) -> None:
        stop = min(start + step, m_tables)
        table = Table(np.ascontiguousarray(flat[start:stop].transpose(1, 2, 0)))
        for m in chosen:
            v = np.asarray(m(table))
            out[m.key][start:stop] = v.T if m.per_class else v

    # NumPy releases the GIL: blocks run in two threads
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(block, range(0, m_tables, step)))
    return out
