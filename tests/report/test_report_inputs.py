"""``bcm.report`` with hostile or careless inputs (issue 25): a ``$`` in a classifier's
name (matplotlib mathtext used to crash the figures), raw ``<script>`` in a name or the
notes (passed through into Markdown), and a ``.pdf`` path (HTML used to be written into
it)."""

from __future__ import annotations

import pytest

import bayescm as bcm

SCRIPT = "<script>alert(1)</script>"


@pytest.fixture(scope="module")
def idata():
    cm = bcm.ConfusionMatrix(tp=[26, 5, 7], fn=[0, 3, 1], fp=[2, 1, 2], tn=[6, 9, 8],
                             classifier=["$\\frac$", "cost $5 or $6", SCRIPT])
    return bcm.fit(bcm.models.three_beta(cm), sampler="exact", draws=200, random_seed=1)


def test_a_dollar_in_a_name_does_not_crash_the_report(idata):
    rep = bcm.report(idata)
    page = rep.html()
    assert "cost $5 or $6" in page and "data:image/png;base64," in page


def test_markdown_escapes_raw_html(idata):
    text = bcm.report(idata, notes=f"Study {SCRIPT} & co.", title=f"T {SCRIPT}").markdown()
    assert "<script" not in text
    assert "&lt;script>alert(1)&lt;/script>" in text  # shown as written once rendered
    assert "& co." not in text and "&amp; co." in text
    html = bcm.report(idata, notes=SCRIPT).html()
    assert "<script" not in html


def test_a_pdf_path_is_refused_and_nothing_written(idata, tmp_path):
    for name in ("x.pdf", "x.docx", "x.png"):
        with pytest.raises(ValueError, match=r"\.html") as caught:
            bcm.report(idata, tmp_path / name)
        assert name in str(caught.value)
        assert not (tmp_path / name).exists()
    with pytest.raises(ValueError, match="markdown"):
        bcm.report(idata, tmp_path / "x.html", format="markdown")
    rep = bcm.report(idata)
    with pytest.raises(ValueError, match=r"\.pdf"):
        rep.save(tmp_path / "y.pdf")
    for name, start in (("r.html", "<!DOCTYPE html>"), ("r.md", "# "), ("r.txt", "<!DOCTYPE"),
                        ("r", "<!DOCTYPE")):
        rep.save(tmp_path / name)
        assert (tmp_path / name).read_text(encoding="utf-8").startswith(start)
    rep.save(tmp_path / "m.txt", format="markdown")
    assert (tmp_path / "m.txt").read_text(encoding="utf-8").startswith("# ")
