"""metrics.results: labels, sentences, and the codec that reads JSON into dataclasses and renders
them for a viewer (no database)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from metrics.results import (
    OMIT_NONE,
    STORED,
    GroupLabel,
    RunLabel,
    Sentence,
    ShowAll,
    UnitLabel,
    labels_in,
    parse,
    read_named,
    render,
)


class Hiding:
    """Shows runs as "run?" and groups and units as "group?" (a viewer who may see nothing)."""

    def run(self, tag: str) -> str:
        return "run?"

    def group(self, name: str) -> str:
        return "group?"

    def unit(self, name: str) -> str:
        return "group?"


@dataclass(frozen=True)
class Row:
    unit: UnitLabel | None
    values: dict[str, float | None] = field(default_factory=dict, metadata={"flatten": True})


@dataclass(frozen=True)
class Report:
    best: RunLabel | None
    scores: dict[RunLabel, float | None]
    groups: dict[GroupLabel, list[RunLabel]]
    rows: dict[RunLabel, Row]
    verdict: Sentence
    start: int = field(metadata={"key": "from"})
    note: str | None = field(default=None, metadata=OMIT_NONE)
    version: int = field(default=3, metadata=STORED)


STORED_BLOB: dict[str, Any] = {
    "best": "bm25",
    "scores": {"bm25": 0.5, "dense": None},
    "groups": {"lab": ["bm25", "dense"]},
    "rows": {"bm25": {"unit": "lab", "score": 0.5, "webber_park": 0.52}},
    "verdict": "leaving out lab drops bm25-rm3 less than bm25",
    "from": 1,
    "version": 3,
}


def test_a_stored_result_reads_into_its_types_and_renders_back() -> None:
    report = read_named(Report, STORED_BLOB)
    assert report.best == RunLabel("bm25")
    assert report.groups == {GroupLabel("lab"): [RunLabel("bm25"), RunLabel("dense")]}
    assert report.rows[RunLabel("bm25")] == Row(
        UnitLabel("lab"), {"score": 0.5, "webber_park": 0.52}
    )
    assert report.start == 1 and report.note is None
    # stored, a sentence is its parts: text, and the names found in it (bm25-rm3 is not bm25)
    stored = render(report, stored=True)
    assert stored == {
        **STORED_BLOB,
        "verdict": [
            "leaving out ",
            {"unit": "lab"},
            " drops bm25-rm3 less than ",
            {"unit": "bm25"},
        ],
    }
    assert parse(Report, stored) == report  # read back with no names to look for
    assert render(parse(Report, stored), stored=True) == stored
    shown = render(report)  # without a viewer: every name as stored, the version not shown
    assert shown == {k: v for k, v in STORED_BLOB.items() if k != "version"}
    assert list(shown["rows"]["bm25"]) == ["unit", "score", "webber_park"]  # keys keep their place


def test_every_label_is_rendered_by_the_viewer_wherever_it_is() -> None:
    seen = render(read_named(Report, STORED_BLOB), Hiding())
    assert seen["best"] == "run?"
    assert set(seen["scores"]) == {"run?"}  # two runs, one label: the viewer decides
    assert seen["groups"] == {"group?": ["run?", "run?"]}
    assert seen["rows"]["run?"]["unit"] == "group?"
    # names inside a sentence: a whole name only (bm25-rm3 is not bm25 followed by text)
    assert seen["verdict"] == "leaving out group? drops bm25-rm3 less than group?"
    assert render(read_named(Report, STORED_BLOB), ShowAll()) == render(
        read_named(Report, STORED_BLOB)
    )


def test_sentences_find_whole_names_only() -> None:
    names = {"bm25", "lab", "v1.2"}
    s = Sentence.parse("bm25-rm3 and bm25, lab's v1.2 but not lab.txt or mylab", names)
    assert [p for p in s.parts if isinstance(p, UnitLabel)] == [
        UnitLabel("bm25"),
        UnitLabel("lab"),
        UnitLabel("v1.2"),
    ]
    assert s.text() == "bm25-rm3 and bm25, lab's v1.2 but not lab.txt or mylab"
    assert Sentence.parse("", names).text() == ""
    assert Sentence.parse("no names here", set()).parts == ("no names here",)


def test_a_key_the_stored_result_lacks_stays_absent_and_an_unknown_key_is_not_shown() -> None:
    old = {k: v for k, v in STORED_BLOB.items() if k not in ("best", "version")}
    report = parse(Report, {**old, "secret": "dense"})
    assert report.best is None
    shown = render(report)
    assert "best" not in shown  # absent before: absent after
    assert "secret" not in shown  # not declared by the type: not shown
    assert render(Report(None, {}, {}, {}, Sentence(("x",)), 2)) == {
        "best": None,  # made here, not read: None is shown
        "scores": {},
        "groups": {},
        "rows": {},
        "verdict": "x",
        "from": 2,
    }


def test_labels_in_finds_every_name_a_result_declares() -> None:
    names = {(type(x).__name__, x.name) for x in labels_in(read_named(Report, STORED_BLOB))}
    assert names == {
        ("RunLabel", "bm25"),
        ("RunLabel", "dense"),
        ("GroupLabel", "lab"),
        ("UnitLabel", "lab"),
        ("UnitLabel", "bm25"),
    }
