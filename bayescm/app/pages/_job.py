"""A button that runs a :class:`~bayescm.app.fitjob.FitJob`: progress, cancel.

The No-labels page's *Fit* and the Upload page's *Pool the groups* share it: *start*
asks the page for a job (None: nothing to fit), polls its stage and draws four times a
second into a bar and a line of text (``data-testid="progress"`` unless told
otherwise), *Cancel* stops the child process, and when the fit is done the page's
``on_done`` receives the job's result (summarised in the child: nothing heavy runs in
the server's event loop).  The runner keeps the shown fit's job, so that its file is
deleted when a new fit replaces it or the reader leaves (:meth:`JobRunner.forget`).
"""

from __future__ import annotations

import html
import logging
from collections.abc import Callable
from typing import Any

import panel as pn

from bayescm.app import fitjob
from bayescm.app.errors import message as message_of

POLL_MS = 250
log = logging.getLogger("bayescm.app")


class JobRunner:
    """Fit and Cancel buttons, a progress bar and a progress line for one page.

    Parameters
    ----------
    make
        Returns a new, not yet started job, or None when the inputs cannot be fitted.
    on_done
        Receives the finished job's result (:meth:`FitJob.result`).
    label, name
        The button's label; ``name`` makes the CSS classes ``bcm-<name>`` and
        ``bcm-<name>-cancel`` (``bcm-cancel`` for the name ``fit``) and the progress
        line's test id ``<name>-progress`` (``progress`` for ``fit``).
    summarising
        What the page says while the child summarises the fit (after saving it).
    """

    def __init__(self, make: Callable[[], fitjob.FitJob | None],
                 on_done: Callable[[Any], None], *, label: str = "Fit (NUTS)",
                 name: str = "fit", summarising: str = "summarising the fit",
                 width: int = 130) -> None:
        self.make, self.on_done, self.summarising = make, on_done, summarising
        prefix = "" if name == "fit" else f"{name}-"
        self.testid = f"{prefix}progress"
        self.ready = True  # the page's inputs can be fitted
        self.job: fitjob.FitJob | None = None
        self.done: fitjob.FitJob | None = None  # the job whose fit is shown
        self.poller: Any = None
        self.button = pn.widgets.Button(label=label, color="primary",
                                        css_classes=[f"bcm-{name}"], sizing_mode="fixed",
                                        width=width)
        self.cancel_button = pn.widgets.Button(label="Cancel", color="danger", visible=False,
                                               css_classes=[f"bcm-{prefix}cancel"],
                                               sizing_mode="fixed", width=100)
        self.bar = pn.indicators.Progress(value=0, max=100, visible=False,
                                          sizing_mode="stretch_width")
        self.progress = pn.pane.HTML("", sizing_mode="stretch_width")
        self.button.on_click(self.start)
        self.cancel_button.on_click(self.cancel)
        if pn.state.curdoc is not None and pn.state.curdoc.session_context is not None:
            # the reader left: stop the fit and delete the fit's file
            pn.state.on_session_destroyed(lambda _ctx: self.close())

    @property
    def running(self) -> bool:
        return self.job is not None

    def set_ready(self, ready: bool) -> None:
        """Enable the button (when no fit runs) iff the inputs can be fitted."""
        self.ready = ready
        if self.job is None:
            self.button.disabled = not ready

    def start(self, *_events: Any) -> None:
        if not self.ready or self.job is not None:
            return
        job = self.make()
        if job is None:
            return
        self.forget()
        self.job = job.start()
        self.button.disabled = True
        self.cancel_button.visible = self.bar.visible = True
        self.bar.value = 0
        self.say(f"{fitjob.STAGES[0]} — starting")
        self.poller = pn.state.add_periodic_callback(self.poll, period=POLL_MS)

    def say(self, text: str) -> None:
        self.progress.object = f'<p data-testid="{self.testid}">{html.escape(text)}</p>'

    def stop(self) -> None:
        if self.poller is not None:
            self.poller.stop()
            self.poller = None
        self.job = None
        self.cancel_button.visible = self.bar.visible = False
        self.button.disabled = not self.ready

    def poll(self) -> None:
        job = self.job
        if job is None:
            return
        p = job.poll()
        self.bar.value = round(100 * p.fraction)
        text = self.summarising if p.stage == fitjob.STAGES.index("summarising the fit") \
            else p.text
        self.say(f"{text} — {p.elapsed:.1f} s")
        if p.state == "running":
            return
        self.stop()
        if p.state != "done":
            self.say(f"The fit failed: {p.error}")
            return
        self.done = job
        try:
            self.on_done(job.result())
        except Exception as err:  # a page that cannot show the fit says why, not stalls
            log.exception("bayescm app: showing a fit failed")
            self.say(f"The fit could not be shown: {message_of(err)}")
            return
        self.say(f"Fitted in {p.elapsed:.1f} s.")

    def cancel(self, *_events: Any) -> None:
        if self.job is None:
            return
        self.job.discard()
        self.stop()
        self.say("Cancelled.")

    def forget(self, *_args: Any) -> None:
        """Delete the shown fit's file (a new fit replaces it, or the reader left)."""
        if self.done is not None:
            self.done.discard()
            self.done = None

    def close(self) -> None:
        """Stop a running fit and delete the shown one (the session ended)."""
        self.cancel()
        self.forget()

    def view(self) -> Any:
        # the buttons wrap onto two lines at a phone's width
        return pn.Column(pn.FlexBox(self.button, self.cancel_button, flex_wrap="wrap"),
                         self.bar, self.progress, sizing_mode="stretch_width")


