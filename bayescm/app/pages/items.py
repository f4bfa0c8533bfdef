"""The Benchmark-items page: many models scored item by item on the same benchmark.

The logic is :mod:`bayescm.app.items_logic`.  Every edit re-reads the results and
rebuilds the model at once (no sampling; bad input gets the library's message under
its field); *Fit* runs the fit in a background job
(:class:`~bayescm.app.pages._job.JobRunner`: progress and cancel) and shows, per model,
bayescm's interval next to the CLT and clustered-SE ones, the tied sets and the rank
probabilities.  A link to a fitted page (``fitted=1``) fits again when opened.
"""

from __future__ import annotations

import functools
import html
from typing import Any

import panel as pn

import bayescm as bcm
from bayescm.app import items_logic as logic
from bayescm.app.downloads import (
    csv_download,
    figure_downloads,
    figure_pane,
    netcdf_download,
    show_figure,
)
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
    "How good is each model on a benchmark, and which ones are really tied? Paste or "
    "upload a CSV with one row per model and item: <code>item, model, correct</code> "
    "(0/1), optionally <code>cluster</code> (questions on one passage, topic or task) and "
    "<code>run</code> (items answered several times). Every model must have every item. "
    "The item-level model shares item difficulty across models (comparisons are paired), "
    "puts clusters above items and runs within them; its accuracy is the expected score "
    "on a new item, shown next to the usual mean ± 1.96 SE (CLT) and the clustered-SE "
    "interval.")
INPUTS = ("results", "hdi_prob", "level", "draws", "tune", "chains", "seed")


class Items:
    """The page for one browser session."""

    def __init__(self) -> None:
        self.notes = notes(INPUTS)
        self.state = keep_in_url(logic.ItemsState(), self.notes)
        self.built: logic.Built | None = None
        self.result: logic.ItemsResult | None = None
        self.figure: Any = None
        s = self.state.param
        self.file = pn.widgets.FileInput(accept=".csv,.tsv,.txt", multiple=False,
                                         css_classes=["bcm-items-file"])
        self.w = {
            "results": pn.widgets.TextAreaInput.from_param(
                s.results, label="Results (CSV): item, model, correct[, cluster, run]",
                height=170, css_classes=["bcm-results"], max_length=MAX_TEXT),
            "hdi_prob": pn.widgets.FloatInput.from_param(s.hdi_prob, label="Interval mass",
                                                         step=0.01, css_classes=["bcm-hdi"]),
            "level": pn.widgets.FloatInput.from_param(
                s.level, label="Tie level (P leader better)", step=0.01,
                css_classes=["bcm-level"]),
            **sampler_widgets(self.state),
            "seed": pn.widgets.IntInput.from_param(s.seed, label="Seed",
                                                   css_classes=["bcm-seed"]),
        }
        self.found = pn.pane.HTML("", sizing_mode="stretch_width")
        self.runner = JobRunner(self.make_job, self.show_result,
                                summarising="the intervals, tied sets and ranks")
        self.convergence = pn.pane.HTML("", sizing_mode="stretch_width")
        self.table = pn.pane.HTML("", sizing_mode="stretch_width")
        self.ranks = pn.pane.HTML("", sizing_mode="stretch_width")
        self.plot = figure_pane(name="intervals-plot")
        self.file.param.watch(self.uploaded, ["value"])
        self.state.param.watch(self.edited, list(INPUTS))

    def uploaded(self, *_events: Any) -> None:
        """An uploaded CSV becomes the results' text (and travels in the link if it fits)."""
        data = self.file.value
        if data is None:
            return
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as err:
            show_error(self.notes, InputError(
                "results", f"The file is not UTF-8 text ({err.reason} at byte {err.start}): "
                           "save it as CSV UTF-8 and upload it again."))
            return
        self.state.results = text.strip()

    # -- before sampling ----------------------------------------------------------------
    def edited(self, *_events: Any) -> None:
        """Re-read and rebuild; a previous fit no longer matches the inputs."""
        self.runner.cancel()
        self.runner.progress.object = ""
        self.result = None
        self.outputs.visible = False
        self.state.fitted = False
        state = logic.ItemsState.from_params(self.state)
        try:
            self.built = logic.build(state)
        except InputError as err:
            self.built = None
            show_error(self.notes, err)
            self.found.object = ""
            self.runner.set_ready(False)
            return
        clear_errors(self.notes)
        self.found.object = (f'<p data-testid="items-found">'
                             f"{html.escape(self.built.describe())}</p>")
        self.runner.set_ready(True)

    def make_job(self) -> Any:
        if self.built is None:
            return None
        return logic.fit_job(logic.ItemsState.from_params(self.state))

    def show_result(self, result: logic.ItemsResult) -> None:
        self.result = result
        self.convergence.object = convergence_html(result.convergence, result.converged)
        self.table.object = frame_html(result.table.astype(object), "items")
        self.ranks.object = frame_html(result.ranks, "ranks", digits=3)
        self.ranks_section.visible = not result.ranks.empty
        self.outputs.visible = True
        self.state.fitted = True
        soon(self.draw)

    def draw(self) -> None:
        self.figure = None if self.result is None else self.result.figure()
        show_figure(self.plot, self.figure, name="intervals-plot")

    def view(self) -> Any:
        def get(attr: str) -> Any:
            return lambda: None if self.result is None else getattr(self.result, attr)

        def fit_file() -> Any:
            return None if self.result is None else bcm.load(self.result.path)

        self.ranks_section = section(
            "Rank probabilities", self.ranks,
            csv_download(get("ranks"), "ranks.csv", name="ranks"))
        self.outputs = pn.Column(
            section("Convergence", self.convergence),
            section("Accuracy per model: bayescm, CLT and clustered-SE intervals",
                    pn.pane.HTML(
                        "<p>bayes_*: posterior mean and HDI of the expected score on a new "
                        "item; clt_*: mean ± z·SE; clustered_*: mean ± z·clustered SE; "
                        "tier: models in one tier are statistically tied (the tier's "
                        "leader is better with probability below the tie level).</p>",
                        sizing_mode="stretch_width"),
                    self.table, self.plot,
                    pn.FlexBox(csv_download(get("table"), "items.csv", name="items"),
                               *figure_downloads(lambda: self.figure if self.result else None,
                                                 "intervals", name="intervals-plot"),
                               netcdf_download(fit_file, "fit.nc", name="items-fit"))),
            self.ranks_section, sizing_mode="stretch_width", visible=False)
        f = functools.partial(field, self.w, self.notes)
        inputs = section(
            "Results", self.notes["url"], f("results"), self.file,
            columns(f("hdi_prob"), f("level"), f("seed"), min_width=160),
            columns(*(f(n) for n in ("draws", "tune", "chains")), min_width=120))
        return pn.Column(pn.pane.HTML(f"<p>{INTRO}</p>", sizing_mode="stretch_width"), inputs,
                         self.found, self.runner.view(), self.outputs,
                         sizing_mode="stretch_width")


def build() -> Any:
    warm()  # the forkserver imports PyMC while the reader looks at the page
    page = Items()
    linked = page.state.fitted  # opened from a link to a fitted page: fit again
    layout = page.view()
    page.edited()
    if linked and page.built is not None:
        pn.state.onload(page.runner.start)
    return layout


PAGE = Page(slug="items", title="Benchmark items", order=35, build=build,
            description="Accuracy per model from item-level benchmark results: clusters, "
                        "runs, tied sets.")
