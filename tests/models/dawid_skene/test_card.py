"""The model card models/dawid_skene/README.md: every python block runs (its asserts check
what the card states), and the facts it quotes are the library's."""

from __future__ import annotations

import pathlib
import re

import bayescm as bcm
from bayescm.data.datasets_ratings import anaesthesia
from bayescm.models.dawid_skene import default_partial_priors, default_priors_for

CARD = pathlib.Path(__file__).resolve().parents[3] / "models" / "dawid_skene" / "README.md"


def test_model_card_code_blocks_run():
    blocks = re.findall(r"```python\n(.*?)```", CARD.read_text(), flags=re.S)
    assert len(blocks) == 4
    for i, body in enumerate(blocks):
        exec(compile(body, f"dawid_skene card block {i + 1}", "exec"), {})


def test_the_cards_facts():
    text = CARD.read_text()
    assert len(anaesthesia().patterns()) == 27 and "45 patients have 27 patterns" in text
    rows = default_priors_for(5)["confusion"].alpha
    assert rows[0] == (2, 1, 1, 1, 1)  # recall ~ Beta(2, K - 1)
    assert bcm.models.get_family("dawid_skene").jags.script.endswith("dawid_skene.jags")
    assert "dawid_skene.jags" in text
    partial = bcm.models.get_family("dawid_skene").jags_twin(
        bcm.models.spec_of(bcm.models.dawid_skene(anaesthesia(), pooling="partial")))
    assert partial.script.endswith("dawid_skene_partial.jags")
    assert "dawid_skene_partial.jags" in text
    prior = default_partial_priors(5)
    assert (prior["confusion_logit_mean"].mu, prior["confusion_logit_mean"].sigma) == (-1, 1.14)
    assert r"\mathrm{Normal}(-1, 1.14)" in text and r"\mathrm{HalfNormal}(1)" in text
