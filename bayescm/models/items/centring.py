r"""Whether the items model samples its cluster effects centred (``centered="auto"``).

Non-centred, NUTS samples :math:`z_c` with the effect :math:`v_c = \sigma z_c`;
centred, it samples :math:`v_c \sim \mathrm{ZeroSumNormal}(\sigma)` itself.  When
each cluster's own scores pin :math:`v_c`, the non-centred form is a curved ridge in
:math:`(\sigma, z)` and mixes slowly; when they do not, the centred form is a funnel
(Betancourt & Girolami, "Hamiltonian Monte Carlo for hierarchical models", 2015).  The
rule and its two constants were chosen with ``benchmarks/bench_items_cluster_centring.py``
(the items model card's table).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from bayescm.data.items import ItemResults

__all__ = ["CENTRE_MIN_CLUSTER", "CLUSTER_SPREAD", "cluster_spread_over_noise",
           "clusters_stand_out"]

CENTRE_MIN_CLUSTER = 20
"""``centered="auto"``: cluster effects are centred only when clusters hold at least
this many scores on average (items x models x runs) and their spread stands out from
their noise by :data:`CLUSTER_SPREAD`."""

CLUSTER_SPREAD = 2.0
"""``centered="auto"``: cluster effects are centred when the clusters' spread in
log-odds, estimated by moments, is at least this many times their median standard
error (:func:`cluster_spread_over_noise`; and clusters hold :data:`CENTRE_MIN_CLUSTER`
scores).  Then each cluster's data, not the prior, shape its effect, and the
non-centred :math:`\\sigma z` mixes slowly; with a spread near the noise the centred
form is a funnel.  Chosen on 32 simulated benchmarks and one real one (the model card);
the worst collapse of the centred form seen was at 1.2."""


def cluster_spread_over_noise(res: ItemResults) -> float:
    r"""The clusters' spread in log-odds over their noise, the statistic
    ``centered="auto"`` compares with :data:`CLUSTER_SPREAD`.

    With :math:`p_c = (y_c + 1/2)/(n_c + 1)` each cluster's pooled score (all models
    and runs; half a success and a failure keep it finite at 0 and at all) and
    :math:`s^2 = \operatorname{median}_c 1/(n_c p_c (1 - p_c))` the median squared
    standard error of its log-odds, the moment estimate of the spread is
    :math:`\hat\sigma^2 = \max(\operatorname{var}_c \operatorname{logit} p_c - s^2, 0)`
    and the statistic is :math:`\hat\sigma / s`."""
    n_c = np.bincount(res.cluster_index, weights=res.trials_array.sum(axis=0),
                      minlength=res.n_clusters)
    y_c = np.bincount(res.cluster_index, weights=res.successes_array.sum(axis=0),
                      minlength=res.n_clusters)
    p = (y_c + 0.5) / (n_c + 1.0)
    se2 = np.median(1.0 / (n_c * p * (1.0 - p)))
    spread2 = np.var(np.log(p / (1.0 - p)), ddof=1) - se2
    return float(np.sqrt(max(spread2, 0.0) / se2))


def clusters_stand_out(res: ItemResults) -> bool:
    """``centered="auto"`` for the cluster effects: enough scores per cluster and a
    spread clearly above the noise (:data:`CENTRE_MIN_CLUSTER`, :data:`CLUSTER_SPREAD`)."""
    return bool(res.trials_array.sum() / res.n_clusters >= CENTRE_MIN_CLUSTER
                and cluster_spread_over_noise(res) >= CLUSTER_SPREAD)
