"""What :func:`bayescm.report` says about a sliced fit: the slices, their levels, the
empty ones, and the classifier whose predictions they split.

A sliced confusion matrix (:meth:`bayescm.ConfusionMatrix.from_predictions` with
``groups=`` / ``time=``) puts one classifier's cases into slices (dim ``slice``), one
per combination of group values and time window.  Its fit carries the levels as
non-dimension coordinates on dim ``slice`` of ``observed_data`` and the classifier's
name, when given, in that group's ``attrs["classifier"]`` (or in the model record);
everything here is read from those, never from the model family.  Empty slices
(no cases) are kept by bayescm and flagged here: their posterior is what the model
says about a slice without data (the prior, or the other slices' pooled
information), not an estimate from cases.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from bayescm.report.render import Text

__all__ = ["SLICE", "slice_frame", "slice_notes", "sliced_classifier"]

SLICE = "slice"
"""The dim of the slices of a sliced matrix."""


def slice_frame(counts: Any) -> pd.DataFrame:
    """One row per slice (index: the slice labels): its levels, ``tp, fn, fp, tn``,
    ``n`` and ``empty`` (True where the slice has no case).

    Examples
    --------
    >>> import bayescm as bcm
    >>> cm = bcm.ConfusionMatrix.from_predictions([1, 0, 1], [1, 0, 0],
    ...                                           groups={"site": ["a", "a", "a"]})
    >>> slice_frame(cm.to_xarray())[["site", "n", "empty"]].to_dict("list")
    {'site': ['a'], 'n': [3], 'empty': [False]}
    """
    unit = counts.dims[0]
    labels = pd.Index([str(v) for v in counts[unit].values], name=unit)
    levels = {str(k): np.asarray(c.values) for k, c in counts.coords.items()
              if k not in counts.dims and c.dims == (unit,)}
    frame = pd.DataFrame({k: _shown(v) for k, v in levels.items()}, index=labels)
    cells = counts.transpose(unit, ...).to_pandas()
    cells.index = labels
    frame = frame.join(cells.astype(np.int64))
    frame["n"] = cells.sum(axis=1)
    frame["empty"] = frame["n"] == 0
    frame.columns.name = None
    return frame


def _shown(values: np.ndarray) -> np.ndarray:
    """Level values as a reader sees them: a window start as its date (and time)."""
    if values.dtype.kind != "M":
        return values.astype(str) if values.dtype.kind in "OUS" else values
    times = pd.DatetimeIndex(values)
    fmt = "%Y-%m-%d" if (times == times.normalize()).all() else "%Y-%m-%d %H:%M"
    return np.asarray(times.strftime(fmt))


def sliced_classifier(obs_attrs: Any, recorded: Any) -> str | None:
    """The name of the classifier a sliced fit counts: from the observed group's attrs,
    else from the model record's data; None when it was not given."""
    name = dict(obs_attrs or {}).get("classifier")
    if name is None and recorded is not None:
        name = getattr(recorded[1].data, "classifier", None)
    return None if name is None else str(name)


def _listed(names: list[str], most: int = 8) -> str:
    shown = ", ".join(names[:most])
    return shown + (f" and {len(names) - most} more" if len(names) > most else "")


def slice_notes(frame: pd.DataFrame, classifier: str | None) -> list[Text]:
    """What a reader needs before the table of slices: whose cases, split how, and
    which slices are empty."""
    levels = [c for c in frame.columns if c not in ("tp", "fn", "fp", "tn", "n", "empty")]
    whose = "" if classifier is None else f" predicted by classifier {classifier!r}"
    how = (f" by {' × '.join(levels)} (every combination of their levels is a slice, "
           "those without cases included)" if levels else "")
    notes = [Text(f"The cases{whose} are split into {len(frame)} slices{how}; each slice "
                  f"is a confusion matrix of its own ({int(frame['n'].sum())} cases in "
                  "all).")]
    empty = [str(i) for i in frame.index[frame["empty"].to_numpy()]]
    if empty:
        notes.append(Text(f"{len(empty)} slice(s) have no cases and are kept, flagged "
                          f"'empty' below: {_listed(empty)}. Their estimates come from "
                          "the priors and, in a model that pools slices, from the other "
                          "slices: no case of theirs was observed."))
    return notes
