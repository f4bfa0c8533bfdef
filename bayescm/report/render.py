"""Rendering of :func:`bayescm.report`: sections of blocks to HTML and Markdown, and figures.

A section is a list of blocks, each one of

* ``Text(text)``: a paragraph;
* ``Missing(text)``: an item the fit cannot fill, rendered as such ("not recorded in
  the fit: the authors must report ...") -- never replaced by an invented value;
* ``Table(frame, caption)``: a DataFrame whose cells are already strings;
* ``Figure(png, caption)``: a PNG image (embedded as base64: the HTML needs no file and
  no network);
* ``Items(items)``: a bullet list.

The HTML is one self-contained document: inline CSS, no script, no external URL, and
a width that follows the screen (tables scroll sideways on a phone).  Numbers are
formatted once, by :func:`number` (four significant digits), so what a report shows
can be compared with ``bcm.summary`` at that precision.
"""

from __future__ import annotations

import base64
import html
import io
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from bayescm.stats import SAMPLE_DIMS

if TYPE_CHECKING:
    import xarray as xr

__all__ = ["Figure", "Items", "Missing", "Section", "Table", "Text", "figure_png",
           "forest_png", "format_frame", "number", "predictive_png", "render_html",
           "render_markdown"]

MISSING_PREFIX = "Not recorded in the fit: the authors must report "


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class Missing:
    """What the authors must report (completes :data:`MISSING_PREFIX`)."""

    what: str

    @property
    def text(self) -> str:
        return MISSING_PREFIX + self.what


@dataclass(frozen=True)
class Table:
    frame: pd.DataFrame
    caption: str = ""


@dataclass(frozen=True)
class Figure:
    png: bytes
    caption: str


@dataclass(frozen=True)
class Items:
    items: tuple[str, ...]


Block = Text | Missing | Table | Figure | Items


@dataclass
class Section:
    """One numbered part of a report; ``status`` is ``"filled"`` or ``"missing"``."""

    id: str
    title: str
    status: str
    blocks: list[Block] = field(default_factory=list)


def number(x: Any) -> str:
    """Four significant digits; integers as integers; NaN and None as an en dash."""
    if isinstance(x, str):
        return x
    if x is None or x is pd.NA or x is pd.NaT:
        return "–"
    if isinstance(x, bool | np.bool_):
        return str(bool(x))
    if isinstance(x, int | np.integer):
        return str(int(x))
    try:
        x = float(x)
    except (TypeError, ValueError):  # a label or a tuple in a user's frame: as it is
        return str(x)
    if not math.isfinite(x):
        return "–" if math.isnan(x) else ("∞" if x > 0 else "−∞")
    return f"{x:.4g}"


def format_frame(frame: pd.DataFrame, *, index: bool = True) -> pd.DataFrame:
    """Every cell as a string (:func:`number`), the index turned into leading columns."""
    out = frame.reset_index() if index else frame.copy()
    out.columns = [" ".join(map(str, c)) if isinstance(c, tuple) else str(c)
                   for c in out.columns]
    return out.apply(lambda col: col.map(number)).astype(str)


def figure_png(draw: Callable[[Any], None], *, size: tuple[float, float]) -> bytes:
    """A PNG of a matplotlib figure drawn by ``draw(fig)`` (Agg; no pyplot state).

    Text is drawn as written: names are the user's (a classifier called ``"$5 or $"``),
    never TeX, so mathtext is off for the figure (``text.parse_math``)."""
    import matplotlib
    from matplotlib.figure import Figure as MplFigure

    with matplotlib.rc_context({"text.parse_math": False}):
        fig = MplFigure(figsize=size, dpi=100, layout="constrained")
        draw(fig)
        buf = io.BytesIO()
        fig.savefig(buf, format="png")
    return buf.getvalue()


def forest_png(frame: pd.DataFrame, title: str) -> bytes:
    """Means (dots) and HDIs (lines) of the rows of ``frame`` (``mean``, ``hdi_lower``,
    ``hdi_upper``)."""
    labels = [" ".join(map(str, i)) if isinstance(i, tuple) else str(i) for i in frame.index]

    def draw(fig: Any) -> None:
        ax = fig.add_subplot()
        y = np.arange(len(frame))[::-1]
        ax.hlines(y, frame["hdi_lower"], frame["hdi_upper"], color="#0969da", lw=2)
        ax.plot(frame["mean"], y, "o", color="#1f2328", ms=4)
        ax.set_yticks(y, labels, fontsize=8)
        ax.set_title(title, fontsize=10)
        ax.grid(axis="x", alpha=0.3)

    return figure_png(draw, size=(7, 1 + 0.28 * len(frame)))


