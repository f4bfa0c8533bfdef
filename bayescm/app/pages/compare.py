"""The Compare page: is A better than B by a margin, and who wins among several?

The logic is :mod:`bayescm.app.compare_logic`; this module lays it out.  Every edit
re-runs it (the exact path: i.i.d. draws from closed forms, a fraction of a second),
shows bad input's message under its field and keeps the state in the URL.
"""

from __future__ import annotations

import functools
import html
from typing import Any

import panel as pn

import bayescm as bcm
from bayescm.app import compare_logic as logic
from bayescm.app.downloads import csv_download, figure_downloads, figure_pane, show_figure
from bayescm.app.layout import columns, section, soon
from bayescm.app.pages._fields import (
    MAX_TEXT,
    clear_errors,
    field,
    keep_in_url,
    notes,
    show_error,
)
from bayescm.app.pages_common import InputError, frame_html
from bayescm.app.registry import Page

INTRO = (
    "Is classifier A better than B by at least a margin, and who wins among several? "
    "Type one confusion matrix per classifier (each on its own test set; K classes: "
    "<code>A: cat,dog,bird; 50,3,2; 4,40,6; 1,2,30</code>, labels then one row per "
    "actual class, a classifier a line), or paste the "
    "predictions of several classifiers on the <b>same</b> cases (paired: the errors "
    "they share are accounted for).")
DESIGNS = {"Different test sets": "independent", "Same cases (paired)": "paired"}
METRICS = sorted(set(bcm.metrics.names()) | set(bcm.metrics.multiclass_names()))


