r"""Paired comparison: two classifiers evaluated on the same cases, two or K classes.

When A and B classify the same test cases their errors are correlated (both tend to
fail on hard cases), and the posterior of a difference must carry that correlation.
:func:`compare_paired` models the *joint* outcome of every case and evaluates both
classifiers' metrics on the same posterior draw.

K classes
    The counts :math:`n_{kjl}` of cases with actual class :math:`k`, A's prediction
    :math:`j` and B's prediction :math:`l` (:func:`paired_table`, a K×K×K table) are
    multinomial with cell probabilities :math:`\pi`, and

    .. math::

        \pi \sim \mathrm{Dirichlet}(\alpha),\qquad
        \pi \mid n \sim \mathrm{Dirichlet}(\alpha + n),\qquad
        \theta^A_{kj} = \textstyle\sum_l \pi_{kjl},\quad
        \theta^B_{kl} = \textstyle\sum_j \pi_{kjl},

    and every draw gives :math:`m(\theta^A) - m(\theta^B)` for any metric :math:`m` of
    the multiclass registry (:mod:`bayescm.metrics.multiclass`: overall, averaged, or
    one class's value with ``label=``).  The posterior is conjugate and drawn exactly.

The prior of the K-class model
    :math:`\alpha_{kjl} = w / K^3`: ``prior_counts`` :math:`= w` pseudo-cases spread
    evenly over the :math:`K^3` cells, by default :math:`w = K`.  Summed over the
    predictions, every actual class holds one pseudo-case, so the implied prior of
    the class prevalences is Dirichlet(1, ..., 1), K pseudo-cases in all (Beta(1, 1)
    at K = 2); each classifier's own K×K table gets Dirichlet(1/K per cell), one
    pseudo-case per actual class.  That is lighter per row than the default of
    :func:`bayescm.models.multiclass_rows` (Dirichlet(2/K) per row cell: two
    pseudo-cases per actual class, and two in all for the prevalences, at every K).
    The two discordant groups of the accuracy difference (A right and B wrong, and
    the reverse) get :math:`(K - 1)/K` pseudo-cases each, so the share of discordant
    cases that A gets right has prior Beta((K - 1)/K, (K - 1)/K): Jeffreys'
    Beta(1/2, 1/2) at K = 2, nearly flat for large K.  Since the prior is the same for
    A and B,

    .. math::

        E[acc_A - acc_B \mid n] = \frac{n_{10} - n_{01}}{N + w}

    (:math:`n_{10}`: cases A gets right and B wrong): the observed difference shrunk
    by :math:`N / (N + w)`.  A flat Dirichlet(1) on every cell is :math:`w = K^3`
    pseudo-cases -- 1,000 at K = 10 -- which shrinks a difference seen on N = 500
    cases to a third and pulls both accuracies towards 1/K: its intervals miss the
    true difference far more often than they claim (the tests show it); pass
    ``prior_counts=K**3`` if that is really meant.  An array of shape (K, K, K) sets
    every cell's pseudo-count (axes actual, A's prediction, B's prediction, in the
    order of ``labels``).

Two classes (the binary path)
    With exactly two labels and a binary registry metric, and none of ``labels=``,
    ``label=``, ``prior_counts=``, the model is the one of the binary registry: for
    each true class :math:`c \in \{+, -\}` the counts of cases that A and B classify
    correctly or not,

    .. math::

        (n^c_{11}, n^c_{10}, n^c_{01}, n^c_{00}) \sim
            \mathrm{Multinomial}(n^c, \psi^c),\qquad
        \psi^c \sim \mathrm{Dirichlet}(1, 1, 1, 1),\qquad
        \phi \sim \mathrm{Beta}(1 + n^+, 1 + n^-),

    so :math:`TPR_A = \psi^+_{11} + \psi^+_{10}`, :math:`TPR_B = \psi^+_{11} +
    \psi^+_{01}` (likewise TNR from :math:`\psi^-`).  The K-class path is taken when
    there are more than two labels, the metric is multiclass only (``f1_macro``,
    ``mcc_ovr``, ...), or ``labels=``, ``label=`` or ``prior_counts=`` is given.

"Better" follows the metric's direction, as for :func:`bayescm.analysis.compare`.
Treating a paired design as independent ignores the shared cases: with positively
correlated errors the interval of the difference is too wide and the probability
that A is better too timid; the tests show both on simulated data, for two and for
K classes.

compare_paired on pooled out-of-fold predictions ignores training-set variation: use
compare_folds (:func:`bayescm.analysis.compare_folds`, the correlated t-test across
folds) to compare the *algorithms* rather than two fitted models on these cases.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayescm import idata as idata_mod
from bayescm import metrics as registry
from bayescm.analysis.compare import Comparison, _p_better
from bayescm.data.confusion import CountsError, resolve_positive
from bayescm.data.multiclass import MulticlassConfusionMatrix
from bayescm.data.multiclass_tables import label_array
from bayescm.stats import SAMPLE_DIMS, check_hdi_prob, conjugate_draws, draw_conjugate

__all__ = ["PairedComparison", "compare_paired", "paired_counts", "paired_table"]

TABLE_DIMS: tuple[str, str, str] = ("actual", "predicted_a", "predicted_b")
"""Dims of :func:`paired_table`: actual class, A's prediction, B's prediction."""

_CHUNK_VALUES = 2**22
"""Cell draws held at once in the K-class path (32 MB of float64): draws are made in
chunks of ``_CHUNK_VALUES // K**3``; the random stream, hence the result, does not
depend on the chunk size."""


@dataclass(frozen=True)
class PairedComparison(Comparison):
    """A :class:`~bayescm.analysis.Comparison` of two classifiers on the same cases that
    names them: ``a`` is A (the first predictions), ``b`` is B; ``difference`` is
    metric(A) - metric(B)."""

    a: str = "A"
    b: str = "B"

    def to_frame(self) -> pd.DataFrame:
        """:meth:`Comparison.to_frame` with columns ``a`` and ``b`` first."""
        frame = super().to_frame()
        frame.insert(0, "b", [self.b])
        frame.insert(0, "a", [self.a])
        return frame

    def __repr__(self) -> str:
        return super().__repr__().replace(
            "Comparison(paired, ", f"PairedComparison(A = {self.a!r}, B = {self.b!r}, ", 1)


def _names(pred_a: Any, pred_b: Any, names: Sequence[Any] | None) -> tuple[str, str]:
    """A's and B's names: ``names``, else the Series' names, else ``"A"`` and ``"B"``."""
    if names is not None:
        if isinstance(names, str) or len(names) != 2:
            raise ValueError(f"names must be two names (A's, B's), got {names!r}.")
        return str(names[0]), str(names[1])
    found = [getattr(p, "name", None) for p in (pred_a, pred_b)]
    if all(isinstance(n, str) and n for n in found) and found[0] != found[1]:
        return found[0], found[1]
    return "A", "B"


