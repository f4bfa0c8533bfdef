r"""Paired differences from one fit: two units' metric on the same posterior draws.

A fit of many models on the same items (``bcm.models.items``) -- or any fit of a
batch whose units share parameters -- holds their *joint* posterior: draw :math:`s`
gives every unit's metric at once.  The difference :math:`m_A^{(s)} - m_B^{(s)}` on
the same draw carries whatever correlation the model puts between them (for items,
the shared item and cluster difficulty), so it is the paired comparison;
:func:`bayescm.analysis.compare_paired` takes ``(fit, a, b, metric)`` this way.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import numpy as np

from bayescm import metrics as registry
from bayescm.data.confusion import unit_of
from bayescm.inference.posterior import metric_draws, select, select_class
from bayescm.stats import SAMPLE_DIMS

__all__ = ["joint_difference"]


def joint_difference(fit: Any, a: Any, b: Any, metric: str, *,
                     label: Hashable | None = None) -> tuple[np.ndarray, str]:
    """Draws of metric(A) - metric(B) on the same posterior draws, and the metric key.

    Raises
    ------
    KeyError
        Unknown metric or unit (the message lists the units).
    ValueError
        A fit without a unit dim, or A = B.
    """
    key = registry.registry_for(fit).key(metric)
    da = metric_draws(fit, key)
    unit = unit_of(da)
    if unit is None:
        raise ValueError(f"The fit's {key!r} has no unit dim (classifier, slice or model) to "
                         "pick A and B from.")
    if str(a) == str(b):
        raise ValueError(f"A and B are both {a!r}: name two different {unit}s.")
    sides = [select_class(select(da, str(x)), label, key) for x in (a, b)]
    extra = [d for d in sides[0].dims if d not in SAMPLE_DIMS]
    if extra:
        raise ValueError(f"Each side must be one value per draw; extra dims {extra}.")
    diff = (sides[0] - sides[1]).transpose(*SAMPLE_DIMS).values.reshape(-1)
    return np.asarray(diff, dtype=np.float64), key
