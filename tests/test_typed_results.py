"""Stored bias and reusability results read into typed, versioned results
(``judging.evaluation.results``) and rendered for a viewer: a blob stored before result versions
reads (and is upgraded), each role sees exactly what it saw when names were hidden by walking the
blob, and a run or group name is hidden wherever a result type declares it, with no list of key
paths to keep up to date."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from judging.evaluation.results import (
    BIAS_RESULT_VERSION,
    REUSABILITY_RESULT_VERSION,
    BiasResult,
    ReusabilityResult,
    read_bias_result,
    read_reusability_result,
    stored_report,
    upgrade,
)
from judging.evaluation.selectors import ReportViewer
from metrics.results import GroupLabel, RunLabel, Sentence, UnitLabel, labels_in, render
from tests import _bias_reports as fx

CAPTURED = json.loads((Path(__file__).parent / "fixtures" / "stored_results_v1.json").read_text())
READERS: dict[str, Callable[..., BiasResult | ReusabilityResult]] = {
    "bias": read_bias_result,
    "reusability": read_reusability_result,
}


def viewer(campaign: str, who: str, result: Any) -> ReportViewer:
    seen = CAPTURED["viewers"][campaign][who]
    groups = dict(seen["groups"])
    if isinstance(result, BiasResult):
        for name, tags in result.group_runs().items():
            groups.setdefault(name, tags)
    return ReportViewer(seen["labels"], set(seen["visible"]), groups)


def names(campaign: str) -> set[str]:
    seen = CAPTURED["viewers"][campaign]["admin"]
    return set(seen["labels"]) | set(seen["groups"])


CASES = [
    pytest.param(
        case, who, id="-".join([case["campaign"], case["kind"], *map(str, case["key"]), who])
    )
    for case in CAPTURED["cases"]
    for who in case["seen"]
]


@pytest.mark.parametrize(("case", "who"), CASES)
def test_each_viewer_sees_a_stored_result_as_before(case: dict[str, Any], who: str) -> None:
    result = READERS[case["kind"]](case["blob"], names(case["campaign"]))
    rendered = render(result, viewer(case["campaign"], who, result))
    # the same keys in the same order, the same values
    assert json.dumps(rendered) == json.dumps(case["seen"][who])


@pytest.mark.parametrize("case", CAPTURED["cases"], ids=lambda c: f"{c['campaign']}-{c['kind']}")
def test_a_blob_stored_before_versions_reads_and_is_stored_again_with_sentences_as_parts(
    case: dict[str, Any],
) -> None:
    blob = case["blob"]
    assert "version" not in blob  # today's format, before versions
    result = READERS[case["kind"]](blob, names(case["campaign"]))
    current = BIAS_RESULT_VERSION if case["kind"] == "bias" else REUSABILITY_RESULT_VERSION
    assert result.version == current
    assert "version" not in render(result)  # readers are not shown the storage format
    assert render(result) == blob  # the same keys and values, sentences as text
    stored = render(result, stored=True)
    assert stored["version"] == current
    # stored again, its sentences are parts and nothing else changed
    sentences = {k for k, v in stored.items() if blob.get(k) != v} - {"version"}
    assert sentences, "a report of the fixture states a verdict or an estimate's basis"
    # read back with no names to look for: the same for every viewer, no name found in text
    again = READERS[case["kind"]](stored, set())
    for who, seen in case["seen"].items():
        assert render(again, viewer(case["campaign"], who, again)) == seen


def test_a_stored_sentence_names_what_was_found_when_it_was_computed() -> None:
    """From version 3 a report's sentences are stored as parts: a name found when it was
    computed stays a label, even once its run is gone from the campaign (no longer a name to
    look for), and text that reads like a name later is not taken for one."""
    case = next(c for c in CAPTURED["cases"] if c["kind"] == "reusability")
    stored = stored_report(
        ReusabilityResult, case["blob"], REUSABILITY_RESULT_VERSION, names(case["campaign"])
    )
    assert stored["basis"][1] == [
        "The group with the most relevant documents nobody else found is ",
        {"unit": "lexical-lab"},
        " (23).",
    ]
    later = read_reusability_result(stored, {"The", "group"})  # names of the day: not used
    assert later.basis[1].parts[1] == UnitLabel("lexical-lab")
    assert later.basis[1].parts[0] == (
        "The group with the most relevant documents nobody else found is "
    )


def test_the_upgrade_stamps_old_blobs_and_refuses_a_version_from_the_future() -> None:
    assert upgrade("bias", {"qrels_version": 1}, 3) == {"qrels_version": 1, "version": 3}
    assert upgrade("reusability", {"version": 2, "depth": 10}, 3) == {"version": 3, "depth": 10}
    assert upgrade("evaluation", {"n_queries": 5}, 2) == {"n_queries": 5, "version": 2}
    with pytest.raises(ValueError, match="unknown format version 4"):
        upgrade("bias", {"version": 4}, 3)


def test_the_names_of_a_result_are_its_labels() -> None:
    case = next(c for c in CAPTURED["cases"] if c["kind"] == "reusability")
    result = read_reusability_result(case["blob"], names(case["campaign"]))
    assert isinstance(result, ReusabilityResult)
    found = {(type(label).__name__, label.name) for label in labels_in(result)}
    assert ("RunLabel", "dense-v1") in found  # a pooled run
    assert ("UnitLabel", "vector-co") in found  # a group's unique relevant documents
    # a sentence naming a unit reads it as a label, not as text
    assert result.basis[1].parts == (
        "The group with the most relevant documents nobody else found is ",
        UnitLabel("lexical-lab"),
        " (23).",
    )


# --- a new field of a label type is hidden without touching the anonymiser -------------------


@dataclass(frozen=True)
class NewAnalysis:
    """A result type added after the anonymiser was written: nothing there knows its fields."""

    champion: RunLabel
    runner_up: RunLabel | None
    by_run: dict[RunLabel, float]
    strongest_group: GroupLabel
    left_out: list[UnitLabel]
    note: Sentence
    measure: str = "AP"
    extra: dict[str, list[RunLabel]] = field(default_factory=dict)


def test_a_new_field_of_a_label_type_is_hidden_from_who_may_not_see_it() -> None:
    labels = {"mine": "mine", "theirs": "anonymous run #7"}
    groups = {"my-lab": ["mine"], "their-lab": ["theirs"]}
    rita = ReportViewer(labels, {"mine"}, groups)
    analysis = NewAnalysis(
        champion=RunLabel("theirs"),
        runner_up=RunLabel("mine"),
        by_run={RunLabel("theirs"): 0.5, RunLabel("mine"): 0.4},
        strongest_group=GroupLabel("their-lab"),
        left_out=[UnitLabel("their-lab"), UnitLabel("theirs")],
        note=Sentence.parse("theirs beats mine; their-lab leads", {"theirs", "mine", "their-lab"}),
        extra={"podium": [RunLabel("theirs")]},
    )
    seen = render(analysis, rita)
    assert seen == {
        "champion": "anonymous run #7",
        "runner_up": "mine",
        "by_run": {"anonymous run #7": 0.5, "mine": 0.4},
        "strongest_group": "anonymous group #1",
        "left_out": ["anonymous group #1", "anonymous run #7"],
        "note": "anonymous run #7 beats mine; anonymous group #1 leads",
        "measure": "AP",
        "extra": {"podium": ["anonymous run #7"]},
    }
    text = json.dumps(seen)
    assert "theirs" not in text and "their-lab" not in text
    # whoever may see every name sees the result as stored
    everyone = ReportViewer({"mine": "mine", "theirs": "theirs"}, {"mine", "theirs"}, groups)
    assert render(analysis, everyone) == render(analysis)
    assert render(analysis)["note"] == "theirs beats mine; their-lab leads"


def test_a_result_of_an_older_shape_renders_with_the_keys_it_had() -> None:
    """A report stored before the before/after comparison named its topics (the page tells it
    by their absence) reads with those fields None and renders without them."""
    blob = fx.result(old=True)
    result = read_bias_result(blob)
    assert result.before_after is not None and result.before_after.topics is None
    assert result.topics is None and result.estimators is None
    assert render(result) == blob
    assert render(read_reusability_result(fx.reusability())) == fx.reusability()
