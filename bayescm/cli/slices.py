"""``bayescm summarize --csv FILE --groups COL [COL ...] [--time COL --window 7D]``.

One classifier's predictions (a CSV with a column of true labels, one of predicted
labels, and the grouping and time columns) are counted into slices
(:meth:`bayescm.ConfusionMatrix.from_predictions` with ``groups=``, ``time=`` and
``window=``: every combination of the groups' values and every time window from the
first case to the last, empty slices kept and flagged), fitted by the chosen model
(``three_beta`` or ``dirichlet_multinomial`` per slice, exact; ``groups`` pools the
slices, NUTS) and summarised per slice.  The CLI module :mod:`bayescm.cli` parses the
options; this module reads the CSV and prints the result.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["DEFAULT_METRICS", "add_arguments", "read_sliced_csv", "slice_json", "slice_text",
           "wants_slices"]

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
                        help="the label meaning positive in a sliced --csv (default 1, or "
                             "True, when the labels are 0/1 or True/False)")


def wants_slices(args: argparse.Namespace) -> bool:
    return any(getattr(args, k) is not None for k in ("groups", "time", "window"))


def _positive(labels: set[str], given: str | None) -> str:
    if given is not None:
        return given
    for pos, pair in (("1", {"0", "1"}), ("True", {"False", "True"}),
                      ("true", {"false", "true"})):
        if labels <= pair:
            return pos
    raise ValueError(f"Cannot tell which of the labels {sorted(labels)[:10]} is positive; "
                     "pass --positive LABEL.")


def read_sliced_csv(path: Path, *, truth: str, classifiers: str | None,
                    groups: list[str] | None, time: str | None, window: str | None,
                    positive: str | None) -> Any:
    """The sliced ConfusionMatrix of one classifier's predictions in a CSV (labels and
    group values read as text; the classifier is named by its column)."""
    import bayescm as bcm

    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    used = [truth, *(groups or []), *([time] if time else [])]
    cols = classifiers.split(",") if classifiers else [c for c in frame.columns
                                                       if c not in used]
    missing = [c for c in [*used, *cols] if c not in frame.columns]
    if missing:
        raise ValueError(f"Columns {missing} are not in {path} ({list(frame.columns)}); the "
                         "true labels are --truth-column (default y_true).")
    if len(cols) != 1:
        raise ValueError(f"Slicing evaluates one classifier at a time, but {path} has "
                         f"{len(cols)} columns of predictions {cols}; choose one with "
                         "--classifiers COL.")
    pred = cols[0]
    for col in [truth, pred, *(groups or []), *([time] if time else [])]:
        blank = np.flatnonzero(frame[col].str.strip() == "")
        if blank.size:
            what = ("fill it with an explicit level (e.g. 'missing') or drop those rows"
                    if col in (groups or []) else "every case needs it")
            raise ValueError(f"Column {col!r} of {path} is blank in row {blank[0] + 2} (and "
                             f"{blank.size - 1} more); {what}.")
    times = None
    if time is not None:
        try:
            # "mixed": each value parsed on its own (dates with or without times),
            # without pandas' warning about a format it could not infer
            times = pd.to_datetime(frame[time], format="mixed")
        except (ValueError, TypeError) as err:
            raise ValueError(f"Column {time!r} of {path} holds something that is not a date "
                             f"or time ({err}); --time needs dates such as 2024-01-31.") from None
    labels = set(frame[truth]) | set(frame[pred])
    return bcm.ConfusionMatrix.from_predictions(
        frame[truth].to_numpy(), frame[pred].to_numpy(), positive=_positive(labels, positive),
        classifier=pred, groups={g: frame[g] for g in groups} if groups else None,
        time=times, window=window)


def _slice_table(cm: Any) -> pd.DataFrame:
    from bayescm.report.slices import slice_frame

    return slice_frame(cm.to_xarray())


def _header(cm: Any, frame: pd.DataFrame) -> str:
    levels = [c for c in cm.slices.columns]
    empty = [str(s) for s in frame.index[frame["empty"].to_numpy()]]
    listed = ", ".join(empty[:8]) + (f" and {len(empty) - 8} more" if len(empty) > 8 else "")
    return (f"Predictions of classifier {cm.classifier!r}: {int(cm.n.sum())} cases in "
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