class Compare:
    """The page for one browser session."""

    def __init__(self) -> None:
        self.notes = notes(("design", "counts", "cases", "positive", "metric", "label", "margin",
                            "a", "b", "hdi_prob", "seed"))
        # the design's buttons show only its two values: a link's other is refused
        self.state = keep_in_url(logic.CompareState(), self.notes,
                                 choices={"design": tuple(DESIGNS.values())})
        self.result: logic.CompareResult | None = None
        self._widgets()
        self.headline = pn.pane.HTML("", sizing_mode="stretch_width")
        self.comparison = pn.pane.HTML("", sizing_mode="stretch_width")
        self.board = pn.pane.HTML("", sizing_mode="stretch_width")
        self.remarks = pn.pane.HTML("", sizing_mode="stretch_width")
        self.diff_plot = figure_pane(name="difference-plot")
        self.board_plot = figure_pane(name="leaderboard-plot")
        self.shown_board: Any = None
        self.state.param.watch(self.update, list(self.state.param)[1:])

    def _widgets(self) -> None:
        s = self.state.param
        self.w = {
            "design": pn.widgets.RadioButtonGroup.from_param(
                s.design, options=DESIGNS, css_classes=["bcm-design"], sizing_mode="fixed",
                width=330),
            "counts": pn.widgets.TextAreaInput.from_param(
                s.counts, label="Confusion matrices: name, tp, fn, fp, tn (one classifier a "
                "line), or K classes: name: labels; row; row", height=130,
                css_classes=["bcm-counts"], max_length=MAX_TEXT),
            "cases": pn.widgets.TextAreaInput.from_param(
                s.cases, label="Predictions (CSV): y_true, then one column per "
                "classifier", height=150, css_classes=["bcm-cases"], max_length=MAX_TEXT),
            "positive": pn.widgets.TextInput.from_param(
                s.positive, label="Positive label (if not 0/1)", css_classes=["bcm-positive"]),
            "metric": pn.widgets.AutocompleteInput.from_param(
                s.metric, label="Metric", options=METRICS, restrict=False,
                case_sensitive=False, min_characters=1, css_classes=["bcm-metric"]),
            "label": pn.widgets.TextInput.from_param(
                s.label, label="Class (per-class metric, K classes)", placeholder="e.g. cat",
                css_classes=["bcm-label"]),
            "margin": pn.widgets.FloatInput.from_param(s.margin, label="Margin", step=0.01,
                                                       css_classes=["bcm-margin"]),
            "a": pn.widgets.TextInput.from_param(s.a, label="A", placeholder="first",
                                                 css_classes=["bcm-a"]),
            "b": pn.widgets.TextInput.from_param(s.b, label="B", placeholder="second",
                                                 css_classes=["bcm-b"]),
            "hdi_prob": pn.widgets.FloatInput.from_param(s.hdi_prob, label="HDI mass",
                                                         step=0.01, css_classes=["bcm-hdi"]),
            "seed": pn.widgets.IntInput.from_param(s.seed, label="Seed",
                                                   css_classes=["bcm-seed"]),
        }

    def update(self, *_events: Any) -> None:
        state = logic.CompareState.from_params(self.state)
        paired = state.design == "paired"
        self.w["counts"].visible = not paired
        self.w["cases"].visible = self.w["positive"].visible = paired
        try:
            self.result = logic.run(state)
        except InputError as err:
            show_error(self.notes, err)
            self.result = None
        else:
            clear_errors(self.notes)
        self.show()

    def show(self) -> None:
        res = self.result
        self.outputs.visible = res is not None
        if res is None:
            return
        comp = res.comparison
        lo, hi = comp.hdi
        a, b = html.escape(res.a), html.escape(res.b)
        self.headline.object = (
            f'<h3>P({a} better than {b} by {comp.margin:g} in {html.escape(comp.metric)}) = '
            f'<span data-testid="p-better">{comp.probability:.3f}</span></h3>'
            f"<p>The event {html.escape(comp.event)} with A = {a}, B = {b} ({comp.design} "
            f'design). Mean difference <span data-testid="difference-mean">'
            f"{float(comp.difference.mean()):+.4f}</span>, {comp.hdi_prob:.0%} HDI "
            f'[<span data-testid="difference-lower">{lo:+.4f}</span>, '
            f'<span data-testid="difference-upper">{hi:+.4f}</span>].</p>')
        self.comparison.object = frame_html(res.comparison_table, "comparison")
        self.board.object = frame_html(res.leaderboard_table, "board", digits=3)
        self.remarks.object = "".join(f"<p><i>{html.escape(n)}</i></p>" for n in res.notes)
        soon(lambda: self.draw(res))  # the numbers reach the browser first

    def draw(self, res: logic.CompareResult) -> None:
        if res is not self.result:  # an edit came since: its own draw follows
            return
        board = res.leaderboard_png()
        show_figure(self.diff_plot, res.difference_figure(), name="difference-plot")
        if self.shown_board is not board:  # the same leaderboard: nothing to redraw
            show_figure(self.board_plot, board, name="leaderboard-plot")
            self.shown_board = board

    def view(self) -> Any:
        def table(attr: str) -> Any:
            return lambda: None if self.result is None else getattr(self.result, attr)

        def figure(name: str) -> Any:
            return lambda: None if self.result is None else (
                self.result.difference_figure() if name == "difference"
                else self.result.leaderboard_figure())

        self.outputs = pn.Column(
            section("A versus B", self.headline, self.comparison, self.diff_plot,
                    pn.FlexBox(csv_download(table("comparison_table"), "comparison.csv",
                                        name="comparison"),
                           *figure_downloads(figure("difference"), "difference",
                                            name="difference"))),
            section("Leaderboard: the probability of every rank", self.remarks, self.board,
                    self.board_plot,
                    pn.FlexBox(csv_download(table("leaderboard_table"), "leaderboard.csv",
                                        name="leaderboard"),
                           *figure_downloads(figure("leaderboard"), "leaderboard",
                                            name="leaderboard-plot"))),
            sizing_mode="stretch_width", visible=self.result is not None)
        f = functools.partial(field, self.w, self.notes)
        inputs = section(
            "Classifiers", self.notes["url"], f("design"), f("counts"), f("cases"),
            f("positive"), columns(f("metric"), f("label"), f("margin"), min_width=160),
            columns(f("a"), f("b"), min_width=160),
            columns(f("hdi_prob"), f("seed"), min_width=160))
        return pn.Column(pn.pane.HTML(f"<p>{INTRO}</p>", sizing_mode="stretch_width"), inputs,
                         self.outputs, sizing_mode="stretch_width")


def build() -> Any:
    page = Compare()
    layout = page.view()
    page.update()
    return layout


PAGE = Page(slug="compare", title="Compare", order=20, build=build,
            description="Is A better than B by a margin? A leaderboard with rank "
                        "probabilities.")