def predictive_png(obs: xr.DataArray, rep: xr.DataArray) -> bytes:
    """Observed counts (dots) against the central 95% of replicated ones (bars), for the
    first four tables of ``obs`` (dims: unit, then cells; ``rep`` adds the sample dims)."""
    unit = obs.dims[0]
    units = [str(v) for v in obs[unit].values][:4]

    def draw(fig: Any) -> None:
        axes = fig.subplots(len(units), 1, squeeze=False)[:, 0]
        for ax, u in zip(axes, units, strict=True):
            y = np.asarray(obs.sel({unit: u}), dtype=float).ravel()
            r = rep.sel({unit: u}).transpose(*SAMPLE_DIMS, ...)
            r = np.asarray(r, dtype=float).reshape(-1, y.size)
            lo, hi = np.quantile(r, [0.025, 0.975], axis=0)
            x = np.arange(y.size)
            ax.vlines(x, lo, hi, color="#0969da", lw=6, alpha=0.5, label="replicated 95%")
            ax.plot(x, y, "o", color="#cf222e", ms=4, label="observed")
            labels = [" ".join(map(str, c)) if isinstance(c, tuple) else str(c) for c in
                      obs.sel({unit: u}).to_series().index]
            ax.set_xticks(x, labels, fontsize=7, rotation=90 if len(x) > 12 else 0)
            ax.set_title(f"{unit} {u}", fontsize=9)
        axes[0].legend(fontsize=7)

    return figure_png(draw, size=(7, 2.2 * len(units)))


