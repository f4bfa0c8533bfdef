"""Example ratings data shipped with bayescm.

Dawid & Skene's anaesthesia data: the ratings with which "Maximum likelihood
estimation of observer error-rates using the EM algorithm" (Applied Statistics 28(1),
1979, 20-28, Table 1) introduced the latent-class model of many raters.  Five
anaesthetists rated the fitness for an operation of 45 patients on a four-point scale
(1 = fittest), from the same standard form; anaesthetist 1 rated every patient three
times, weeks apart, the others once: 315 ratings, no gold labels.

Source: R package ``rater`` (Pullin, Gurrin & Vukcevic, "Statistical models for
repeated categorical ratings: the R package rater", 2023; version 1.3.2.9000,
``data/anesthesia.rda`` at github.com/jeffreypullin/rater, commit f90dcc5), whose
long format (item, rater, rating) is kept.  A widely copied Python transcription
(``generate_sample_data`` of dallascard/dawid_skene) differs in one rating:
it has anaesthetist 1's three ratings of patient 7 as 1, 2, 2 where ``rater`` (and
this file) have 1, 1, 2.
"""

from __future__ import annotations

from importlib import resources

import pandas as pd

from bayescm.data.ratings import RatingsTable

__all__ = ["anaesthesia", "anaesthesia_table"]


def anaesthesia_table() -> pd.DataFrame:
    """The 315 ratings as long data: columns ``item`` (patient 1-45), ``rater``
    (anaesthetist 1-5) and ``rating`` (1-4).

    Examples
    --------
    >>> from bayescm.data.datasets_ratings import anaesthesia_table
    >>> df = anaesthesia_table()
    >>> df.shape, df.groupby("rater").size().tolist()
    ((315, 3), [135, 45, 45, 45, 45])
    """
    path = resources.files("bayescm.data") / "_datasets" / "dawid_skene_anaesthesia.csv"
    with path.open() as fh:
        return pd.read_csv(fh, comment="#")


def anaesthesia() -> RatingsTable:
    """Dawid & Skene's anaesthesia data as a :class:`~bayescm.RatingsTable` (K = 4
    classes ``1, 2, 3, 4``; raters ``"1"`` to ``"5"``).

    Examples
    --------
    >>> from bayescm.data.datasets_ratings import anaesthesia
    >>> rt = anaesthesia()
    >>> rt.n_items, rt.raters, rt.labels, len(rt.patterns())
    (45, ('1', '2', '3', '4', '5'), (1, 2, 3, 4), 27)
    """
    return RatingsTable.from_long(anaesthesia_table(), labels=[1, 2, 3, 4])
