"""Label switching in Dawid–Skene draws: which draws fit the raters' labels better
relabelled, and the plain-words note (and warning) ``bcm.fit`` gives about them."""

from __future__ import annotations

import numpy as np
import xarray as xr

from bayescm.models.dawid_skene.likelihood import relabelling
from bayescm.models.hui_walter import IdentifiabilityWarning
from bayescm.stats import SAMPLE_DIMS

__all__ = ["RELABELLED_SHARE", "LabelSwitchingWarning", "label_switching"]

#: Relabelled draws below this share (and no chain mostly relabelled) are noted in the
#: posterior's attrs without a warning: they move no summary beyond Monte Carlo error.
RELABELLED_SHARE = 0.01


class LabelSwitchingWarning(IdentifiabilityWarning):
    """Draws in which the classes fit the raters' labels better after a relabelling."""


def label_switching(ds: xr.Dataset) -> tuple[str, bool] | None:
    """A plain-words note when some draws fit the raters' labels better relabelled
    (:func:`~bayescm.models.dawid_skene.likelihood.relabelling`), and whether it is
    worth a warning (a chain mostly relabelled, or at least :data:`RELABELLED_SHARE`
    of the draws); None when no draw is."""
    conf = ds["confusion"].transpose(*SAMPLE_DIMS, "rater", "actual", "predicted").values
    sigma = relabelling(conf)  # (chain, draw, K)
    moved = np.any(sigma != np.arange(sigma.shape[-1]), axis=-1)  # (chain, draw)
    if not moved.any():
        return None
    share = moved.mean(axis=1)
    labels = ds["actual"].values.tolist()
    worst = int(np.argmax(share))
    _, idx = np.unique(sigma[worst][moved[worst]], axis=0, return_inverse=True)
    common = sigma[worst][moved[worst]][np.bincount(idx.ravel()).argmax()]
    swap = ", ".join(f"{labels[c]!r} <- {labels[s]!r}" for c, s in enumerate(common) if c != s)
    if share.max() > 0.5:
        return (f"Label switching: in chain(s) {np.flatnonzero(share > 0.5).tolist()} most "
                f"draws fit the raters' labels better with the classes relabelled ({swap}): "
                "those chains sit in a mirror-image mode. Refit with another seed, give the "
                "confusion rows stronger diagonal priors, or add gold items."), True
    return (f"{100 * moved.mean():.2g}% of the draws fit the raters' labels better with the "
            f"classes relabelled (most often {swap}): the data barely tell those classes "
            "apart. Their metrics mix the two labellings; stronger diagonal priors or gold "
            "items would separate them."), bool(moved.mean() >= RELABELLED_SHARE)
