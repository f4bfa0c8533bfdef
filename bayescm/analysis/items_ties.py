r"""Sets of models statistically tied at a level, from one fit's joint posterior.

Models are ordered by posterior mean of the metric, best first.  A *tier* starts at
its leader :math:`L`; each following model :math:`m` joins it while
:math:`P(\text{metric}_L \succ \text{metric}_m \mid D) < \text{level}` (the leader is
not credibly better), and the first model the leader beats with probability at least
``level`` starts the next tier.  The probabilities come from the same posterior draws
(for :func:`bayescm.models.items`, paired by the shared item difficulty).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from bayescm import metrics as registry
from bayescm.data.confusion import unit_of
from bayescm.inference.posterior import metric_draws
from bayescm.stats import SAMPLE_DIMS

__all__ = ["tied_sets"]


def tied_sets(fit: Any, metric: str = "acc", *, level: float = 0.95) -> pd.DataFrame:
    """Tiers of models no one of which is credibly worse than its tier's leader.

    Returns
    -------
    pandas.DataFrame
        Index: the units (models), best first; columns ``mean``, ``tier`` (1 = the
        top set), ``p_leader_better`` (P(the tier's leader is better than this unit)).

    Examples
    --------
    >>> import numpy as np, xarray as xr, arviz as az
    >>> draws = np.random.default_rng(0).normal([0.80, 0.79, 0.60], 0.01, (1, 4000, 3))
    >>> fit = az.InferenceData(posterior=xr.Dataset(
    ...     {"acc": (("chain", "draw", "model"), draws)}, coords={"model": ["a", "b", "c"]}))
    >>> tied_sets(fit)["tier"].tolist()
    [1, 1, 2]
    """
    if not 0.5 < level < 1:
        raise ValueError(f"level must lie between 0.5 and 1, got {level!r}.")
    key = registry.registry_for(fit).key(metric)
    da = metric_draws(fit, key)
    unit = unit_of(da)
    if unit is None:
        raise ValueError(f"The fit's {key!r} has no unit dim to rank.")
    values = da.transpose(*SAMPLE_DIMS, unit).values.reshape(-1, da.sizes[unit])
    names = [str(u) for u in da[unit].values]
    sign = 1.0 if registry.higher_is_better(key) else -1.0
    order = np.argsort(-sign * values.mean(axis=0), kind="stable")
    tiers, probs, tier, leader = [], [], 0, None
    for j in order:
        p = 0.0 if leader is None else float(np.mean(sign * (values[:, leader] - values[:, j])
                                                     > 0))
        if leader is None or p >= level:
            tier, leader, p = tier + 1, j, 0.0
        tiers.append(tier)
        probs.append(p)
    frame = pd.DataFrame({"mean": values.mean(axis=0)[order], "tier": tiers,
                          "p_leader_better": probs},
                         index=pd.Index([names[j] for j in order], name=unit))
    frame.attrs["level"] = level
    return frame
