r"""How many test cases are needed for a metric to be known to a given precision?

Tötsch & Hoffmann (2021, §2E) call the width of a metric's 95% highest-density
interval its *metric uncertainty* (MU) and plan test-set sizes with Kruschke's
protocol ("Doing Bayesian Data Analysis", 2015, ch. 13 "Goals, power, and sample
size"):

1. draw a generating parameter from a generating distribution,
2. simulate a test set of size :math:`N` from it,
3. compute the posterior HDI width of the metric from the simulated data,
4. repeat; the *assurance* (Kruschke's power for the goal "precision") at
   :math:`N` is the share of simulated studies whose HDI is at most the target width.

:func:`sample_size` runs this protocol over a grid of :math:`N`, vectorised over the
simulated studies; :func:`sample_size_rule` is the closed-form normal approximation
of their supplement S5.  The binary simulation is in
:mod:`bayescm.analysis.sample_size.binary`, the K-class one in
:mod:`bayescm.analysis.sample_size.multiclass`; both search over :math:`N` and report
with :mod:`bayescm.analysis.sample_size.result`.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np

from bayescm import idata as idata_mod
from bayescm import metrics as registry
from bayescm.analysis.sample_size.binary import plan_binary, sample_size_rule
from bayescm.analysis.sample_size.items import ItemsPlan, plan_items
from bayescm.analysis.sample_size.multiclass import plan_multiclass
from bayescm.analysis.sample_size.result import SampleSizePlan
from bayescm.data.confusion import ConfusionMatrix
from bayescm.data.items import ItemResults
from bayescm.data.multiclass import MulticlassConfusionMatrix
from bayescm.stats import beta_hdi

__all__ = ["SampleSizePlan", "beta_hdi", "sample_size", "sample_size_rule"]


def sample_size(
    target_width: float | None = None,
    *,
    metric: str | registry.Metric | registry.MulticlassMetric = "acc",
    hdi_prob: float = 0.95,
    assurance: float = 0.95,
    generating: tuple[float, float] | None = None,
    pilot: ConfusionMatrix | MulticlassConfusionMatrix | Any | None = None,
    prevalence: float | Sequence[float] | Mapping[Hashable, float] | None = None,
    rows: Any = None,
    label: Hashable | None = None,
    model: Any = None,
    n_grid: Sequence[int] | np.ndarray | None = None,
    n_sims: int | None = None,
    draws: int | None = None,
    random_seed: int | np.random.Generator | None = None,
    items: Any = None,
    difference: float | None = None,
    power: float = 0.8,
    alpha: float = 0.05,
) -> SampleSizePlan | ItemsPlan:
    r"""Test-set size at which a metric's HDI is narrow enough (Kruschke's protocol).

    For each simulated study :math:`s = 1, \dots, S` and each test-set size
    :math:`N`: draw the classifier's true performance from the generating
    distribution, simulate a confusion matrix of size :math:`N`, and compute the
    width :math:`w_s(N)` of the metric's ``hdi_prob`` HDI under the Beta(1, 1)
    priors of Tötsch & Hoffmann (2021).  Then

    .. math::

        \text{assurance}(N) = \frac{1}{S}\sum_{s} \mathbf{1}[w_s(N) \le w^*],\qquad
        N_\text{required} = \min\{N : \text{assurance}(N) \ge A\}.

    **Rates** (``acc``, ``tpr``, ``tnr``, ``prevalence`` and their complements
    ``err``, ``fnr``, ``fpr``) have a single Beta posterior: :math:`k` successes in
    :math:`n` trials give :math:`\mathrm{Beta}(k + 1, n - k + 1)`, whose HDI width is
    computed exactly by :func:`beta_hdi` (no posterior draws).  Accuracy is treated
    as one binomial rate of all :math:`N` cases (Tötsch & Hoffmann's beta-binomial
    metrics); TPR (TNR) is a rate of the :math:`n = \mathrm{round}(N \phi)`
    (:math:`N - \mathrm{round}(N\phi)`) actual positives (negatives), with class
    fraction :math:`\phi` = ``prevalence``; :math:`N` is always the total test-set size.

    **Composite metrics** (``f1``, ``mcc``, ``bm``, ``ba``, ... any registry key):
    each study simulates a confusion matrix from (prevalence, TPR, TNR),
    draws ``draws`` times from its three-Beta posterior

    .. math::

        \phi \sim \mathrm{Beta}(1 + n_+, 1 + n_-),\quad
        TPR \sim \mathrm{Beta}(1 + tp, 1 + fn),\quad
        TNR \sim \mathrm{Beta}(1 + tn, 1 + fp),

    evaluates the metric on :math:`\theta = (TPR\,\phi, (1-TPR)\phi,
    (1-TNR)(1-\phi), TNR(1-\phi))` and takes the HDI of the draws.

    **Generating distribution.**  ``generating=(mode, concentration)`` is Kruschke's
    :math:`\mathrm{Beta}(\omega(\kappa - 2) + 1, (1 - \omega)(\kappa - 2) + 1)`;
    ``concentration=inf`` fixes the value at the mode.  It generates the rate
    itself, or for composite metrics TPR and TNR independently (the test set then
    has class fraction ``prevalence``).  ``pilot`` instead uses the three-Beta
    posterior of a pilot confusion matrix: each study draws (prevalence, TPR, TNR)
    from it (accuracy :math:`= \phi\,TPR + (1-\phi)TNR`), and, unless
    ``prevalence`` fixes the class fraction, its class counts are
    :math:`n_+ \sim \mathrm{Binomial}(N, \phi)`.

    **Search.**  The assurance is simulated on ``n_grid``; the smallest grid point
    reaching ``assurance`` is refined by bisection on the integers between it and
    the grid point below.  Every :math:`N` uses the same simulated studies (common
    random numbers: binomial counts are inverse-CDF transforms of fixed uniforms,
    posterior draws reuse one seed), so the curve is smooth in :math:`N` and the
    bisection sees the same studies throughout.

    **K classes.**  Given a pilot :class:`bayescm.MulticlassConfusionMatrix` (or a
    multiclass fit), or the truth ``prevalence`` (K class shares) with ``rows`` (the
    K×K predicted-class probabilities of each actual class), ``metric`` is a key of
    the multiclass registry (``acc``, ``kappa``, ``f1_macro``, per-class ``tpr`` with
    ``label=``, ...).  Each study draws the truth (from the pilot's posterior),
    simulates a K×K table of size :math:`N` (class counts fixed by ``prevalence``, else
    multinomial), draws ``draws`` times from the table's exact posterior under
    ``model`` and takes the HDI of the metric; see
    :mod:`bayescm.analysis.sample_size.multiclass`.  The curve adds ``mean_width``
    (the expected HDI width).

    Parameters
    ----------
    target_width
        The HDI width to reach (Tötsch & Hoffmann's MU when ``hdi_prob=0.95``), in
        (0, range of the metric]: (0, 1] for rates, (0, 2] for ``bm``, ``mcc``.
    metric
        Registry key or alias.
    hdi_prob
        Mass of the HDI.
    assurance
        Required share of studies whose HDI is at most ``target_width``, in (0, 1)
        (Kruschke's power; Tötsch & Hoffmann use 0.95).
    generating
        ``(mode, concentration)``; default ``(0.8, 10)`` as in Tötsch & Hoffmann's
        Fig. 7.  Not together with ``pilot``.
    pilot
        One :class:`bayescm.ConfusionMatrix` whose posterior generates the studies;
        or one :class:`bayescm.MulticlassConfusionMatrix` (its posterior under
        ``model``) or a multiclass fit's InferenceData (its posterior draws of
        ``theta``, one classifier) for a K-class plan.
    prevalence
        Fraction of actual positives in the planned test set, in (0, 1).  Default
        0.5 with ``generating``; with ``pilot`` the default lets the pilot's
        posterior prevalence generate the class counts.  Irrelevant for ``acc`` and
        ``err`` with ``generating``; not allowed for ``metric="prevalence"``.
        K classes: K positive shares summing to 1 (or a mapping label -> share), the
        class composition of the planned test set (class counts are its
        largest-remainder rounding of :math:`N`); required with ``rows``.
    rows
        K classes without a pilot: the K×K matrix (array, DataFrame or DataArray with
        dims ``actual``, ``predicted``) whose row *k* is the probability of each
        predicted class for a case of actual class *k* (each row sums to 1).
    label
        K classes: the class of a per-class metric (``metric="tpr", label="cat"``).
        Default: every class must reach the target (the widest class's HDI counts).
    model
        K classes: the family whose exact posterior analyses each simulated table,
        as its builder or name: ``bcm.models.multiclass_rows`` (default) or
        ``bcm.models.multiclass_cells``; flat priors.
    n_grid
        Whole test-set sizes >= 1 to simulate; default
        ``np.unique(np.round(np.logspace(1, 5, 25)))`` (10 to 100,000).
    n_sims
        Simulated studies per :math:`N`; default 1000 for rates, 400 for composite
        metrics.  The assurance has Monte Carlo s.e. :math:`\sqrt{A(1-A)/S}`.
    draws
        Posterior draws per study for composite metrics (default 1000): i.i.d. draws
        from the closed form, one chain, so ``draws`` is the total per study; unused
        for rates, whose HDI is exact.
    random_seed
        Seed or Generator.
    items, difference, power, alpha
        **Benchmark items** (:mod:`bayescm.analysis.sample_size.items`): ``items`` is an
        :class:`~bayescm.analysis.sample_size.items.ItemsDesign` (accuracy, clusters,
        runs, correlations), a mapping of its fields or a pilot
        :class:`bayescm.ItemResults`; the plan gives the number of items (and clusters,
        and items per number of runs) for ``target_width``, or for detecting a paired
        ``difference`` between two models on the same items with ``power`` at two-sided
        level ``alpha``, with the design effect of clusters and runs.  Returns an
        ``ItemsPlan``; the other options do not apply.

    Returns
    -------
    SampleSizePlan
        ``n_required``, the assurance ``curve`` and a readable summary.

    Raises
    ------
    KeyError
        For an unknown metric.
    ValueError
        For ``target_width`` outside (0, range], ``assurance`` or ``hdi_prob``
        outside (0, 1), both ``generating`` and ``pilot``, an invalid generating
        distribution, ``prevalence`` outside (0, 1) (K classes: not K positive
        shares summing to 1), ``rows`` that are not a K×K matrix of probabilities,
        a ``label`` that is not a class, or ``n_grid`` values that are not whole
        numbers >= 1.

    Notes
    -----
    For a rate the width is largest at an observed rate of 1/2, and there it is
    below the normal approximation: :math:`w \le z / \sqrt{N + 3}` (the Beta(1, 1)
    prior adds 3 to :math:`N`).  So :func:`sample_size_rule` with :math:`p = 1/2`
    is conservative: ``n_required`` never exceeds it by more than rounding, and the
    simulation pays off when the generating distribution keeps the rate away from
    1/2.  Because many studies sit near that worst case, the assurance rises
    steeply just below it: at :math:`N = 100` under the default generating
    distribution the 95% quantile of the width is 0.192 (Tötsch & Hoffmann read
    "19 percentage points" off their Fig. 7), yet only 88% of studies are below
    exactly 0.19.  HDIs of posterior draws (composite metrics) are slightly too
    narrow, by a few thousandths for 1000 draws; increase ``draws`` when targets are
    that tight.

    Examples
    --------
    How many cases does an accuracy's 95% HDI need to be at most 10 percentage
    points wide in 95% of studies, if accuracies near 0.8 are expected?

    >>> from bayescm.analysis.sample_size import sample_size
    >>> plan = sample_size(0.1, random_seed=1)
    >>> plan.n_required
    379
    >>> round(float(plan.curve.loc[100, "width_quantile"]), 3)  # Tötsch & Hoffmann: 19 pp
    0.192

    Composite metrics simulate posterior draws; informedness needs about four
    times the cases of accuracy (two rates, each on half of the data):

    >>> bm = sample_size(0.2, metric="bm", n_grid=[100, 200, 400, 800], n_sims=200,
    ...                  draws=500, random_seed=1)
    >>> bm.n_required, sample_size(0.2, random_seed=1).n_required
    (366, 93)

    Three classes: how many cases for macro-F1 known to within 0.1, given a pilot?

    >>> import bayescm as bcm
    >>> pilot = bcm.MulticlassConfusionMatrix([[50, 3, 2], [4, 40, 6], [1, 2, 30]],
    ...                                       labels=["cat", "dog", "bird"])
    >>> plan = sample_size(0.1, metric="f1_macro", pilot=pilot, n_grid=[100, 200, 400, 800],
    ...                    n_sims=100, draws=300, random_seed=1)
    >>> plan.n_required
    294
    """
    if items is not None or difference is not None or isinstance(pilot, ItemResults):
        return plan_items(target_width, items=pilot if items is None else items,
                          difference=difference, power=power, alpha=alpha, hdi_prob=hdi_prob)
    if pilot is not None and not isinstance(pilot, ConfusionMatrix | MulticlassConfusionMatrix
                                            ) and not idata_mod.is_inference_data(pilot):
        raise TypeError("pilot must be one bayescm.ConfusionMatrix, one "
                        "MulticlassConfusionMatrix or a multiclass fit's InferenceData, got "
                        f"{type(pilot).__name__}.")
    if rows is not None or (pilot is not None and registry.registry_for(pilot).multiclass):
        if generating is not None:
            raise ValueError("generating=(mode, concentration) describes one binary rate; a "
                             "K-class plan takes pilot=MulticlassConfusionMatrix(...) or the "
                             "truth prevalence=[...] with rows=[[...], ...].")
        return plan_multiclass(
            target_width, metric=metric, hdi_prob=hdi_prob, assurance=assurance, pilot=pilot,
            prevalence=prevalence, rows=rows, label=label, model=model, n_grid=n_grid,
            n_sims=n_sims, draws=draws, random_seed=random_seed)
    _binary_only(metric, label=label, model=model, prevalence=prevalence)
    return plan_binary(
        target_width, metric=metric, hdi_prob=hdi_prob, assurance=assurance,
        generating=generating, pilot=pilot, prevalence=prevalence, n_grid=n_grid,
        n_sims=n_sims, draws=draws, random_seed=random_seed)


# -- helpers ----------------------------------------------------------------------------------


def _binary_only(metric: Any, **given: Any) -> None:
    """Clear errors for K-class arguments without K-class data."""
    k_class = ("give pilot=MulticlassConfusionMatrix(...) (or a multiclass fit) or the truth "
               "prevalence=[p_1, ..., p_K] with rows=[[...], ...]")
    if isinstance(metric, registry.MulticlassMetric) or _only_multiclass(metric):
        raise ValueError(f"{getattr(metric, 'key', metric)!r} is a K-class metric: {k_class}.")
    for name in ("label", "model"):
        if given[name] is not None:
            raise ValueError(f"{name}= belongs to K-class plans: {k_class}.")
    prevalence = given["prevalence"]
    if isinstance(prevalence, Mapping) or np.ndim(prevalence) > 0:
        raise ValueError(f"A vector of class shares as prevalence= is for K classes: {k_class}.")


def _only_multiclass(metric: Any) -> bool:
    """Whether a name is a K-class metric and no binary one (``"f1_macro"``)."""
    if not isinstance(metric, str):
        return False
    try:
        registry.get(metric)
    except KeyError:
        try:
            registry.get_multiclass(metric)
        except KeyError:
            return False  # unknown everywhere: the binary lookup says so
        return True
    return False
