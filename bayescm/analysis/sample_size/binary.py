r"""Sample-size planning for binary metrics: the normal rule and Kruschke's simulation.

:func:`bayescm.analysis.sample_size` hands binary plans to :func:`plan_binary`:
rates get exact Beta HDIs, composite metrics HDIs of three-Beta posterior draws
(the method is described there); :func:`sample_size_rule` is the closed-form
normal approximation of Tötsch & Hoffmann (2021, supplement S5).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from scipy import stats

from bayescm import metrics as registry
from bayescm.analysis.sample_size.result import (
    SampleSizePlan,
    check_goal,
    grid,
    is_number,
    positive_int,
    search,
)
from bayescm.data.confusion import CELLS, ConfusionMatrix
from bayescm.family import default_family
from bayescm.stats import beta_hdi, check_hdi_prob, draw_conjugate, hdi

__all__ = ["plan_binary", "sample_size_rule"]


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


def plan_binary(
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
    """The binary plan of :func:`bayescm.analysis.sample_size` (same arguments)."""
    m = metric if isinstance(metric, registry.Metric) else registry.get(metric)
    key = m.key
    _z(hdi_prob)  # validates hdi_prob
    check_goal(target_width, m.bounds[1] - m.bounds[0], key, assurance)
    if generating is not None and pilot is not None:
        raise ValueError(
            "Give either generating=(mode, concentration) or pilot=ConfusionMatrix(...), "
            "not both: each defines where the simulated classifiers come from."
        )
    if prevalence is not None and not (is_number(prevalence) and 0 < prevalence < 1):
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
    n_grid = grid(n_grid)
    n_sims = positive_int(n_sims, 1000 if rate else 400, "n_sims", minimum=2)
    draws = None if rate else positive_int(draws, 1000, "draws", minimum=10)
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

    n_required, curve, note = search(simulate, n_grid, target_width=target_width,
                                     assurance=assurance, n_sims=n_sims)
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
    cells = {c: int(pilot.cell(c)[0]) for c in CELLS}
    params = draw_conjugate(rng, (size,),
                            betas=default_family("binary").rate_posteriors(cells))
    shown = ", ".join(f"{c}={n}" for c, n in cells.items())
    desc = f"three-Beta posterior of the pilot ({shown})"
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
    family = default_family("binary")

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
            cells = {c: np.broadcast_to(v[s][:, None], shape)
                     for c, v in (("tp", tp), ("fn", fn), ("fp", fp), ("tn", tn))}
            post = draw_conjugate(rng, (), betas=family.rate_posteriors(cells))
            values = registry.evaluate(metric, *registry.cells_from_rates(
                post["prevalence"], post["tpr"], post["tnr"]))
            lo, hi = hdi(values, hdi_prob)
            widths[s] = hi - lo
        return widths

    return simulate
