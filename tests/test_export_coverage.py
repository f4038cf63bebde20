"""Coverage figures in the exports (issue 29, point 12): Judged@k says how much of a ranking
was judged, not how good it is, so it is never tested against a baseline, never marked with a
dagger and never set in bold as "the best"; the effectiveness measures beside it still are.

On the demo under qrels v1, novel-neural (not pooled) has Judged@10 0.700 and every pooled run
1.000: a paired test of Judged@10 against bm25-baseline would call it "significant"."""

from __future__ import annotations

import csv
import io
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from judging.campaigns.models import Campaign
from metrics.measures.names import parse_measure
from tests._page_checks import body_text

pytestmark = pytest.mark.django_db

NOVEL = "novel-neural"
QUERY = "baseline=bm25-baseline&test=t&correction=none&measures=P@10,Judged@10"


def export(demo: Campaign, fmt: str) -> str:
    client = Client()
    client.force_login(get_user_model().objects.get(username="researcher"))
    r = client.get(f"/campaigns/{demo.pk}/leaderboard/export/?format={fmt}&{QUERY}")
    assert r.status_code == 200
    return body_text(r)


def markdown_row(text: str, run: str) -> list[str]:
    line = next(t for t in text.splitlines() if t.startswith(f"| {run}"))
    return [c.strip() for c in line.strip("|").split("|")]


def test_judged_at_10_carries_no_dagger_and_no_bold_in_markdown(demo: Campaign) -> None:
    text = export(demo, "markdown")
    header = markdown_row(text, "Run")
    judged = header.index("Judged@10")
    novel = markdown_row(text, NOVEL)
    assert novel[judged].startswith("0.700") and "†" not in novel[judged], novel
    rows = [markdown_row(text, r) for r in ("bm25-rm3", "dense-v1", "random-walk", NOVEL)]
    assert not any("**" in row[judged] or "†" in row[judged] for row in rows), rows
    # P@10 is still tested and marked: random-walk is far below the baseline
    assert "†" in markdown_row(text, "random-walk")[header.index("P@10")]
    assert "**" in markdown_row(text, "bm25-rm3")[header.index("P@10")]  # the best P@10


def test_judged_at_10_carries_no_dagger_and_no_bold_in_latex(demo: Campaign) -> None:
    text = export(demo, "latex")
    line = next(t for t in text.splitlines() if t.startswith(NOVEL))
    judged_cell = line.rstrip("\\ ").split("&")[2]
    assert "0.700" in judged_cell and "dag" not in judged_cell and "textbf" not in judged_cell
    for run in ("bm25-rm3", "dense-v1"):
        row = next(t for t in text.splitlines() if t.startswith(run))
        assert "textbf" not in row.rstrip("\\ ").split("&")[2], row


def test_the_csv_tests_only_the_effectiveness_measures(demo: Campaign) -> None:
    rows = list(csv.DictReader(io.StringIO(export(demo, "csv"))))
    assert "P@10 p_adjusted" in rows[0] and "Judged@10 p_adjusted" not in rows[0]
    assert "Judged@10 significant" not in rows[0] and "Judged@10 diff" not in rows[0]
    novel = next(r for r in rows if r["run"] == NOVEL)
    assert novel["Judged@10"].startswith("0.7")


@pytest.mark.parametrize(
    ("name", "coverage"),
    [
        ("Judged@10", True),
        ("Judged", True),
        ("Unjudged@20", True),
        ("unj_10", True),
        ("ceiling@50", True),
        ("P@10", False),
        ("AP", False),
        ("nDCG@10", False),
        ("Bpref", False),
    ],
)
def test_the_measure_registry_says_which_figures_are_coverage(name: str, coverage: bool) -> None:
    assert parse_measure(name).is_coverage is coverage


def test_a_coverage_only_export_with_a_baseline_tests_nothing(demo: Any) -> None:
    client = Client()
    client.force_login(get_user_model().objects.get(username="researcher"))
    r = client.get(
        f"/campaigns/{demo.pk}/leaderboard/export/?format=markdown&baseline=bm25-baseline"
        "&measures=Judged@10"
    )
    text = body_text(r)
    assert r.status_code == 200 and "†" not in text and "**" not in text.split("\n\n")[0]
    assert "not tested" in text  # the note says why nothing is marked
