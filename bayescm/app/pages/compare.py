"""The Compare page: is A better than B by a margin, and who wins among several?

The logic is :mod:`bayescm.app.compare_logic`; this module lays it out.  Every edit
re-runs it (the exact path: i.i.d. draws from closed forms, a fraction of a second),
shows bad input's message under its field and keeps the state in the URL.

The mode "across folds / data sets" (:mod:`bayescm.app.folds_logic`) compares two
algorithms on per-fold confusion matrices: on one data set at once (exact draws), on
several with the hierarchical model, fitted in a background job
(:class:`~bayescm.app.pages._job.JobRunner`: progress and cancel as on the No-labels
page; a link with ``fitted=1`` fits again when opened).
"""

from __future__ import annotations

import functools
import html
from typing import Any

import panel as pn

import bayescm as bcm
from bayescm.app import compare_logic as logic
from bayescm.app import folds_logic
from bayescm.app.downloads import csv_download, figure_downloads, figure_pane, show_figure
from bayescm.app.fitjob import warm
from bayescm.app.layout import columns, section, soon
from bayescm.app.pages._fields import (
    MAX_TEXT,
    clear_errors,
    field,
    keep_in_url,
    notes,
    show_error,
)
from bayescm.app.pages._job import JobRunner, convergence_html, sampler_widgets
from bayescm.app.pages_common import InputError, frame_html
from bayescm.app.registry import Page

INTRO = (
    "Is classifier A better than B by at least a margin, and who wins among several? "
    "Type one confusion matrix per classifier (each on its own test set; K classes: "
    "<code>A: cat,dog,bird; 50,3,2; 4,40,6; 1,2,30</code>, labels then one row per "
    "actual class, a classifier a line), or paste the "
    "predictions of several classifiers on the <b>same</b> cases (paired: the errors "
    "they share are accounted for).")
FOLDS_INTRO = (
    "Two algorithms across cross-validation folds, repeated runs and data sets: paste or "
    "upload a CSV with one row per fold, columns <code>algorithm, fold</code>, optionally "
    "<code>run</code> and <code>dataset</code>, and <code>tp, fn, fp, tn</code> (K "
    "classes: a column <code>actual</code> and one column per predicted class, a row per "
    "actual class of a fold). One data set: the correlated t-test (Nadeau–Bengio "
    "correlation 1/k) on the folds' posteriors, or on their plug-in values (baycomp's "
    "test). Several data sets: the hierarchical model (Corani et al. 2017), fitted with "
    "NUTS. The ROPE is the region of practical equivalence, ± in metric units.")
DESIGNS = {"Different test sets": "independent", "Same cases (paired)": "paired"}
MODES = {"Classifiers": "classifiers", "Across folds / data sets": "folds"}
INPUTS = ("mode", "design", "counts", "cases", "positive", "metric", "label", "margin", "a",
          "b", "hdi_prob", "seed", "folds", "rope", "plug_in", "draws", "tune", "chains")
CLASSIFIER_FIELDS = ("design", "counts", "cases", "positive", "label", "margin")
FOLD_FIELDS = ("folds", "rope", "plug_in", "draws", "tune", "chains")
METRICS = sorted(set(bcm.metrics.names()) | set(bcm.metrics.multiclass_names()))


