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
of their supplement S5.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from bayescm import metrics as registry
from bayescm.analysis.posterior import three_beta_params
from bayescm.data import ConfusionMatrix
from bayescm.stats import beta_hdi, check_hdi_prob, draw_conjugate, hdi

__all__ = ["SampleSizePlan", "beta_hdi", "sample_size", "sample_size_rule"]

# Metrics whose posterior is one Beta: key -> (base rate, complement of it?)
_RATES: dict[str, tuple[str, bool]] = {
    "acc": ("acc", False), "err": ("acc", True),
    "tpr": ("tpr", False), "fnr": ("tpr", True),
    "tnr": ("tnr", False), "fpr": ("tnr", True),
    "prevalence": ("prevalence", False),
}
_DEFAULT_GENERATING = (0.8, 10.0)
_CHUNK = 2**21  # posterior draws held in memory at once (composite metrics)


def _z(hdi_prob: float) -> float:
    return float(stats.norm.ppf(0.5 + check_hdi_prob(hdi_prob) / 2))


def sample_size_rule(mu: Any, *, hdi_prob: float = 0.95, p: Any = 0.5) -> Any:
    r"""Closed-form test-set size for a rate to reach HDI width ``mu``.

    For large :math:`N` the Beta posterior of a rate is close to a normal with
    :math:`\sigma \approx \sqrt{p(1-p)/N}`, whose central ``hdi_prob`` interval has
    width :math:`2 z \sigma` with :math:`z = \Phi^{-1}((1 + \text{hdi_prob}) / 2)`.
    Setting the width to :math:`\mu` gives

    .. math::

        N = \frac{(2 z)^2\, p (1 - p)}{\mu^2}.

    :math:`p(1-p)` is largest at :math:`p = 1/2` (the default), which gives the
    worst case :math:`N = z^2 / \mu^2`.  Tötsch & Hoffmann (2021, supplement S5)
    round :math:`z` to 2 (width :math:`\approx 4\sigma \approx 2/\sqrt{N}`) and get
    :math:`N \approx 4 / \mathrm{MU}^2`; the exact 95% factor is
    :math:`2 \cdot 1.95996 = 3.92`, i.e. :math:`N \approx 3.84 / \mathrm{MU}^2`, about
    4% fewer cases.  ``hdi_prob=0.9545`` (:math:`z = 2`) reproduces their rounding.

    For TPR (TNR) :math:`N` counts the actual positives (negatives), not the whole
    test set: divide by the class fraction for the total size.

    Parameters
    ----------
    mu
        Target HDI width(s) in (0, 1); scalar or array.
    hdi_prob
        Mass of the interval (0.95 for Tötsch & Hoffmann's MU).
    p
        The rate's value (broadcast against ``mu``); 0.5 is the worst case.

    Returns
    -------
    float or numpy.ndarray
        :math:`N` (not rounded; take the ceiling for a number of cases).

    Raises
    ------
    ValueError
        If ``mu`` or ``p`` lies outside (0, 1) or ``hdi_prob`` outside (0, 1).

    Examples
    --------
    >>> from bayescm.analysis.sample_size import sample_size_rule
    >>> round(float(sample_size_rule(0.1)), 1)
    384.1
    >>> round(float(sample_size_rule(0.1, hdi_prob=0.9545)))  # the paper's 4 / MU^2
    400
    >>> sample_size_rule([0.2, 0.1, 0.05], p=0.8).round().tolist()
    [61.0, 246.0, 983.0]
    """
    z = _z(hdi_prob)
    mu_arr = np.asarray(mu, dtype=float)
    p_arr = np.asarray(p, dtype=float)
    if not np.all((mu_arr > 0) & (mu_arr < 1)):
        raise ValueError(
            f"mu (the target HDI width) must lie in (0, 1), got {mu!r}; widths of a rate "
            "are fractions, e.g. 0.05 for 5 percentage points."
        )
    if not np.all((p_arr > 0) & (p_arr < 1)):
        raise ValueError(f"p (the rate's value) must lie in (0, 1), got {p!r}.")
    n = (2 * z) ** 2 * p_arr * (1 - p_arr) / mu_arr**2
    return n if n.ndim else float(n)