def _data_uri(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


# -- HTML -------------------------------------------------------------------------------
CSS = """
.bcm-report { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  line-height: 1.5; color: #1f2328; max-width: 60rem; margin: 0 auto; padding: 1rem; }
.bcm-report h1 { font-size: 1.6rem; margin-top: 0; }
.bcm-report h2 { font-size: 1.25rem; border-bottom: 1px solid #d0d7de;
  padding-bottom: .25rem; margin-top: 2rem; }
.bcm-report .status { font-size: .75rem; font-weight: 600; padding: .1rem .45rem;
  border-radius: 1rem; vertical-align: middle; margin-left: .4rem; }
.bcm-report .filled { background: #dafbe1; color: #1a7f37; }
.bcm-report .missing { background: #fff1e5; color: #bc4c00; }
.bcm-report p.missing-item { background: #fff8c5; border-left: 4px solid #d4a72c;
  padding: .4rem .6rem; }
.bcm-report .scroll { overflow-x: auto; margin: .5rem 0 1rem; }
.bcm-report table { border-collapse: collapse; font-size: .85rem; }
.bcm-report th, .bcm-report td { border: 1px solid #d0d7de; padding: .2rem .5rem;
  text-align: right; white-space: nowrap; }
.bcm-report td.text, .bcm-report th.text { text-align: left; white-space: normal; }
.bcm-report th { background: #f6f8fa; }
.bcm-report caption { caption-side: top; text-align: left; font-weight: 600;
  padding-bottom: .25rem; }
.bcm-report img { max-width: 100%; height: auto; }
.bcm-report figcaption { font-size: .85rem; color: #59636e; }
.bcm-report nav ol { padding-left: 1.4rem; }
"""


def _html_table(t: Table) -> str:
    frame = t.frame
    # text columns (names, statements) wrap and align left; numbers align right
    text = [not all(_numeric(v) for v in frame[c]) for c in frame.columns]
    head = "".join(f"<th class='{'text' if x else 'num'}'>{html.escape(str(c))}</th>"
                   for c, x in zip(frame.columns, text, strict=True))
    rows = "".join(
        "<tr>" + "".join(f"<td class='{'text' if x else 'num'}'>{html.escape(str(v))}</td>"
                         for v, x in zip(row, text, strict=True)) + "</tr>"
        for row in frame.itertuples(index=False))
    caption = f"<caption>{html.escape(t.caption)}</caption>" if t.caption else ""
    return (f"<div class='scroll'><table>{caption}<thead><tr>{head}</tr></thead>"
            f"<tbody>{rows}</tbody></table></div>")


def _numeric(v: str) -> bool:
    """Numbers, intervals and dashes (no letters): kept on one line, aligned right."""
    plain = re.sub(r"(?<=\d)e(?=[-+]?\d)", "", str(v))  # 1e-05 is a number
    return re.search(r"[^\W\d]", plain) is None


def _html_block(b: Block) -> str:
    if isinstance(b, Missing):
        return f"<p class='missing-item'>{html.escape(b.text)}</p>"
    if isinstance(b, Text):
        return f"<p>{html.escape(b.text)}</p>"
    if isinstance(b, Table):
        return _html_table(b)
    if isinstance(b, Figure):
        return (f"<figure><img src='{_data_uri(b.png)}' alt='{html.escape(b.caption)}'>"
                f"<figcaption>{html.escape(b.caption)}</figcaption></figure>")
    return "<ul>" + "".join(f"<li>{html.escape(i)}</li>" for i in b.items) + "</ul>"


def _badge(status: str) -> str:
    return f"<span class='status {status}'>{status}</span>"


def render_html(title: str, intro: Sequence[Block], sections: Sequence[Section], *,
                document: bool = True) -> str:
    """The report as HTML: a whole document, or (``document=False``) one ``<div>``."""
    toc = "".join(f"<li><a href='#{s.id}'>{html.escape(s.title)}</a>{_badge(s.status)}</li>"
                  for s in sections)
    body = [f"<h1>{html.escape(title)}</h1>", *map(_html_block, intro),
            f"<nav><ol>{toc}</ol></nav>"]
    for i, s in enumerate(sections, 1):
        body.append(f"<section><h2 id='{s.id}'>{i}. {html.escape(s.title)}"
                    f"{_badge(s.status)}</h2>")
        body += [_html_block(b) for b in s.blocks]
        body.append("</section>")
    div = f"<div class='bcm-report'><style>{CSS}</style>{''.join(body)}</div>"
    if not document:
        return div
    return ("<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
            "<meta name='viewport' content='width=device-width, initial-scale=1'>"
            f"<title>{html.escape(title)}</title></head><body>{div}</body></html>\n")


# -- Markdown -----------------------------------------------------------------------------
def _md(text: Any) -> str:
    """Text as Markdown shows it, never as HTML: Markdown passes raw HTML through, so a
    name such as ``<script>`` is written with entities (``&lt;script>``)."""
    return str(text).replace("&", "&amp;").replace("<", "&lt;")


def _md_cell(v: Any) -> str:
    return _md(v).replace("|", "\\|").replace("\n", " ")


def _md_block(b: Block) -> str:
    if isinstance(b, Missing):
        return f"> **{_md(b.text)}**"
    if isinstance(b, Text):
        return _md(b.text)
    if isinstance(b, Table):
        f = b.frame
        lines = [f"**{_md(b.caption)}**", ""] if b.caption else []
        lines.append("| " + " | ".join(_md_cell(c) for c in f.columns) + " |")
        lines.append("|" + "|".join("---" for _ in f.columns) + "|")
        lines += ["| " + " | ".join(_md_cell(v) for v in row) + " |"
                  for row in f.itertuples(index=False)]
        return "\n".join(lines)
    if isinstance(b, Figure):
        caption = _md(b.caption)
        return f"![{caption.replace(']', '')}]({_data_uri(b.png)})\n\n*{caption}*"
    return "\n".join(f"- {_md(i)}" for i in b.items)


def render_markdown(title: str, intro: Sequence[Block], sections: Sequence[Section]) -> str:
    """The report as Markdown (figures inline as data URIs; anchors as ``<a id>``); the
    text is escaped so that no HTML in a name or note reaches the reader (:func:`_md`)."""
    out = [f"# {_md(title)}", *map(_md_block, intro)]
    out.append("\n".join(f"{i}. [{_md(s.title)}](#{s.id}) ({s.status})"
                         for i, s in enumerate(sections, 1)))
    for i, s in enumerate(sections, 1):
        out.append(f'<a id="{s.id}"></a>\n\n## {i}. {_md(s.title)} ({s.status})')
        out += [_md_block(b) for b in s.blocks]
    return "\n\n".join(out) + "\n"
