"""Property-based tests (hypothesis) of the app's URL state (``bayescm/app/state.py``),
in the style of ``tests/test_properties.py``: any query string is parsed, any value a
link gives is applied or refused with a message naming it (never an exception), and a
page opened from any such link is built within the time bound with the library's
messages next to its fields -- never a traceback, never an "Unexpected error"."""

from __future__ import annotations

import types
import urllib.parse
import warnings

import param
import pytest
from hypothesis import strategies as st

from bayescm.app import state
from tests.test_properties import BOUND, prop
from tests.timebound import time_bound


class Demo(param.Parameterized):
    kind = param.Selector(default="binary", objects=["binary", "multiclass"])
    tp = param.Integer(26, bounds=(0, None))
    hdi = param.Number(0.95)
    metrics = param.List(["tpr", "tnr"])
    paired = param.Boolean(False)
    text = param.String("a,b")


NAMES = ["kind", "tp", "hdi", "metrics", "paired", "text", "other"]
hostile = st.one_of(
    st.text(max_size=30), st.integers().map(str), st.sampled_from(
        ["nan", "inf", "-inf", "1e400", "-1", "0", "1" * 5000, "", "true", "maybe", "%00",
         "\x00", "multiclass", "binary", "tpr,,tnr", "1,2;3,4", "é", "0x10", "1_000"]),
    st.binary(max_size=20))


@prop(query=st.dictionaries(st.sampled_from(NAMES), st.one_of(
    hostile, st.lists(hostile, min_size=0, max_size=3)), max_size=7))
def test_restore_applies_or_refuses_every_value_and_never_raises(query):
    target = Demo()
    with time_bound(BOUND, "restore"):
        problems = state.restore(target, query, choices={"text": ["a,b", "c"]})
    assert all(isinstance(p, str) and "was not used" in p for p in problems)
    assert all(len(p) < 600 for p in problems)  # a long value is cut in the message
    assert target.kind in ("binary", "multiclass") and target.text in ("a,b", "c")
    assert isinstance(target.tp, int) and target.tp >= 0
    assert isinstance(target.metrics, list) and isinstance(target.paired, bool)


@prop(search=st.one_of(st.text(max_size=200), st.lists(
    st.tuples(st.sampled_from(NAMES), hostile), max_size=6).map(
        lambda pairs: "?" + "&".join(f"{k}={v!s}" for k, v in pairs))))
def test_parse_takes_any_query_string(search):
    with time_bound(BOUND, "parse"):
        parsed = state.parse(search)
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in parsed.items())
    state.restore(Demo(), parsed)  # and whatever it gives is applied or refused


# -- pages opened from hostile links ------------------------------------------------------
PAGE_FIELDS = {
    "one": ["kind", "tp", "fn", "matrix", "metrics", "hdi", "density", "seed", "pmf_pos",
            "pmf_neg", "pmf_metric", "kprior_rows", "prior_tpr", "ss_width"],
    "compare": ["design", "counts", "cases", "metric", "margin", "a", "b", "hdi_prob",
                "seed", "label", "positive"],
    "nolabels": ["table", "priors", "dependence", "draws", "tune", "chains", "seed",
                 "hdi_prob", "fitted"],
}
page_value = st.one_of(hostile, st.sampled_from(
    ["100000000", "250000", "-5", "99999999999999999999", "4", "0", "paired", "foo",
     "multiclass", "1", "dirichlet:1e308", "a,b;1e300,1;2,3",
     "; ".join(",".join(["1"] * 30) for _ in range(30)),
     "++,+-,-+,--\n1e300,1,1,1", "A~B", "all"]))


def _open(page: str, query: dict[str, str]) -> list[str]:
    """Build ``page`` as a served session opened at ``?query`` does; its notes' texts."""
    from bayescm.app.pages.compare import Compare
    from bayescm.app.pages.nolabels import NoLabels
    from bayescm.app.pages.one_classifier import OneClassifier

    location = types.SimpleNamespace(search="?" + urllib.parse.urlencode(query))
    with pytest.MonkeyPatch.context() as mp, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mp.setattr(state, "_session_location", lambda: location)
        made = {"one": OneClassifier, "compare": Compare, "nolabels": NoLabels}[page]()
        if page == "compare":
            made.view()
            made.update()
        elif page == "nolabels":
            made.view()
            made.edited()
    notes = dict(getattr(made, "notes", {}))
    if hasattr(made, "url_note"):
        notes["url"] = made.url_note
    return [n.text for n in notes.values() if n.text]


@pytest.mark.filterwarnings("ignore:The recursion limit")  # PyMC raises it (No labels)
@pytest.mark.parametrize("profile", ["fast", pytest.param("slow", marks=pytest.mark.slow)])
@pytest.mark.parametrize("page", sorted(PAGE_FIELDS))
def test_a_page_opened_from_any_link_shows_messages_not_errors(page, profile):
    @prop(query=st.dictionaries(st.sampled_from(PAGE_FIELDS[page]), page_value, max_size=4))
    def body(query):
        with time_bound(BOUND, f"opening {page}"):
            texts = _open(page, query)
        for text in texts:
            assert "Unexpected error" not in text and "Traceback" not in text, text
            assert "/work/" not in text and ".py" not in text, text

    body(profile)
