"""``bayescm summarize --csv FILE --groups COL [COL ...] [--time COL --window 7D]``.

Classifiers' predictions (a CSV with a column of true labels, one column of predicted
labels per classifier, and the grouping and time columns; the columns are read by
:mod:`bayescm.cli.input`) are counted into slices
(:meth:`bayescm.ConfusionMatrix.from_predictions` with ``groups=``, ``time=`` and
``window=``: every combination of the groups' values and every time window from the
first case to the last, empty slices kept and flagged), fitted by the chosen model
(``three_beta`` or ``dirichlet_multinomial`` per slice, exact; ``groups`` pools the
slices, NUTS) and summarised per slice; several classifiers are one more slicing level,
``classifier``, first.  The CLI module :mod:`bayescm.cli` parses the
options; this module reads the CSV and prints the result.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from bayescm.data.slices import Columns

__all__ = ["DEFAULT_METRICS", "add_arguments", "positive_label", "slice_json", "slice_text",
           "sliced_matrix", "wants_slices"]

DEFAULT_METRICS = "tpr,tnr,ppv,npv,acc,ba,f1,mcc"
"""Metrics shown per slice unless --metrics says otherwise (every metric of every slice
makes a long table)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The slicing options of ``summarize``."""
    parser.add_argument("--groups", nargs="+", metavar="COL", default=None,
                        help="slice the --csv predictions of ONE classifier by these columns "
                             "(every combination of their values is a slice; empty ones are "
                             f"kept and flagged); default metrics {DEFAULT_METRICS}")
    parser.add_argument("--time", metavar="COL", default=None,
                        help="with --window: slice the --csv predictions by time windows of "
                             "this date/time column")
    parser.add_argument("--window", metavar="FREQ", default=None,
                        help="window length, a pandas offset alias: 7D, W-MON, MS, 12h, ...")
    parser.add_argument("--positive", default=None, metavar="LABEL",
                        help="the label meaning positive in a --csv of two labels, read as "
                             "binary matrices (default 1, or True, when the labels are 0/1 or "
                             "True/False)")


def wants_slices(args: argparse.Namespace) -> bool:
    return any(getattr(args, k) is not None for k in ("groups", "time", "window"))


def positive_label(labels: set[str], given: str | None) -> str:
    """``--positive``, else ``1`` or ``True`` when the labels are 0/1 or True/False."""
    if given is not None:
        return given
    for pos, pair in (("1", {"0", "1"}), ("True", {"False", "True"}),
                      ("true", {"false", "true"})):
        if labels <= pair:
            return pos
    raise ValueError(f"Cannot tell which of the labels {sorted(labels)[:10]} is positive; "
                     "pass --positive LABEL.")


def sliced_matrix(frame: pd.DataFrame, path: Path, roles: Columns, *, time: str | None,
                  window: str | None, positive: str) -> Any:
    """The sliced ConfusionMatrix of the predictions in a CSV (labels and group values read
    as text).  One classifier: named by its column; several: ``classifier`` is the first
    slicing level (each classifier's slices, as the app's Upload page shows them)."""
    import bayescm as bcm

    cols, groups = list(roles.classifiers), list(roles.groups)
    if "classifier" in groups and len(cols) > 1:
        raise ValueError("A group column called 'classifier' clashes with the level that "
                         "tells several classifiers' slices apart; rename it, or choose one "
                         "classifier with --classifiers COL.")
    times = None
    if time is not None:
        try:
            # "mixed": each value parsed on its own (dates with or without times),
            # without pandas' warning about a format it could not infer
            times = pd.to_datetime(frame[time], format="mixed")
        except (ValueError, TypeError) as err:
            raise ValueError(f"Column {time!r} of {path} holds something that is not a date "
                             f"or time ({err}); --time needs dates such as 2024-01-31.") from None
    n = len(cols)
    factors = {"classifier": np.repeat(cols, len(frame))} if n > 1 else {}
    factors.update({g: np.tile(frame[g].to_numpy(), n) for g in groups})
    return bcm.ConfusionMatrix.from_predictions(
        np.tile(frame[roles.truth].to_numpy(), n),
        np.concatenate([frame[c].to_numpy() for c in cols]), positive=positive,
        classifier=cols[0] if n == 1 else None, groups=factors or None,
        time=None if times is None else np.tile(times.to_numpy(), n), window=window)


def _slice_table(cm: Any) -> pd.DataFrame:
    from bayescm.report.slices import slice_frame

    return slice_frame(cm.to_xarray())


def _header(cm: Any, frame: pd.DataFrame) -> str:
    levels = [c for c in cm.slices.columns]
    empty = [str(s) for s in frame.index[frame["empty"].to_numpy()]]
    listed = ", ".join(empty[:8]) + (f" and {len(empty) - 8} more" if len(empty) > 8 else "")
    names = cm.slices["classifier"] if "classifier" in cm.slices else pd.Series(["?"])
    who = (f"classifier {cm.classifier!r}" if cm.classifier is not None else "classifiers "
           + ", ".join(map(repr, pd.unique(names.astype(str)))))
    return (f"Predictions of {who}: {int(cm.n.sum())} cases in "
            f"{len(cm)} slices by {' × '.join(levels)}"
            + (f"; {len(empty)} empty (no cases; kept, their posterior is the model's "
               f"without data): {listed}" if empty else "; none empty"))


def slice_text(cm: Any, table: pd.DataFrame, labels: list[str]) -> str:
    """The per-slice report: the slices and their counts, then the summary by slice."""
    frame = _slice_table(cm)
    shown = frame.drop(columns=list(cm.slices.columns)).assign(
        empty=frame["empty"].map({True: "empty", False: ""}))
    view = table.copy()
    view.insert(0, "label", labels)
    with pd.option_context("display.width", 140, "display.max_rows", 5000):
        return "\n".join([_header(cm, frame), "", shown.to_string(), "",
                          view.to_string(float_format=lambda v: f"{v:.4f}")])


def slice_json(cm: Any) -> dict[str, Any]:
    """The slices as JSON: the classifier, each slice's levels, counts, n and empty."""
    frame = _slice_table(cm)
    rows = []
    for label, row in frame.iterrows():
        item = {"slice": str(label)}
        item.update({k: (v.item() if isinstance(v, np.generic) else v)
                     for k, v in row.items()})
        rows.append(item)
    return {"classifier": cm.classifier, "slices": rows}
