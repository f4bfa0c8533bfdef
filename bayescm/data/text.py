"""Matrices written as text, read one way by the command line and the web app.

``'cat,dog,bird; 50,3,2; 4,40,6; 1,2,30'``: the class labels, then one row of counts
per actual class.  The ``--matrix`` option of ``bayescm summarize`` and the matrix
fields of the app's pages all read it with :func:`parse_matrix`, so the same text
gets the same matrix, or the same message, wherever it is typed.
"""

from __future__ import annotations

__all__ = ["parse_matrix"]


def parse_matrix(text: str, *, what: str = "--matrix") -> tuple[list[str], list[list[float]]]:
    """Read ``'cat,dog,bird; 50,3,2; 4,40,6; 1,2,30'``: labels, then rows of counts.

    Row ``i`` holds the counts of actual class ``labels[i]``, column ``j`` those
    predicted as ``labels[j]``.  Numbers are read as floats so that bayescm's own
    checks name a fractional or negative cell; a matrix that is not square or a
    count that is not a number is reported here; messages name the input ``what``.

    Examples
    --------
    >>> parse_matrix("cat,dog; 5,1; 2,7")
    (['cat', 'dog'], [[5.0, 1.0], [2.0, 7.0]])
    """
    parts = [p.strip() for p in text.strip().strip(";").split(";")]
    labels = [x.strip() for x in parts[0].split(",")]
    if len(parts) < 2 or not all(labels):
        raise ValueError(
            f"Cannot read {what} {text!r}: write the class labels, then one row of counts per "
            "actual class, separated by ';', e.g. 'cat,dog,bird; 50,3,2; 4,40,6; 1,2,30'.")
    rows = []
    for i, part in enumerate(parts[1:]):
        cells = [x.strip() for x in part.split(",")]
        try:
            rows.append([float(x) for x in cells])
        except ValueError:
            raise ValueError(f"Row {i + 1} of {what} ({part!r}, actual class "
                             f"{labels[i] if i < len(labels) else '?'}) holds something that "
                             "is not a count.") from None
        if len(cells) != len(labels):
            raise ValueError(
                f"The matrix is not square: row {i + 1} ({part!r}) has {len(cells)} counts "
                f"but there are {len(labels)} labels {labels}; give one count per predicted "
                "class.")
    if len(rows) != len(labels):
        raise ValueError(f"The matrix is not square: {len(rows)} rows of counts for "
                         f"{len(labels)} labels {labels}; give one row per actual class.")
    return labels, rows