class Compare:
    """The page for one browser session."""

    def __init__(self) -> None:
        self.notes = notes(INPUTS)
        # the design's buttons show only its two values: a link's other is refused
        self.state = keep_in_url(logic.CompareState(), self.notes,
                                 choices={"design": tuple(DESIGNS.values()),
                                          "mode": tuple(MODES.values())})
        self.result: logic.CompareResult | None = None
        self.folds_result: folds_logic.FoldsResult | None = None
        self.datasets: folds_logic.DatasetsResult | None = None
        self.prepared: folds_logic.Prepared | None = None
        self._widgets()
        self.headline = pn.pane.HTML("", sizing_mode="stretch_width")
        self.comparison = pn.pane.HTML("", sizing_mode="stretch_width")
        self.board = pn.pane.HTML("", sizing_mode="stretch_width")
        self.remarks = pn.pane.HTML("", sizing_mode="stretch_width")
        self.diff_plot = figure_pane(name="difference-plot")
        self.board_plot = figure_pane(name="leaderboard-plot")
        self.shown_board: Any = None
        self.folds_headline = pn.pane.HTML("", sizing_mode="stretch_width")
        self.folds_summary = pn.pane.HTML("", sizing_mode="stretch_width")
        self.folds_table = pn.pane.HTML("", sizing_mode="stretch_width")
        self.folds_plot = figure_pane(name="fold-difference-plot")
        self.runner = JobRunner(self.make_job, self.show_datasets,
                                label="Fit across data sets (NUTS)", width=260,
                                summarising="summarising the comparison")
        self.datasets_note = pn.pane.HTML("", sizing_mode="stretch_width")
        self.datasets_convergence = pn.pane.HTML("", sizing_mode="stretch_width")
        self.datasets_overall = pn.pane.HTML("", sizing_mode="stretch_width")
        self.datasets_probs = pn.pane.HTML("", sizing_mode="stretch_width")
        self.datasets_table = pn.pane.HTML("", sizing_mode="stretch_width")
        self.simplex_plot = figure_pane(name="simplex-plot")
        self.forest_plot = figure_pane(name="forest-plot")
        self.figures: dict[str, Any] = {}
        self.file.param.watch(self.uploaded, ["value"])
        # ``fitted`` is not an input: a fit sets it, an edit clears it
        self.state.param.watch(self.update, list(INPUTS))

    def _widgets(self) -> None:
        s = self.state.param
        self.file = pn.widgets.FileInput(accept=".csv,.tsv,.txt", multiple=False,
                                         css_classes=["bcm-folds-file"])
        self.w = {
            "mode": pn.widgets.RadioButtonGroup.from_param(
                s.mode, options=MODES, css_classes=["bcm-mode"], sizing_mode="fixed",
                width=330),
            "folds": pn.widgets.TextAreaInput.from_param(
                s.folds, label="Per-fold confusion matrices (CSV): algorithm, fold, [run, "
                "dataset,] tp, fn, fp, tn", height=170, css_classes=["bcm-folds"],
                max_length=MAX_TEXT),
            "rope": pn.widgets.FloatInput.from_param(s.rope, label="ROPE (±)", step=0.005,
                                                     css_classes=["bcm-rope"]),
            "plug_in": pn.widgets.Checkbox.from_param(
                s.plug_in, label="Plug-in fold metrics (baycomp's test; one data set)",
                css_classes=["bcm-plug-in"]),
            **sampler_widgets(self.state),
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
        folds = state.mode == logic.ACROSS_FOLDS
        self.show_mode(folds)
        if folds:
            self.update_folds(state)
            return
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

    def show_mode(self, folds: bool) -> None:
        """The classifiers' fields or the folds', as the mode asks."""
        for name in CLASSIFIER_FIELDS:
            self.w[name].visible = not folds
        for name in FOLD_FIELDS:
            self.w[name].visible = folds
        self.file.visible = folds
        if hasattr(self, "outputs"):
            self.intro.object = f"<p>{FOLDS_INTRO if folds else INTRO}</p>"
            self.folds_out.visible = folds
            if folds:
                self.outputs.visible = False

    # -- across folds / data sets -------------------------------------------------------
    def uploaded(self, *_events: Any) -> None:
        """An uploaded CSV becomes the folds' text (and so travels in the link)."""
        if self.file.value is None:
            return
        try:
            text = folds_logic.read_upload(self.file.value)
        except InputError as err:
            show_error(self.notes, err)
            return
        self.state.param.update(mode="folds", folds=text.strip())

    def update_folds(self, state: logic.CompareState) -> None:
        self.runner.cancel()
        self.runner.progress.object = ""
        self.datasets = None
        self.datasets_out.visible = False
        self.state.fitted = False
        self.folds_result = self.prepared = None
        try:
            self.prepared = folds_logic.prepare(state)
            if not self.prepared.several:
                self.folds_result = folds_logic.analyse(state, self.prepared)
        except InputError as err:
            show_error(self.notes, err)
            self.runner.set_ready(False)
            self.one_out.visible = self.several_out.visible = False
            return
        clear_errors(self.notes)
        several = self.prepared.several
        self.runner.set_ready(several)
        self.one_out.visible, self.several_out.visible = not several, several
        if several:
            warm()  # the forkserver imports PyMC while the reader looks
            t = self.prepared.table
            self.datasets_note.object = (
                f'<p data-testid="datasets-found">{len(t.datasets)} data sets, '
                f"{len(t.algorithms)} algorithms, {t.runs} run(s) of cross-validation: "
                f"{html.escape(self.prepared.a)} versus {html.escape(self.prepared.b)} with "
                "the hierarchical model (NUTS, seconds to a minute).</p>")
            return
        self.show_folds(self.folds_result)

    def show_folds(self, res: folds_logic.FoldsResult) -> None:
        comp = res.comparison
        a, b = html.escape(res.a), html.escape(res.b)
        lo, hi = (float(x) for x in res.summary[["hdi_lower", "hdi_upper"]].iloc[0])
        self.folds_headline.object = (
            f"<h3>{html.escape(comp.metric)}: P({a} better) = "
            f'<span data-testid="p-a-better">{comp.p_a_better:.3f}</span>, '
            f'P(ROPE ±{comp.rope:g}) = <span data-testid="p-rope">{comp.p_rope:.3f}</span>, '
            f'P({b} better) = <span data-testid="p-b-better">{comp.p_b_better:.3f}</span></h3>'
            f"<p>Mean difference {a} - {b} "
            '<span data-testid="fold-difference-mean">'
            f"{float(comp.difference.mean()):+.4f}</span>, {res.hdi_prob:.0%} HDI "
            f'[<span data-testid="fold-difference-lower">{lo:+.4f}</span>, '
            f'<span data-testid="fold-difference-upper">{hi:+.4f}</span>]; '
            f"{comp.runs} run(s) × {comp.folds} folds, correlation 1/k = {comp.rho:.3f}, "
            f"{'plug-in' if comp.plug_in else 'posterior'} fold metrics.</p>")
        self.folds_summary.object = frame_html(res.summary.astype(object), "folds-summary")
        self.folds_table.object = frame_html(res.folds_table.astype(object), "folds", digits=4)
        soon(lambda: self.draw_folds(res))

    def draw_folds(self, res: folds_logic.FoldsResult) -> None:
        if res is not self.folds_result:  # an edit came since: its own draw follows
            return
        self.figures["difference"] = res.figure()
        show_figure(self.folds_plot, self.figures["difference"], name="fold-difference-plot")

    def make_job(self) -> Any:
        state = logic.CompareState.from_params(self.state)
        try:
            return folds_logic.datasets_job(state)
        except InputError as err:
            show_error(self.notes, err)
            return None

    def show_datasets(self, res: folds_logic.DatasetsResult) -> None:
        self.datasets = res
        comp = res.comparison
        a, b = html.escape(res.a), html.escape(res.b)
        self.datasets_convergence.object = convergence_html(
            res.convergence, res.converged, testid="datasets-convergence")
        self.datasets_overall.object = (
            f"<h3>{html.escape(comp.metric)} across {len(comp.datasets)} data sets: "
            f'P({a} better) = <span data-testid="datasets-p-a-better">{comp.p_a_better:.3f}'
            f'</span>, P(ROPE ±{comp.rope:g}) = <span data-testid="datasets-p-rope">'
            f"{comp.p_rope:.3f}</span>, P({b} better) = "
            f'<span data-testid="datasets-p-b-better">{comp.p_b_better:.3f}</span></h3>'
            "<p>Decision: the share of posterior draws in which each region is the most "
            "probable for a new data set; the predictive row gives each region's "
            "probability.</p>" + frame_html(res.overall, "datasets-overall"))
        self.datasets_probs.object = frame_html(res.probabilities, "datasets-probs", digits=3)
        self.datasets_table.object = frame_html(res.per_dataset, "datasets")
        self.datasets_out.visible = True
        self.state.fitted = True
        soon(lambda: self.draw_datasets(res))

    def draw_datasets(self, res: folds_logic.DatasetsResult) -> None:
        if res is not self.datasets:
            return
        self.figures["simplex"] = res.simplex_figure()
        self.figures["forest"] = res.forest_figure()
        show_figure(self.simplex_plot, self.figures["simplex"], name="simplex-plot")
        show_figure(self.forest_plot, self.figures["forest"], name="forest-plot")

    def folds_view(self) -> Any:
        def get(attr: str, which: str = "folds_result") -> Any:
            return lambda: (None if getattr(self, which) is None
                            else getattr(getattr(self, which), attr))

        def fig(name: str, which: str) -> Any:
            return lambda: self.figures.get(name) if getattr(self, which) else None

        self.one_out = pn.Column(
            section("A versus B across folds", self.folds_headline, self.folds_summary,
                    self.folds_plot,
                    pn.FlexBox(csv_download(get("summary"), "folds-comparison.csv",
                                            name="folds-comparison"),
                               *figure_downloads(fig("difference", "folds_result"),
                                                 "fold-difference", name="fold-difference"))),
            section("Each fold's plug-in metric", self.folds_table,
                    csv_download(get("folds_table"), "folds.csv", name="folds")),
            sizing_mode="stretch_width", visible=False)
        self.datasets_out = pn.Column(
            self.datasets_convergence, self.datasets_overall, self.datasets_probs,
            section("Per data set: observed mean difference and its shrunk posterior",
                    self.datasets_table,
                    csv_download(get("per_dataset", "datasets"), "datasets.csv",
                                 name="datasets")),
            section("Simplex and forest", columns(self.simplex_plot, self.forest_plot),
                    pn.FlexBox(*figure_downloads(fig("simplex", "datasets"), "simplex",
                                                 name="simplex"),
                               *figure_downloads(fig("forest", "datasets"), "forest",
                                                 name="forest"))),
            sizing_mode="stretch_width", visible=False)
        self.several_out = pn.Column(self.datasets_note, self.runner.view(), self.datasets_out,
                                     sizing_mode="stretch_width", visible=False)
        return pn.Column(self.one_out, self.several_out, sizing_mode="stretch_width",
                         visible=False)

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
        self.folds_out = self.folds_view()
        f = functools.partial(field, self.w, self.notes)
        inputs = section(
            "Classifiers", self.notes["url"], f("mode"), f("design"), f("counts"), f("cases"),
            f("folds"), self.file, f("positive"),
            columns(f("metric"), f("label"), f("margin"), f("rope"), min_width=160),
            f("plug_in"), columns(f("a"), f("b"), min_width=160),
            columns(f("hdi_prob"), f("seed"), min_width=160),
            columns(*(f(n) for n in ("draws", "tune", "chains")), min_width=120))
        self.intro = pn.pane.HTML(f"<p>{INTRO}</p>", sizing_mode="stretch_width")
        return pn.Column(self.intro, inputs, self.outputs, self.folds_out,
                         sizing_mode="stretch_width")


def build() -> Any:
    page = Compare()
    linked = page.state.fitted  # opened from a link to a fitted comparison: fit again
    layout = page.view()
    page.update()
    if linked and page.prepared is not None and page.prepared.several:
        pn.state.onload(page.runner.start)
    return layout


PAGE = Page(slug="compare", title="Compare", order=20, build=build,
            description="Is A better than B by a margin? A leaderboard with rank "
                        "probabilities.")
