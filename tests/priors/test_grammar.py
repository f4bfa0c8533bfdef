"""One grammar for priors (issue 25, item 5): a text means the same prior in Python
(``bcm.priors.parse``, a model's ``priors={name: text}``), the CLI (``--prior
NAME=TEXT``) and the app (the One-classifier page's fields), or gets the same message.

Before, the app read ``dirichlet:0.1`` (a symmetric Dirichlet), ``jeffreys``, ``flat``,
``perks``, ``mean:...;weight:w`` and ``diagonal:a,b``, which Python and the CLI refused.
"""

from __future__ import annotations

import contextlib
import io
import json
import warnings

import pytest

import bayescm as bcm
from bayescm import cli
from bayescm.app import one_classifier_logic as app
from bayescm.priors import Beta, Dirichlet, PriorError

CM = bcm.ConfusionMatrix(tp=26, fn=0, fp=2, tn=6, classifier="cm")
MATRIX = "a,b,c; 50,3,2; 4,40,6; 1,2,30"
MC = bcm.MulticlassConfusionMatrix([[50, 3, 2], [4, 40, 6], [1, 2, 30]],
                                   labels=["a", "b", "c"], classifier="cm")

RATE = [  # (text for the TPR, the prior it means)
    ("beta:20,4", Beta(20, 4)),
    (" Beta: 2 , 3 ", Beta(2, 3)),
    ("flat", Beta(1, 1)),
    ("jeffreys", Beta(0.5, 0.5)),
    ("perks", Beta(0.5, 0.5)),
    ("mean:0.9;weight:20", bcm.priors.beta_from_mean(0.9, 20)),  # Beta(18, 2)
    ("elicit:0.9,0.8,0.95", bcm.priors.elicit_beta(mode=0.9, lower=0.8, prob=0.95)),
    ("elicit_upper:0.1,0.3,0.9", bcm.priors.elicit_beta(mode=0.1, upper=0.3, prob=0.9)),
    ("pert:0,0.9,1", bcm.priors.beta_pert(0, 0.9, 1)),
]
K_CLASS = [  # (parameter of multiclass_rows, text, the prior it means at K = 3)
    ("rows", "dirichlet:0.1", Dirichlet((0.1, 0.1, 0.1))),
    ("rows", "dirichlet:1,2,3", Dirichlet((1, 2, 3))),
    ("rows", "flat", Dirichlet.flat(3)),
    ("rows", "jeffreys", Dirichlet.jeffreys(3)),
    ("rows", "perks", Dirichlet.perks(3)),
    ("rows", "diagonal:8,1", Dirichlet.diagonal(3, correct=8, wrong=1)),
    ("rows", "dirichlet:5,1,1;1,5,1;1,1,5", Dirichlet([[5, 1, 1], [1, 5, 1], [1, 1, 5]])),
    ("rows", "mean:0.6,0.3,0.1;weight:10", Dirichlet((6, 3, 1))),
    ("prevalence", "perks", Dirichlet.perks(3)),
    ("prevalence", "dirichlet:0.5", Dirichlet((0.5, 0.5, 0.5))),
    ("prevalence", "mean:0.5,0.3,0.2;weight:20", Dirichlet((10, 6, 4))),
]


def run_cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code = cli.main(list(argv))
    return code, out.getvalue(), err.getvalue()