def sampler_widgets(params: Any) -> dict[str, Any]:
    """Inputs of the sampler's options (``draws``, ``tune``, ``chains`` of a page's
    ``param`` state), with their CSS classes.

    Examples
    --------
    >>> from bayescm.app.nolabels_logic import NoLabelsState
    >>> params = NoLabelsState(draws=500).params()
    >>> widgets = sampler_widgets(params)
    >>> sorted(widgets), widgets["draws"].value, widgets["draws"].label
    (['chains', 'draws', 'tune'], 500, 'Draws per chain')
    >>> widgets["chains"].value = 2; params.chains     # an edit reaches the page's state
    2
    """
    p = params.param
    return {
        "draws": pn.widgets.IntInput.from_param(p.draws, label="Draws per chain",
                                                css_classes=["bcm-draws"]),
        "tune": pn.widgets.IntInput.from_param(p.tune, label="Tuning steps",
                                               css_classes=["bcm-tune"]),
        "chains": pn.widgets.IntInput.from_param(p.chains, label="Chains",
                                                 css_classes=["bcm-chains"]),
    }


def convergence_html(message: str, ok: bool, *, testid: str = "convergence") -> str:
    """The convergence verdict (:meth:`bayescm.ConvergenceReport.message`): its first
    line in bold, green if converged, amber if not, the reasons as a list.

    Examples
    --------
    >>> print(convergence_html("NOT converged: R-hat 1.08.\\n- R-hat >= 1.01: run longer.",
    ...                        False))  # doctest: +NORMALIZE_WHITESPACE
    <div data-testid="convergence" style="color:#9a6700"><b>NOT converged: R-hat
    1.08.</b><ul><li>R-hat &gt;= 1.01: run longer.</li></ul></div>
    >>> "#1a7f37" in convergence_html("Converged by construction.", True)   # green
    True
    """
    color = "#1a7f37" if ok else "#9a6700"
    lines = message.splitlines()
    items = "".join(f"<li>{html.escape(x.lstrip('- '))}</li>" for x in lines[1:])
    return (f'<div data-testid="{testid}" style="color:{color}"><b>{html.escape(lines[0])}'
            f"</b>{f'<ul>{items}</ul>' if items else ''}</div>")