def paired_counts(y_true: Any, pred_a: Any, pred_b: Any, *, positive: Any = None
                  ) -> pd.DataFrame:
    """Per true class, the counts of (A correct, B correct) in {11, 10, 01, 00}.

    Examples
    --------
    >>> from bayescm.analysis import paired_counts
    >>> paired_counts([1, 1, 0, 0], [1, 0, 0, 0], [1, 1, 1, 0]).loc["positive"].tolist()
    [1, 0, 1, 0]
    """
    y, a, b = (np.asarray(v, dtype=object) for v in (y_true, pred_a, pred_b))
    if not (y.ndim == a.ndim == b.ndim == 1) or not (y.size == a.size == b.size):
        raise CountsError(
            f"y_true, pred_a and pred_b must be 1-d and of equal length (got {y.size}, "
            f"{a.size}, {b.size}): the paired design needs both predictions for every case."
        )
    if y.size == 0 or pd.isna(y).any() or pd.isna(a).any() or pd.isna(b).any():
        raise CountsError("Labels must be non-empty and have no missing values.")
    pos = resolve_positive(np.unique(np.concatenate([y, a, b])), positive)
    truth = y == pos
    ok_a, ok_b = (a == pos) == truth, (b == pos) == truth
    rows = {}
    for name, mask in (("positive", truth), ("negative", ~truth)):
        rows[name] = [int(np.sum(mask & ok_a & ok_b)), int(np.sum(mask & ok_a & ~ok_b)),
                      int(np.sum(mask & ~ok_a & ok_b)), int(np.sum(mask & ~ok_a & ~ok_b))]
    return pd.DataFrame.from_dict(rows, orient="index", columns=["11", "10", "01", "00"])


