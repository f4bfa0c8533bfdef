import pytest
from scipy import stats

from bayescm import priors
from bayescm.priors import Beta, Dirichlet, PriorError


def test_defaults_are_visible_and_fresh():
    d = priors.defaults("three_beta")
    assert d == {"prevalence": Beta(1, 1), "tpr": Beta(1, 1), "tnr": Beta(1, 1)}
    d["tpr"] = Beta(2, 2)
    assert priors.defaults("three_beta")["tpr"] == Beta(1, 1)
    assert priors.defaults("dirichlet_multinomial") == {"theta": Dirichlet((1, 1, 1, 1))}


def test_parse_and_coerce():
    assert priors.parse("beta:20,4") == Beta(20, 4)
    assert priors.parse("Dirichlet: 1,2,3,4") == Dirichlet((1, 2, 3, 4))
    assert priors.coerce(stats.beta(3, 5), name="tpr") == Beta(3, 5)
    assert priors.coerce((0.5, 0.5), name="tpr") == Beta(0.5, 0.5)

    class FakePrior:  # the shape of pymc_extras.prior.Prior
        def __init__(self):
            self.distribution = "Beta"
            self.parameters = {"alpha": 2.0, "beta": 8.0}

    assert priors.coerce(FakePrior(), name="tpr") == Beta(2, 8)
    assert priors.parse("gamma:1,2") == priors.Gamma(1, 2)  # the grammar has every family
    with pytest.raises(PriorError, match="Cannot read the prior"):
        priors.parse("lognormal:1,2")
    with pytest.raises(PriorError, match=">= 0"):
        Beta(-1, 2)


def test_resolve_by_name_and_classifier():
    out = priors.resolve("three_beta", {"tpr": {"b": "beta:20,4"}}, ["a", "b"])
    assert out["tpr"] == [Beta(1, 1), Beta(20, 4)]
    with pytest.raises(PriorError, match="no parameter"):
        priors.resolve("three_beta", {"sensitivity": Beta(1, 1)}, ["a"])
    with pytest.raises(PriorError, match="not in the data"):
        priors.resolve("three_beta", {"tpr": {"zz": Beta(1, 1)}}, ["a"])
    # units are named by their text (a model or classifier 1 is '1' in the data): a key 1
    # is the unit '1' (it had passed the check and then been left out, silently)
    out = priors.resolve("three_beta", {"tpr": {1: "beta:20,4", 2.5: "beta:3,3"}},
                         ["1", "2.5", "b"])
    assert out["tpr"] == [Beta(20, 4), Beta(3, 3), Beta(1, 1)]
    with pytest.raises(PriorError, match="twice"):
        priors.resolve("three_beta", {"tpr": {1: Beta(2, 2), "1": Beta(3, 3)}}, ["1"])
    with pytest.raises(PriorError, match="4 concentrations"):
        priors.resolve("dirichlet_multinomial", {"theta": Dirichlet((1, 1))}, ["a"])