@dataclass(frozen=True, eq=False, repr=False)
class SampleSizePlan:
    """Result of :func:`sample_size`.

    Attributes
    ----------
    metric
        Registry key of the planned metric.
    target_width
        The HDI width to reach.
    hdi_prob, assurance
        Mass of the HDI; required share of studies reaching the target.
    n_required
        Smallest test-set size :math:`N` whose simulated assurance reaches
        ``assurance`` (None when no evaluated :math:`N` does: extend ``n_grid``).
    curve
        One row per evaluated :math:`N` (index ``n``, the grid plus the bisection
        steps): ``assurance`` (share of studies with HDI width <= target),
        ``assurance_se`` (its binomial Monte Carlo standard error),
        ``median_width`` and ``width_quantile`` (the ``assurance`` quantile of the
        width: at this :math:`N` a share ``assurance`` of studies is at least this
        precise).
    generating
        Description of the generating distribution.
    method
        ``"exact Beta HDI"`` (rates) or ``"posterior draws"`` (composite metrics).
    n_sims, draws
        Simulated studies per :math:`N`; posterior draws per study (None for rates).
    n_rule
        The worst-case normal rule (:func:`sample_size_rule`, :math:`p = 1/2`)
        converted to a total test-set size, for rates; None otherwise.
    note
        Anything the reader should know (e.g. the target is reached already at the
        smallest :math:`N` evaluated).
    """

    metric: str
    target_width: float
    hdi_prob: float
    assurance: float
    n_required: int | None
    curve: pd.DataFrame
    generating: str
    method: str
    n_sims: int
    draws: int | None
    n_rule: float | None
    note: str

    @property
    def reached(self) -> bool:
        """Whether some evaluated N reaches the assurance."""
        return self.n_required is not None

    def to_frame(self) -> pd.DataFrame:
        """The assurance :attr:`curve` (one row per evaluated N) with a column
        ``reached`` (assurance at least the required one); ``attrs`` hold the plan."""
        frame = self.curve.copy()
        frame["reached"] = frame["assurance"] >= self.assurance
        frame.attrs = {**self.curve.attrs, "n_required": self.n_required,
                       "generating": self.generating, "method": self.method,
                       "n_sims": self.n_sims, "draws": self.draws, "n_rule": self.n_rule}
        return frame

    def _lines(self) -> list[tuple[str, str]]:
        grid = self.curve.index
        if self.n_required is None:
            found = f"not reached up to N = {grid.max()}: extend n_grid"
        else:
            row = self.curve.loc[self.n_required]
            found = (f"{self.n_required}  (assurance {row['assurance']:.3f} "
                     f"± {row['assurance_se']:.3f} MC s.e.)")
        sim = (f"{self.n_sims} studies per N, {self.method}"
               + (f" ({self.draws} draws each)" if self.draws else "")
               + f"; N from {grid.min()} to {grid.max()} ({len(grid)} evaluated)")
        lines = [("n_required", found), ("generating", self.generating), ("simulation", sim)]
        if self.n_rule is not None:
            lines.append(("normal rule", f"{self.n_rule:.0f}  (worst case p = 1/2, "
                                         "Tötsch & Hoffmann S5 with exact z)"))
        if self.note:
            lines.append(("note", self.note))
        return lines

    def _title(self) -> str:
        return (f"SampleSizePlan: {self.metric}, {self.hdi_prob:.0%} HDI width <= "
                f"{self.target_width:g} with assurance {self.assurance:.0%}")

    def __repr__(self) -> str:
        width = max(len(k) for k, _ in self._lines())
        body = "\n".join(f"  {k:<{width}} : {v}" for k, v in self._lines())
        return f"{self._title()}\n{body}"

    def _repr_html_(self) -> str:
        rows = "".join(f"<tr><th style='text-align:left'>{html.escape(k)}</th>"
                       f"<td style='text-align:left'>{html.escape(v)}</td></tr>"
                       for k, v in self._lines())
        curve = self.curve.to_html(float_format=lambda x: f"{x:.4g}")
        return (f"<div><p><b>{html.escape(self._title())}</b></p><table>{rows}</table>"
                f"<details><summary>curve ({len(self.curve)} rows)</summary>{curve}"
                "</details></div>")