def paired_table(y_true: Any, pred_a: Any, pred_b: Any, *,
                 labels: Sequence[Hashable] | None = None) -> xr.DataArray:
    """The K×K×K counts of (actual class, A's prediction, B's prediction).

    Parameters
    ----------
    y_true, pred_a, pred_b
        True labels and the two classifiers' predictions, one per case.
    labels
        The classes and their order; default every label seen in any of the three,
        sorted (as :meth:`bayescm.MulticlassConfusionMatrix.from_predictions`).

    Returns
    -------
    xarray.DataArray
        int64 counts on dims ``actual, predicted_a, predicted_b`` with the labels as
        coords.  Summed over ``predicted_b`` it is A's confusion matrix, over
        ``predicted_a`` B's.

    Examples
    --------
    >>> from bayescm.analysis import paired_table
    >>> t = paired_table(["x", "y", "z", "z"], ["x", "z", "z", "y"], ["x", "y", "z", "z"])
    >>> int(t.sel(actual="z", predicted_a="y", predicted_b="z"))
    1
    >>> t.sum("predicted_b").values.tolist()   # A's confusion matrix
    [[1, 0, 0], [0, 0, 1], [0, 1, 1]]
    """
    counts, classes = _joint(y_true, pred_a, pred_b, labels)
    return xr.DataArray(counts, dims=TABLE_DIMS, coords={d: list(classes) for d in TABLE_DIMS},
                        name="counts")


def _joint(y_true: Any, pred_a: Any, pred_b: Any, labels: Sequence[Hashable] | None
           ) -> tuple[np.ndarray, tuple[Hashable, ...]]:
    """K×K×K counts (actual, A, B) and the labels (Python scalars, in order)."""
    # validation (lengths, missing and unknown labels) and the label set: one place
    mc = MulticlassConfusionMatrix.from_predictions(
        y_true, {"pred_a": pred_a, "pred_b": pred_b}, labels=labels)
    index = pd.Index(list(mc.labels), dtype=object)
    k = len(index)
    t, a, b = (index.get_indexer(label_array(v, what).astype(object))
               for v, what in ((y_true, "y_true"), (pred_a, "pred_a"), (pred_b, "pred_b")))
    return np.bincount((t * k + a) * k + b, minlength=k**3).reshape(k, k, k), mc.labels


def _prior_alpha(prior_counts: Any, k: int) -> np.ndarray:
    """Dirichlet concentrations of the K³ cells from ``prior_counts`` (see module doc)."""
    if prior_counts is None:
        return np.full((k, k, k), 1.0 / k**2)
    alpha = np.asarray(prior_counts, dtype=float)
    if alpha.ndim == 0:
        alpha = np.full((k, k, k), float(alpha) / k**3)
    if alpha.shape != (k, k, k) or not np.isfinite(alpha).all() or (alpha <= 0).any():
        raise ValueError(
            f"prior_counts must be a positive total number of pseudo-cases or a ({k}, {k}, "
            f"{k}) array of positive pseudo-counts (actual, A's prediction, B's prediction); "
            f"got {prior_counts!r}.")
    return alpha


def _is_binary_metric(metric: str) -> bool:
    try:
        registry.get(metric)
    except KeyError:
        return False
    return True


def _n_labels(*values: Any) -> int:
    arrays = [np.asarray(v, dtype=object).reshape(-1) for v in values]
    return len(pd.unique(np.concatenate(arrays)))