def recorded(model) -> dict:
    """The priors a fit records (``idata.attrs['priors']``): name -> unit -> repr."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        idata = bcm.fit(model, sampler="exact", draws=50, chains=1, random_seed=1)
    return json.loads(idata.attrs["priors"])


@pytest.mark.parametrize(("text", "prior"), RATE, ids=[t for t, _ in RATE])
def test_a_rate_prior_text_is_one_prior_in_python_the_cli_and_the_app(text, prior):
    python = bcm.priors.parse(text, kind="beta", name="tpr")
    assert python == prior
    assert bcm.priors.coerce(text, kind="beta", name="tpr") == prior
    shown = recorded(bcm.models.three_beta(CM, priors={"tpr": text}))["tpr"]["cm"]
    code, out, err = run_cli("summarize", "--tp", "26", "--fn", "0", "--fp", "2", "--tn", "6",
                             "--prior", f"tpr={text}", "--json", "--draws", "50")
    assert code == 0, err
    assert json.loads(out)["priors"]["tpr"]["cm"] == shown == repr(prior)
    assert app.parse_prior(text, "tpr") == prior


@pytest.mark.parametrize(("name", "text", "prior"), K_CLASS,
                         ids=[f"{n}={t}" for n, t, _ in K_CLASS])
def test_a_k_class_prior_text_is_one_prior_in_python_the_cli_and_the_app(name, text, prior):
    assert bcm.priors.parse(text, k=3, kind="dirichlet", name=name) == prior
    shown = recorded(bcm.models.multiclass_rows(MC, priors={name: text}))[name]["cm"]
    code, out, err = run_cli("summarize", "--matrix", MATRIX, "--prior", f"{name}={text}",
                             "--json", "--draws", "50")
    assert code == 0, err
    assert json.loads(out)["priors"][name]["cm"] == shown
    assert app.k_prior(text, name, MC) == prior
    # the model keeps a matrix in the data's class order: the same numbers
    expected = Dirichlet(prior.alpha)
    assert shown == repr(expected)


@pytest.mark.parametrize(("argv", "text", "reader"), [
    (["--tp", "26", "--fn", "0", "--fp", "2", "--tn", "6"], "beta:1",
     lambda t: app.parse_prior(t, "tpr")),
    (["--tp", "26", "--fn", "0", "--fp", "2", "--tn", "6"], "beta:a,b",
     lambda t: app.parse_prior(t, "tpr")),
    (["--tp", "26", "--fn", "0", "--fp", "2", "--tn", "6"], "dirichlet:1,1",
     lambda t: app.parse_prior(t, "tpr")),
    (["--matrix", MATRIX], "diagonal:8", lambda t: app.k_prior(t, "rows", MC)),
    (["--matrix", MATRIX], "mean:0.5,0.5", lambda t: app.k_prior(t, "rows", MC)),
])
def test_a_text_outside_the_grammar_gets_one_message_everywhere(argv, text, reader):
    name = "rows" if "--matrix" in argv else "tpr"
    with pytest.raises(PriorError) as in_app:
        reader(text)
    kind = "dirichlet" if name == "rows" else "beta"
    with pytest.raises(PriorError) as in_python:
        bcm.priors.parse(text, k=3, kind=kind, name=name)
    code, _, err = run_cli("summarize", *argv, "--prior", f"{name}={text}")
    assert code == 2
    assert str(in_app.value) == str(in_python.value)
    assert str(in_python.value) in err


def test_texts_without_their_size_take_k_from_parse_or_from_the_model():
    assert bcm.priors.parse("jeffreys", k=4) == Dirichlet.jeffreys(4)
    assert bcm.priors.parse("dirichlet:0.1", k=2) == Dirichlet((0.1, 0.1))
    with pytest.raises(PriorError, match="k=3"):
        bcm.priors.parse("jeffreys")  # over how many categories?
    with pytest.raises(PriorError, match="over how many categories"):
        bcm.priors.parse("diagonal:8,1")
    # a model knows K: Caelen's cells model takes four concentrations
    model = bcm.models.dirichlet_multinomial(CM, priors={"theta": "jeffreys"})
    assert recorded(model)["theta"]["cm"] == repr(Dirichlet.jeffreys(4))
    # every family of the grammar, one text each
    assert bcm.priors.parse("gamma:2,3") == bcm.priors.Gamma(2, 3)
    assert bcm.priors.parse("halfnormal:0.5") == bcm.priors.HalfNormal(0.5)
    assert bcm.priors.parse("normal:0,1.5") == bcm.priors.Normal(0, 1.5)


def test_the_grammar_is_documented_where_it_is_read():
    doc = bcm.priors.parse.__doc__
    for form in ("beta:a,b", "dirichlet:c", "jeffreys", "perks", "mean:m;weight:w",
                 "diagonal:correct,wrong", "elicit:mode,lower,prob", "pert:minimum,mode"):
        assert form in doc, form
    assert "bcm.priors.parse" in app.__doc__
