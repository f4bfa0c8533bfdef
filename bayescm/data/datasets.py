"""Built-in example data.

The literature collection of Tötsch & Hoffmann, "Classifier uncertainty:
evidence, potential impact, and probabilistic treatment" (PeerJ Computer Science,
2021), supplementary Table S1: 24 published confusion matrices from chemistry,
biology and medicine with test sets of 8 to 350 cases.  Classifier ``7a`` is the
cocaine-purity classifier of Rodrigues et al. (2013) discussed in their §2B.1.

Dawid & Skene's anaesthesia ratings ("Maximum likelihood estimation of observer
error-rates using the EM algorithm", 1979): :func:`anaesthesia` (a
:class:`~bayescm.RatingsTable`) and :func:`anaesthesia_table` (long data).
"""

from __future__ import annotations

from importlib import resources

import pandas as pd

from bayescm.data.confusion import ConfusionMatrix
from bayescm.data.datasets_ratings import anaesthesia, anaesthesia_table

__all__ = ["anaesthesia", "anaesthesia_table", "cocaine", "totsch_literature",
           "totsch_literature_table"]


def totsch_literature_table() -> pd.DataFrame:
    """Table S1 as a DataFrame: index ``classifier``; columns doi, location, tp, fn, tn, fp, n.

    Examples
    --------
    >>> from bayescm import datasets
    >>> datasets.totsch_literature_table().loc["7a", ["tp", "fn", "fp", "tn"]].tolist()
    [26, 0, 2, 6]
    """
    path = resources.files("bayescm.data") / "_datasets" / "totsch_literature.csv"
    with path.open() as fh:
        return pd.read_csv(fh, dtype={"classifier": str}).set_index("classifier")


def totsch_literature() -> ConfusionMatrix:
    """The 24 literature confusion matrices as one batch (dim ``classifier``)."""
    return ConfusionMatrix.from_frame(totsch_literature_table())


def cocaine() -> ConfusionMatrix:
    """The cocaine-purity classifier (Table S1, ``7a``): tp=26, fn=0, fp=2, tn=6."""
    return totsch_literature()["7a"]
