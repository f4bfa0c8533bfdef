"""The Upload page: a CSV of predictions becomes the right analysis.

The logic is :mod:`bayescm.app.upload_logic`.  The page says what the columns were read
as, shows the analysis' tables (each downloadable) and, where another page carries the
analysis on (Compare, No labels), links to it with the data's sufficient statistics in
the link.  The file is not part of the URL; the column roles are.
"""

from __future__ import annotations

import html
import urllib.parse
from typing import Any

import panel as pn

from bayescm.app import upload_logic as logic
from bayescm.app.downloads import csv_download
from bayescm.app.layout import columns, section
from bayescm.app.pages._fields import clear_errors, keep_in_url, notes, show_error
from bayescm.app.pages_common import InputError, frame_html
from bayescm.app.registry import Page

INTRO = (
    "Upload a CSV of predictions, one row per case: <code>y_true</code> (the true label, "
    "if known), one column per classifier, optionally <code>group</code> (metrics per "
    "group) and <code>population</code> (unlabelled data from populations of different "
    "prevalence). Labelled cases of one classifier give its metrics, of several a paired "
    "comparison; without labels (or with some) you get the agreement table of the "
    "No-labels page. An empty cell is a missing result.")
OPTIONS = ("truth", "group", "population", "positive", "seed")
MAX_LINK = 8000
"""Longest query a link carries (a web server refuses far longer request lines)."""


class Upload:
    """The page for one browser session."""

    def __init__(self) -> None:
        self.notes = notes(("file", *OPTIONS))
        self.state = keep_in_url(logic.UploadState(), self.notes)
        s = self.state.param
        self.file = pn.widgets.FileInput(accept=".csv,.tsv,.txt", multiple=False,
                                         css_classes=["bcm-file"])
        self.w = {
            "truth": pn.widgets.TextInput.from_param(s.truth, label="True-label column",
                                                     css_classes=["bcm-truth"]),
            "group": pn.widgets.TextInput.from_param(s.group, label="Group column",
                                                     css_classes=["bcm-group"]),
            "population": pn.widgets.TextInput.from_param(
                s.population, label="Population column", css_classes=["bcm-population"]),
            "positive": pn.widgets.TextInput.from_param(
                s.positive, label="Positive label (if not 0/1)", css_classes=["bcm-positive"]),
            "seed": pn.widgets.IntInput.from_param(s.seed, label="Seed",
                                                   css_classes=["bcm-seed"]),
        }
        self.found = pn.pane.HTML("<p>Choose a file.</p>", sizing_mode="stretch_width")
        self.results = pn.Column(sizing_mode="stretch_width")
        self.result: logic.UploadResult | None = None
        self.file.param.watch(self.update, "value")
        self.state.param.watch(self.update, list(OPTIONS))

    def update(self, *_events: Any) -> None:
        data = self.file.value
        if data is None:
            return
        try:
            self.result = logic.analyse(logic.read_csv(data),
                                        logic.UploadState.from_params(self.state))
        except InputError as err:
            self.result = None
            show_error(self.notes, err)
            self.found.object = "<p><i>No analysis: correct the input above.</i></p>"
            self.results.objects = []
            return
        clear_errors(self.notes)
        self.show(self.result)

    def show(self, res: logic.UploadResult) -> None:
        parts = [f'<p data-testid="upload-kind" data-kind="{res.kind}"><b>'
                 f"{html.escape(res.description)}</b></p>"]
        if res.kind == "compare":
            comp = res.detail.comparison
            parts.append(
                f"<h3>P({html.escape(res.detail.a)} better than {html.escape(res.detail.b)} "
                f'in {html.escape(comp.metric)}) = <span data-testid="p-better">'
                f"{comp.probability:.3f}</span></h3>")
        if res.kind == "agreement":
            parts.append(f'<p><b>Identifiability.</b> <span data-testid="identifiability">'
                         f"{html.escape(res.detail.identifiability)}</span></p>")
        if res.page is not None:
            query = urllib.parse.urlencode(res.query or {}, safe=",;")
            if len(query) <= MAX_LINK:
                parts.append(f'<p><a data-testid="open-page" href="./{res.page}?'
                             f'{html.escape(query)}">Open this analysis in its page</a> '
                             "(the link holds the data; share it).</p>")
            else:
                parts.append("<p>The data are too large to travel in a link; this page "
                             "shows the analysis.</p>")
        self.found.object = "".join(parts)
        items: list[Any] = []
        for name, frame in res.tables.items():
            items.append(section(name.capitalize(), pn.pane.HTML(
                frame_html(frame, name), sizing_mode="stretch_width"),
                csv_download(lambda f=frame: f, f"{name}.csv", name=name)))
        self.results.objects = items

    def view(self) -> Any:
        def field(name: str) -> Any:
            return pn.Column(self.w[name], self.notes[name], sizing_mode="stretch_width")

        inputs = section("File", self.notes["url"], self.file, self.notes["file"],
                         columns(*(field(n) for n in OPTIONS), min_width=150))
        return pn.Column(pn.pane.HTML(f"<p>{INTRO}</p>", sizing_mode="stretch_width"), inputs,
                         self.found, self.results, sizing_mode="stretch_width")


def build() -> Any:
    return Upload().view()


PAGE = Page(slug="upload", title="Upload", order=40, build=build,
            description="A CSV of predictions becomes the right analysis.")