def sample_size(
    target_width: float,
    *,
    metric: str | registry.Metric = "acc",
    hdi_prob: float = 0.95,
    assurance: float = 0.95,
    generating: tuple[float, float] | None = None,
    pilot: ConfusionMatrix | None = None,
    prevalence: float | None = None,
    n_grid: Sequence[int] | np.ndarray | None = None,
    n_sims: int | None = None,
    draws: int | None = None,
    random_seed: int | np.random.Generator | None = None,
) -> SampleSizePlan:
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
        One :class:`bayescm.ConfusionMatrix` whose posterior generates the studies.
    prevalence
        Fraction of actual positives in the planned test set, in (0, 1).  Default
        0.5 with ``generating``; with ``pilot`` the default lets the pilot's
        posterior prevalence generate the class counts.  Irrelevant for ``acc`` and
        ``err`` with ``generating``; not allowed for ``metric="prevalence"``.
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
        distribution, ``prevalence`` outside (0, 1), or ``n_grid`` values that are
        not whole numbers >= 1.

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
    """
    m = metric if isinstance(metric, registry.Metric) else registry.get(metric)
    key = m.key
    _z(hdi_prob)  # validates hdi_prob
    span = m.bounds[1] - m.bounds[0]
    if not (_is_number(target_width) and 0 < target_width <= span):
        raise ValueError(
            f"target_width must be a number in (0, {span:g}] for {key!r} (the width of its "
            f"range), got {target_width!r}; e.g. 0.1 for 10 percentage points."
        )
    if not (_is_number(assurance) and 0 < assurance < 1):
        raise ValueError(
            f"assurance must lie in (0, 1) (the share of studies that must reach the "
            f"target, e.g. 0.95), got {assurance!r}."
        )
    if generating is not None and pilot is not None:
        raise ValueError(
            "Give either generating=(mode, concentration) or pilot=ConfusionMatrix(...), "
            "not both: each defines where the simulated classifiers come from."
        )
    if prevalence is not None and not (_is_number(prevalence) and 0 < prevalence < 1):
        raise ValueError(
            f"prevalence (the fraction of actual positives in the test set) must lie in "
            f"(0, 1), got {prevalence!r}."
        )
    rate = _RATES.get(key)
    if rate is not None and rate[0] == "prevalence" and prevalence is not None:
        raise ValueError(
            "metric='prevalence' plans for the prevalence itself, so prevalence= cannot "
            "fix it; use generating=(mode, concentration) for its expected value."
        )
    grid = _grid(n_grid)
    n_sims = _positive_int(n_sims, 1000 if rate else 400, "n_sims", minimum=2)
    draws = None if rate else _positive_int(draws, 1000, "draws", minimum=10)
    rng = np.random.default_rng(random_seed)

    if pilot is not None:
        params, desc = _from_pilot(pilot, n_sims, rng)
    else:
        mode, conc = _check_generating(_DEFAULT_GENERATING if generating is None else generating)
        names = ("tpr", "tnr") if rate is None else (rate[0],)
        params = {name: _kruschke(mode, conc, n_sims, rng) for name in names}
        what = " and ".join(names)
        desc = f"{what} ~ Beta(mode {mode:g}, concentration {conc:g})"
        if conc == np.inf:
            desc = f"{what} = {mode:g} (fixed)"
    if key in ("err", "fnr", "fpr") and pilot is not None:
        desc += f"; {key} = 1 - {rate[0]}"
    fixed_phi = prevalence if prevalence is not None else (0.5 if pilot is None else None)
    if fixed_phi is not None and (rate is None or rate[0] in ("tpr", "tnr")):
        desc += f"; test set with prevalence {fixed_phi:g}"
    elif pilot is not None and (rate is None or rate[0] in ("tpr", "tnr")):
        desc += "; class counts ~ Binomial(N, prevalence)"
    if pilot is not None and prevalence is not None and rate is not None and rate[0] == "acc":
        desc += f"; accuracy at prevalence {prevalence:g}"
    uniforms = 1 - rng.random((3, n_sims))  # in (0, 1]: binom.ppf(0) would be -1
    post_seed = int(rng.integers(2**63))

    if rate is not None:
        simulate = _rate_simulator(rate[0], params, uniforms, fixed_phi, hdi_prob)
        method = "exact Beta HDI"
    else:
        simulate = _composite_simulator(m, params, uniforms, fixed_phi, hdi_prob, draws,
                                        post_seed)
        method = "posterior draws"

    rows: dict[int, dict[str, float]] = {}

    def evaluate(n: int) -> bool:
        if n not in rows:
            w = simulate(n)
            w = np.where(np.isnan(w), np.inf, w)  # undefined metric: target not reached
            share = float(np.mean(w <= target_width))
            rows[n] = {
                "assurance": share,
                "assurance_se": float(np.sqrt(share * (1 - share) / n_sims)),
                "median_width": float(np.quantile(w, 0.5, method="inverted_cdf")),
                "width_quantile": float(np.quantile(w, assurance, method="inverted_cdf")),
            }
        return rows[n]["assurance"] >= assurance

    hits = [evaluate(int(n)) for n in grid]
    note = ""
    n_required: int | None = None
    if any(hits):
        i = hits.index(True)
        n_required = int(grid[i])
        if i == 0:
            note = (f"the target is met already at the smallest N evaluated ({n_required}); "
                    "add smaller values to n_grid to find the minimum")
        else:
            lo, hi = int(grid[i - 1]), n_required
            while hi - lo > 1:
                mid = (lo + hi) // 2
                lo, hi = (lo, mid) if evaluate(mid) else (mid, hi)
            n_required = hi
    curve = pd.DataFrame.from_dict(rows, orient="index").sort_index()
    curve.index = curve.index.astype(np.int64).rename("n")
    curve.attrs.update(metric=key, target_width=float(target_width), hdi_prob=hdi_prob,
                       assurance=assurance)

    n_rule = None
    if rate is not None and target_width < 1:
        n_rule = float(sample_size_rule(target_width, hdi_prob=hdi_prob))
        if rate[0] in ("tpr", "tnr"):
            phi = fixed_phi if fixed_phi is not None else float(np.mean(params["prevalence"]))
            n_rule /= phi if rate[0] == "tpr" else 1 - phi
    return SampleSizePlan(
        metric=key, target_width=float(target_width), hdi_prob=hdi_prob,
        assurance=assurance, n_required=n_required, curve=curve, generating=desc,
        method=method, n_sims=n_sims, draws=draws, n_rule=n_rule, note=note,
    )


# -- helpers ----------------------------------------------------------------------------------


def _is_number(x: Any) -> bool:
    return isinstance(x, int | float | np.integer | np.floating) and not isinstance(x, bool)


def _grid(n_grid: Any) -> np.ndarray:
    if n_grid is None:
        return np.unique(np.round(np.logspace(1, 5, 25))).astype(np.int64)
    arr = np.atleast_1d(np.asarray(n_grid, dtype=float))
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError("n_grid must be a non-empty 1-d sequence of test-set sizes.")
    if not np.isfinite(arr).all() or (arr < 1).any():
        raise ValueError(
            f"n_grid must hold test-set sizes >= 1, got {arr[~(np.isfinite(arr) & (arr >= 1))]}."
        )
    if (arr != np.round(arr)).any():
        raise ValueError(
            "n_grid must hold whole numbers of cases; round it, e.g. "
            "np.unique(np.round(n_grid))."
        )
    return np.unique(arr).astype(np.int64)


def _positive_int(value: Any, default: int, name: str, *, minimum: int) -> int:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        raise ValueError(f"{name} must be a whole number >= {minimum}, got {value!r}.")
    return int(value)


def _check_generating(generating: Any) -> tuple[float, float]:
    try:
        mode, conc = (float(v) for v in generating)
    except (TypeError, ValueError) as err:
        raise ValueError(
            f"generating must be (mode, concentration), e.g. (0.8, 10), got {generating!r}."
        ) from err
    if not 0 <= mode <= 1:
        raise ValueError(f"The generating mode must lie in [0, 1], got {mode}.")
    if not conc >= 2:
        raise ValueError(
            f"The generating concentration must be >= 2 (2 is uniform; inf fixes the value "
            f"at the mode), got {conc}."
        )
    return mode, conc


def _kruschke(mode: float, conc: float, size: int, rng: np.random.Generator) -> np.ndarray:
    if conc == np.inf:
        return np.full(size, mode)
    return rng.beta(mode * (conc - 2) + 1, (1 - mode) * (conc - 2) + 1, size=size)


def _from_pilot(pilot: Any, size: int, rng: np.random.Generator) -> tuple[dict, str]:
    if not isinstance(pilot, ConfusionMatrix):
        raise TypeError(f"pilot must be a bayescm.ConfusionMatrix, got {type(pilot).__name__}.")
    if len(pilot) != 1:
        raise ValueError(
            f"pilot holds {len(pilot)} confusion matrices; pass one, e.g. "
            f"pilot[{pilot.classifiers[0]!r}]."
        )
    tp, fn, fp, tn = (int(v) for v in pilot.counts[0])
    params = draw_conjugate(rng, (size,), betas=three_beta_params(tp, fn, fp, tn))
    desc = f"three-Beta posterior of the pilot (tp={tp}, fn={fn}, fp={fp}, tn={tn})"
    return params, desc


def _class_counts(n: int, fixed_phi: float | None, params: dict, u: np.ndarray) -> np.ndarray:
    if fixed_phi is not None:
        return np.full(u.shape, np.floor(n * fixed_phi + 0.5))
    return stats.binom.ppf(u, n, params["prevalence"])


def _rate_simulator(
    base: str, params: dict, uniforms: np.ndarray, fixed_phi: float | None, hdi_prob: float
) -> Callable[[int], np.ndarray]:
    if base == "acc" and "tpr" in params:  # pilot: accuracy at the test set's class fraction
        phi = params["prevalence"] if fixed_phi is None else fixed_phi
        value = phi * params["tpr"] + (1 - phi) * params["tnr"]
    else:
        value = params[base]

    def simulate(n: int) -> np.ndarray:
        if base in ("tpr", "tnr"):
            n_pos = _class_counts(n, fixed_phi, params, uniforms[0])
            trials = n_pos if base == "tpr" else n - n_pos
        else:
            trials = np.full(uniforms.shape[1], float(n))
        k = stats.binom.ppf(uniforms[1], trials, value)
        # few distinct (trials, k) pairs: one exact HDI per pair
        pairs, inverse = np.unique(np.stack([trials, k]), axis=1, return_inverse=True)
        lo, hi = beta_hdi(pairs[1] + 1, pairs[0] - pairs[1] + 1, hdi_prob=hdi_prob)
        return (hi - lo)[inverse.ravel()]

    return simulate


def _composite_simulator(
    metric: registry.Metric,
    params: dict,
    uniforms: np.ndarray,
    fixed_phi: float | None,
    hdi_prob: float,
    draws: int,
    seed: int,
) -> Callable[[int], np.ndarray]:
    n_sims = uniforms.shape[1]
    chunk = max(1, _CHUNK // draws)

    def simulate(n: int) -> np.ndarray:
        n_pos = _class_counts(n, fixed_phi, params, uniforms[0])
        n_neg = n - n_pos
        tp = stats.binom.ppf(uniforms[1], n_pos, params["tpr"])
        tn = stats.binom.ppf(uniforms[2], n_neg, params["tnr"])
        fn, fp = n_pos - tp, n_neg - tn
        rng = np.random.default_rng(seed)  # same posterior draws' stream for every N
        widths = np.empty(n_sims)
        for start in range(0, n_sims, chunk):  # bounded memory: blocks of studies
            s = slice(start, start + chunk)
            # one row of draws per study: parameters broadcast to (studies, draws)
            shape = (len(tp[s]), draws)
            cols = (np.broadcast_to(c[s][:, None], shape) for c in (tp, fn, fp, tn))
            post = draw_conjugate(rng, (), betas=three_beta_params(*cols))
            values = registry.evaluate(metric, *registry.cells_from_rates(
                post["prevalence"], post["tpr"], post["tnr"]))
            lo, hi = hdi(values, hdi_prob)
            widths[s] = hi - lo
        return widths

    return simulate
