"""The docs' "Switching from trec_eval, ir_measures or ranx" table stays true: every name in
its trec_eval, ours and ranx columns parses, and the trec_eval and our spellings of a row name
the same measures."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from metrics.measures.diversity_names import parse_diversity_measure
from metrics.measures.names import parse_measures
from metrics.measures.prefs_registry import PREFS_MEASURES

PAGE = Path(__file__).resolve().parents[2] / "docs" / "guide" / "switching.md"


def _rows() -> list[list[str]]:
    text = PAGE.read_text()
    lines = text[text.index("# Switching from trec_eval, ir_measures or ranx") :].splitlines()
    first = next(i for i, ln in enumerate(lines) if ln.startswith("| "))
    rows: list[list[str]] = []
    for line in lines[first + 2 :]:  # after the header and its rule
        if not line.startswith("| "):
            break
        rows.append([c.strip() for c in line.strip().strip("|").split("|")])
    return rows


def _names(cell: str) -> list[str]:
    return [n.replace("k", "10").replace("x", "0.5") if n.endswith(("_k", "@k", "_x", "@x"))
            else n for n in re.findall(r"`([^`]+)`", cell)]  # fmt: skip


ROWS = _rows()


def test_the_table_is_found() -> None:
    assert len(ROWS) >= 15


@pytest.mark.parametrize("row", ROWS, ids=[r[1][:30] for r in ROWS])
def test_every_name_in_the_table_parses(row: list[str]) -> None:
    trec, ours, ranx = row[0], row[1], row[2]
    if trec.startswith("ndeval"):
        for name in _names(trec) + _names(ours):
            parse_diversity_measure(name)
        return
    if "-R qrels_jg" in trec:
        return  # judgment groups: tests/metrics/test_judgment_groups.py
    if "-R prefs" in trec:  # preference measures: tests/metrics/test_prefs.py
        for name in _names(trec):
            assert name.startswith("-") or name == "..." or name in PREFS_MEASURES, name
        return
    for name in _names(trec) + _names(ours) + _names(ranx):
        assert parse_measures([name]), name