def compare_paired(
    y_true: Any,
    pred_a: Any,
    pred_b: Any,
    metric: str,
    margin: float = 0.0,
    *,
    positive: Any = None,
    labels: Sequence[Hashable] | None = None,
    label: Hashable | None = None,
    prior_counts: float | np.ndarray | None = None,
    names: Sequence[str] | None = None,
    hdi_prob: float = 0.95,
    draws: int = 20_000,
    random_seed: int | None = None,
) -> PairedComparison:
    """Compare two classifiers evaluated on the same cases (paired design).

    ``compare_paired(fit, a, b, metric)`` compares two units of one fit whose
    posterior is joint (a :func:`bayescm.models.items` fit of models on the same
    items): the difference on each posterior draw (:mod:`bayescm.analysis.items_paired`).

    The model is in the module documentation (:mod:`bayescm.analysis.paired`): the
    joint outcome (actual, A's prediction, B's prediction) with a Dirichlet posterior,
    both metrics evaluated on the same draw.

    Parameters
    ----------
    y_true, pred_a, pred_b
        True labels and the two classifiers' predictions, one per case.
    metric, margin
        A metric key or alias and the margin, as for :func:`bayescm.analysis.compare`
        (lower-is-better metrics are honoured).  Two labels and a binary registry key:
        the binary model; otherwise a multiclass registry key (``acc``, ``f1_macro``,
        ``kappa``, ``mcc``, per-class ``f1`` with ``label=``, ...).
    positive
        Binary path only: the positive label (may be omitted for ``{0, 1}`` or
        ``{False, True}``).
    labels
        K-class path: the classes and their order (default: every label seen in any
        of the three arrays, sorted).  Giving it selects the K-class model.
    label
        K-class path: the class of a per-class metric (``tpr``, ``f1``, ``ppv``, ...);
        required for those, refused for the others.
    prior_counts
        K-class path: the Dirichlet prior as pseudo-cases -- a number, spread evenly
        over the K³ cells, or a (K, K, K) array of per-cell pseudo-counts.  Default K
        (one pseudo-case per actual class; see the module documentation for why not
        Dirichlet(1) on every cell).
    names
        The names of A and B, shown in the result (``.a``, ``.b``, its repr and
        ``to_frame``); default the names of ``pred_a`` and ``pred_b`` when they are
        named pandas Series, else ``"A"`` and ``"B"``.
    hdi_prob
        Mass of the HDI of the difference.
    draws
        Draws of the joint posterior (i.i.d., one chain: the total).  The K-class path
        draws all K³ cells per draw, in chunks of at most 32 MB: time grows as K³
        (about 4 s for 20,000 draws at K = 10, 25 s at K = 20, on one core).
    random_seed
        Seed of the draws.

    Returns
    -------
    PairedComparison
        A :class:`~bayescm.analysis.Comparison` (``design="paired"``) that names A and B
        (``.a``, ``.b``); for a per-class metric ``class_label`` names the class
        (and the printed comparison reads ``"f1[cat]"``).
        In the K-class path ``difference.attrs`` record the labels and the prior.

    Examples
    --------
    >>> import numpy as np, bayescm as bcm
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, 300)
    >>> hard = rng.random(300) < 0.2          # both classifiers fail on hard cases
    >>> a = np.where(hard, 1 - y, y)
    >>> b = np.where(hard | (rng.random(300) < 0.05), 1 - y, y)
    >>> result = bcm.analysis.compare_paired(y, a, b, "acc", random_seed=1)
    >>> result.probability > 0.99
    True

    Three classes; B makes A's errors and also calls a third of class 2 class 0:

    >>> y = rng.integers(0, 3, 400)
    >>> a = np.where(rng.random(400) < 0.15, (y + 1) % 3, y)
    >>> b = np.where((y == 2) & (rng.random(400) < 0.3), 0, a)
    >>> res = bcm.analysis.compare_paired(y, a, b, "f1_macro", random_seed=1)
    >>> res.probability > 0.99, res.difference.attrs["labels"]
    (True, [0, 1, 2])
    >>> res = bcm.analysis.compare_paired(y, a, b, "recall", label=2, random_seed=1)
    >>> res.metric, res.class_label
    ('tpr', 2)
    """
    hdi_prob = check_hdi_prob(hdi_prob)
    named = _names(pred_a, pred_b, names)
    if not (isinstance(margin, int | float | np.integer | np.floating)
            and not isinstance(margin, bool) and np.isfinite(margin)):
        raise ValueError(f"margin must be a finite number, got {margin!r}.")
    if isinstance(draws, bool) or not isinstance(draws, int | np.integer) or draws < 1:
        raise ValueError(f"draws must be a whole number >= 1, got {draws!r}.")
    if idata_mod.is_inference_data(y_true) or isinstance(y_true, xr.DataTree):
        # a fit with a joint posterior (e.g. bcm.models.items): A and B are unit names
        from bayescm.analysis.items_paired import joint_difference

        diff, key = joint_difference(y_true, pred_a, pred_b, metric, label=label)
        return _result(diff, key, margin, hdi_prob, class_label=label,
                       names=(str(pred_a), str(pred_b)) if names is None else named)
    kclass = (labels is not None or label is not None or prior_counts is not None
              or not _is_binary_metric(metric) or _n_labels(y_true, pred_a, pred_b) > 2)
    if not kclass:
        return _binary(y_true, pred_a, pred_b, registry.get(metric).key, margin,
                       positive=positive, hdi_prob=hdi_prob, draws=draws,
                       random_seed=random_seed, names=named)
    if positive is not None:
        raise ValueError(
            "positive= picks the positive class of the two-class model; with more than two "
            "labels, a multiclass metric or labels=/label=/prior_counts= the K-class model "
            "is used: name a class of a per-class metric with label= instead.")
    return _kclass(y_true, pred_a, pred_b, metric, margin, labels=labels, label=label,
                   prior_counts=prior_counts, hdi_prob=hdi_prob, draws=draws,
                   random_seed=random_seed, names=named)


