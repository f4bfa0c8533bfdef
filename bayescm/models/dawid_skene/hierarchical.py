r"""Partial pooling of the raters' confusion rows: hierarchical Dawid–Skene.

Paun, Carpenter, Chamberlain, Hovy, Kruschwitz & Poesio ("Comparing Bayesian models of
annotation", 2018) draw every rater's confusion rows around shared ones.  Row
:math:`c` of rater :math:`r` is a softmax of logits measured against the diagonal
(the right label's logit is fixed at 0, which identifies the softmax):

.. math::

    \theta_{rc\cdot} = \operatorname{softmax}(u_{rc\cdot}),\qquad u_{rcc} = 0,\qquad
    u_{rcl} = \zeta_{cl} + \sigma_{cl}\,\eta_{rcl}\quad (l \ne c),

    \zeta_{cl} \sim \mathrm{Normal}(\mu, s),\qquad
    \sigma_{cl} \sim \mathrm{HalfNormal}(\tau),\qquad
    \eta_{rcl} \sim \mathrm{Normal}(0, 1)

(non-centred: NUTS sees :math:`\eta`, not :math:`u`).  :math:`u_{rcl} =
\log(\theta_{rcl}/\theta_{rcc})` is how much less often rater :math:`r` says :math:`l`
than the right label :math:`c`; :math:`\zeta` is the population's centre and
:math:`\sigma` how much raters differ.  ``confusion_population`` is
:math:`\operatorname{softmax}(0, \zeta_{c\cdot})` per row: the confusion matrix of a
rater at the population's centre (:math:`\eta = 0`, the median rater on every logit).

**Defaults with the information of the non-pooled ones.** Under the non-pooled
default row, Dirichlet with 2 on the diagonal and 1 off it, the log ratio
:math:`\log(\theta_{cl}/\theta_{cc}) = \log G_l - \log G_c` of Gamma variables has
mean :math:`\psi(1) - \psi(2) = -1` and variance :math:`\psi'(1) + \psi'(2) =
\pi^2/3 - 1 \approx 2.29`.  With :math:`\tau = 1` (:math:`E\sigma^2 = 1`) and
:math:`s = \sqrt{\pi^2/3 - 2} \approx 1.14`, every rater's logit has a priori the
same mean :math:`-1` and variance :math:`s^2 + \tau^2 \approx 2.30`: the same
diagonal dominance ("better than chance, not good"), whatever :math:`K`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from bayescm.family import Kernel, ModelSpec
from bayescm.models._dirichlet import dirichlet
from bayescm.models._spec import data_value
from bayescm.models.dawid_skene.likelihood import relabelling
from bayescm.priors import Dirichlet, HalfNormal, Normal

if TYPE_CHECKING:
    import pymc as pm
    import pytensor.tensor as pt

__all__ = ["PARTIAL_PRIORS", "build_confusion", "centred", "default_partial_priors",
           "off_diagonal", "partial_kernel", "partial_prior_draws", "partial_start",
           "partial_values", "sample_prior"]

#: The partially pooled model's prior names besides ``prevalence``.
PARTIAL_PRIORS = ("confusion_logit_mean", "confusion_logit_scale")
LOGIT_SD = round(math.sqrt(math.pi ** 2 / 3 - 2), 2)


def default_partial_priors(k: int) -> dict[str, Any]:
    r"""Defaults of ``pooling="partial"`` at K classes.

    ``prevalence`` Dirichlet(2/K) as without pooling; ``confusion_logit_mean``
    Normal(-1, 1.14) for every :math:`\zeta_{cl}`; ``confusion_logit_scale``
    HalfNormal(1) for every :math:`\sigma_{cl}` (see the module's docstring).

    >>> default_partial_priors(3)["confusion_logit_mean"]
    Normal(-1, 1.14)
    """
    return {"prevalence": Dirichlet((2.0 / k,) * k),
            "confusion_logit_mean": Normal(-1.0, LOGIT_SD),
            "confusion_logit_scale": HalfNormal(1.0)}


def off_diagonal(k: int) -> np.ndarray:
    """``(K, K)`` int: where row ``c``'s label ``l`` sits among ``[0 (the diagonal),
    the K-1 off-diagonal logits in label order]``: 0 on the diagonal, ``l + 1`` left of
    it, ``l`` right of it."""
    c, l_ = np.meshgrid(np.arange(k), np.arange(k), indexing="ij")
    return np.where(l_ == c, 0, np.where(l_ < c, l_ + 1, l_))


def _full(off: pt.TensorVariable, k: int) -> pt.TensorVariable:
    """``(..., K, K-1)`` off-diagonal logits -> ``(..., K, K)`` with 0 on the diagonal."""
    import pytensor.tensor as pt

    cat = pt.concatenate([pt.zeros_like(off[..., :1]), off], axis=-1)
    return cat[..., np.arange(k)[:, None], off_diagonal(k)]


def build_confusion(k: int, mu: Any, sd: Any, tau: Any) -> pm.Deterministic:
    """Inside a model context: the free ``confusion_logit_mean`` (ζ), ``confusion_logit_scale``
    (σ), ``confusion_logit_z`` (η) (dims ``actual, error``; η also ``rater``), and the
    deterministic ``confusion`` (dims ``rater, actual, predicted``) and
    ``confusion_population`` (dims ``actual, predicted``); returns ``confusion``."""
    import pymc as pm
    from pytensor.tensor.special import softmax

    zeta = pm.Normal("confusion_logit_mean", mu=mu, sigma=sd, dims=("actual", "error"))
    sigma = pm.HalfNormal("confusion_logit_scale", sigma=tau, dims=("actual", "error"))
    eta = pm.Normal("confusion_logit_z", 0.0, 1.0, dims=("rater", "actual", "error"))
    conf = pm.Deterministic("confusion", softmax(_full(zeta + sigma * eta, k), axis=-1),
                            dims=("rater", "actual", "predicted"))
    pm.Deterministic("confusion_population", softmax(_full(zeta, k), axis=-1),
                     dims=("actual", "predicted"))
    return conf


def partial_values(zeta: np.ndarray, sigma: np.ndarray, eta: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray]:
    """NumPy ``confusion (..., R, K, K)`` and ``confusion_population (..., K, K)`` from
    ``zeta, sigma (..., K, K-1)`` and ``eta (..., R, K, K-1)``."""
    from scipy.special import softmax

    k = zeta.shape[-2]
    idx = off_diagonal(k)

    def full(off: np.ndarray) -> np.ndarray:
        cat = np.concatenate([np.zeros((*off.shape[:-1], 1)), off], axis=-1)
        return np.take_along_axis(cat, np.broadcast_to(idx, (*off.shape[:-1], k)), axis=-1)

    conf = softmax(full(zeta[..., None, :, :] + sigma[..., None, :, :] * eta), axis=-1)
    return conf, softmax(full(zeta), axis=-1)


def partial_start(conf0: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """ζ, log σ, η at the EM confusion matrices ``conf0 (R, K, K)`` (where the chains
    start): ζ the raters' mean log ratio to the diagonal, σ their sd (at least 0.3),
    η the standardised deviations."""
    k = conf0.shape[-1]
    diag = conf0[:, np.arange(k), np.arange(k)]
    ratio = np.log(conf0) - np.log(diag)[..., None]  # (R, K, K), 0 on the diagonal
    mask = ~np.eye(k, dtype=bool)
    u = ratio[:, mask].reshape(conf0.shape[0], k, k - 1)
    zeta = u.mean(axis=0)
    sigma = np.maximum(u.std(axis=0), 0.3)
    return zeta, np.log(sigma), (u - zeta) / sigma


def sample_prior(alpha: np.ndarray, mu: np.ndarray, sd: np.ndarray, tau: np.ndarray,
                 n_raters: int, n: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """``n`` joint prior draws of the partially pooled model (unrestricted)."""
    k = alpha.size
    prevalence = dirichlet(rng, alpha, (n, k))
    zeta = rng.normal(mu, sd, size=(n, k, k - 1))
    sigma = np.abs(rng.normal(0.0, tau, size=(n, k, k - 1)))
    eta = rng.normal(size=(n, n_raters, k, k - 1))
    conf, pop = partial_values(zeta, sigma, eta)
    return {"prevalence": prevalence, "confusion": conf,
            "confusion_population": pop, "confusion_logit_mean": zeta,
            "confusion_logit_scale": sigma, "confusion_logit_z": eta}


def partial_kernel(model: pm.Model, spec: ModelSpec) -> Kernel:
    """The compiled density of a partially pooled model
    (:mod:`~bayescm.models.dawid_skene.kernel_partial`), started at the EM point."""
    from bayescm.models.dawid_skene import kernel as _kernel_dawid_skene
    from bayescm.models.dawid_skene import kernel_partial as _kernel_partial

    counts = data_value(model, "pattern_counts")
    n_pat, r, k = counts.shape
    indptr, cell, count = _kernel_dawid_skene.csr(counts)
    prev0, conf0 = spec.extra["start"]
    zeta0, log_sigma0, eta0 = partial_start(conf0)
    y0 = np.concatenate([centred(prev0), zeta0.ravel(), log_sigma0.ravel(), eta0.ravel()])
    user_data = np.concatenate([
        [k, r, n_pat, cell.size], data_value(model, "prevalence_alpha").ravel(),
        *(data_value(model, n).ravel() for n in ("confusion_logit_mu", "confusion_logit_sd",
                                                  "confusion_scale_sd")),
        y0, data_value(model, "multiplicity").ravel(), data_value(model, "pattern_gold").ravel(),
        indptr, cell, count]).astype(float)
    return Kernel(_kernel_partial, user_data, y0.size,
                  ["prevalence", "confusion", "confusion_population", "confusion_logit_mean",
                   "confusion_logit_scale"], [(k,), (r, k, k), (k, k), (k, k - 1), (k, k - 1)])


def partial_prior_draws(model: pm.Model, spec: ModelSpec, size: tuple[int, ...],
                         rng: np.random.Generator) -> dict[str, np.ndarray] | None:
    """The partially pooled prior restricted to the raters' labelling, by rejection
    (None when under one draw in a hundred is kept)."""
    values = {n: data_value(model, n).astype(float)
              for n in ("prevalence_alpha", "confusion_logit_mu", "confusion_logit_sd",
                        "confusion_scale_sd")}
    n, k = int(np.prod(size)), values["prevalence_alpha"].size
    kept: list[dict[str, np.ndarray]] = []
    have = 0
    while have < n:
        batch = sample_prior(*values.values(), spec.data.n_raters, n, rng)
        ok = np.all(relabelling(batch["confusion"]) == np.arange(k), axis=-1)
        if not have and ok.mean() < 0.01:
            return None
        kept.append({name: v[ok] for name, v in batch.items()})
        have += int(ok.sum())
    out = {name: np.concatenate([b[name] for b in kept])[:n].reshape(*size, *v.shape[1:])
           for name, v in kept[0].items()}
    out["theta"] = out["prevalence"][..., None, :, None] * out["confusion"]
    return out


def centred(p: np.ndarray) -> np.ndarray:
    """PyMC's simplex coordinates of ``p`` (last axis): ``(log p - mean log p)[:-1]``."""
    lp = np.log(p)
    return (lp - lp.mean(axis=-1, keepdims=True))[..., :-1]