def _result(diff: np.ndarray, key: str, margin: float, hdi_prob: float,
            attrs: dict[str, Any] | None = None, class_label: Any = None,
            names: tuple[str, str] = ("A", "B")) -> PairedComparison:
    diff_da = xr.DataArray(diff.reshape(1, -1), dims=SAMPLE_DIMS, name=f"{key}_difference",
                           attrs={**(attrs or {}), "a": names[0], "b": names[1]})
    probability, higher = _p_better(diff, margin, key)
    return PairedComparison(key, float(margin), "paired", diff_da, probability, hdi_prob,
                            higher_is_better=higher, class_label=class_label, a=names[0],
                            b=names[1])


def _binary(y_true: Any, pred_a: Any, pred_b: Any, key: str, margin: float, *,
            positive: Any, hdi_prob: float, draws: int, random_seed: int | None,
            names: tuple[str, str] = ("A", "B")) -> PairedComparison:
    """The two-class model: Dirichlet(1, 1, 1, 1) per true class, Beta(1, 1) prevalence."""
    counts = paired_counts(y_true, pred_a, pred_b, positive=positive)
    return paired_binary(counts, key, margin, hdi_prob=hdi_prob, draws=draws,
                         random_seed=random_seed, names=names)


def paired_binary(counts: pd.DataFrame, key: str, margin: float = 0.0, *,
                  hdi_prob: float = 0.95, draws: int = 20_000, random_seed: int | None = None,
                  names: tuple[str, str] = ("A", "B")) -> PairedComparison:
    """The two-class paired model of :func:`paired_counts`' table (rows ``positive``,
    ``negative``; columns ``11, 10, 01, 00``): also for counts that are not whole
    (a coupling of two confusion matrices, :func:`bayescm.analysis.leaderboard`)."""
    rng = np.random.default_rng(random_seed)
    n_pos, n_neg = float(counts.loc["positive"].sum()), float(counts.loc["negative"].sum())
    post = draw_conjugate(
        rng, (draws,), betas={"prevalence": (1 + n_pos, 1 + n_neg)},
        dirichlets={c: 1.0 + counts.loc[c].to_numpy(float) for c in ("positive", "negative")})
    phi, psi_pos, psi_neg = post["prevalence"], post["positive"], post["negative"]
    values = []
    for correct in (1, 2):  # A is correct in cells 11 and 10, B in cells 11 and 01
        tpr = psi_pos[:, 0] + psi_pos[:, correct]
        tnr = psi_neg[:, 0] + psi_neg[:, correct]
        values.append(registry.evaluate(key, *registry.cells_from_rates(phi, tpr, tnr)))
    return _result(np.asarray(values[0] - values[1]), key, margin, hdi_prob, names=names)


def _kclass(y_true: Any, pred_a: Any, pred_b: Any, metric: str, margin: float, *,
            labels: Sequence[Hashable] | None, label: Hashable | None, prior_counts: Any,
            hdi_prob: float, draws: int, random_seed: int | None,
            names: tuple[str, str] = ("A", "B")) -> PairedComparison:
    """The K-class model: Dirichlet(alpha + n) over the K³ joint outcomes."""
    m = registry.get_multiclass(metric)
    counts, labels = _joint(y_true, pred_a, pred_b, labels)
    classes, k = list(labels), len(labels)
    if m.per_class:
        if label is None:
            average = (f", or an average such as '{m.base}_macro'"
                       if m.base in registry.AVERAGED else "")
            raise ValueError(f"{m.key!r} has one value per class; say which with label= "
                             f"(one of {classes}){average}.")
        if label not in classes:
            raise ValueError(f"label={label!r} is not one of the classes {classes}.")
        column = classes.index(label)
    elif label is not None:
        raise ValueError(f"{m.key!r} is one value for all classes; label= is only for "
                         "per-class metrics.")
    else:
        column = None
    alpha = _prior_alpha(prior_counts, k)
    posterior = (alpha + counts).reshape(-1)
    diff = np.empty(int(draws))
    start = 0
    for block in conjugate_draws(np.random.default_rng(random_seed), int(draws),
                                 dirichlets={"pi": posterior},
                                 chunk=max(1, _CHUNK_VALUES // k**3)):
        pi = block["pi"].reshape(-1, k, k, k)
        # A's table sums B's prediction out, B's table A's; both from the same draw
        values = registry.evaluate_multiclass(m, np.stack([pi.sum(axis=3), pi.sum(axis=2)]))
        if column is not None:
            values = values[..., column]
        diff[start:start + pi.shape[0]] = values[0] - values[1]
        start += pi.shape[0]
    total = float(alpha.sum())
    attrs = {"labels": classes, "prior": f"Dirichlet over the {k}^3 joint outcomes, "
             f"{total:g} pseudo-cases in all", "prior_counts": total}
    return _result(diff, m.key, margin, hdi_prob, attrs, class_label=label, names=names)
