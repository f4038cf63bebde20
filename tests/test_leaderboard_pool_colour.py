"""The leaderboard's orange marks a run scored against a pool it did not help build: a run not
in the pool, or one with unjudged documents within the pool's depth (issue 29, point 8). A
depth-10 pool leaves every run's ranks below 10 mostly unjudged, so a pooled run's R@50, AP and
Bpref (Judged well below 0.9) are not marked: the one signal that matters is not drowned.

The demo's pool version 1 is the depth-10 union of five pooled runs; novel-neural was not pooled
(its Judged@10 under qrels v1 is 0.7)."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from judging.campaigns.models import Campaign

pytestmark = pytest.mark.django_db

NOVEL = "novel-neural"


def board_cells(page: str) -> dict[str, dict[str, set[str]]]:
    """Run -> measure -> the classes of its cell, read from the table (header order)."""
    table = page[page.index('id="leaderboard"') :]
    table = table[: table.index("</table>")]
    measures = re.findall(r'<th class="num"[^>]*data-measure="([^"]+)"', table)
    out: dict[str, dict[str, set[str]]] = {}
    for row in re.findall(r"<tr[^>]*>\s*<td class=\"run\".*?</tr>", table, re.S):
        name = re.search(r'<td class="run"[^>]*>(.*?)</td>', row)
        assert name, row
        run = re.sub(r"<[^>]+>", "", name.group(1))
        classes = re.findall(r'<td class="(num[^"]*)"', row)
        out[run.strip()] = {m: set(c.split()) for m, c in zip(measures, classes, strict=True)}
    return out


def test_on_a_depth_10_pool_only_the_run_that_did_not_help_build_it_is_marked(
    demo: Campaign,
) -> None:
    assert demo.pool_depth == 10
    client = Client()
    client.force_login(get_user_model().objects.get(username="researcher"))
    page = client.get(f"/campaigns/{demo.pk}/leaderboard/?details=1").content.decode()
    cells = board_cells(page)
    pooled = set(cells) - {NOVEL}
    assert len(pooled) == 5
    for run in pooled:
        for measure in ("R@50", "AP", "Bpref", "P@10"):
            assert not cells[run][measure] & {"outside-pool", "low-judged"}, (run, measure)
    # the novel run's scores that count unjudged documents as not relevant are marked
    for measure in ("P@10", "nDCG@10", "R@50", "AP", "Bpref"):
        assert "outside-pool" in cells[NOVEL][measure], measure
    # the legend says what the colour marks, and nothing about Judged@k below 0.9
    legend = re.search(r'id="board-legend"[^>]*>(.*?)</p>', page, re.S)
    assert legend, "no legend"
    text = " ".join(re.sub(r"<[^>]+>", " ", legend.group(1)).split())
    assert "below 0.9" not in text
    assert "not pooled" in text and "within the pool's depth (its top 10" in text, text


def test_a_pooled_run_with_unjudged_documents_in_its_top_10_is_marked_too(
    demo: Campaign,
) -> None:
    """Under qrels v1, mark novel-neural pooled (as the admin does before re-pooling): it is
    pooled now but its top 10 still hold documents nobody judged for v1, so it stays marked."""
    demo.runs.filter(tag=NOVEL).update(pooled=True)
    client = Client()
    client.force_login(get_user_model().objects.get(username="researcher"))
    cells = board_cells(client.get(f"/campaigns/{demo.pk}/leaderboard/").content.decode())
    assert "outside-pool" in cells[NOVEL]["P@10"] and "outside-pool" in cells[NOVEL]["AP"]
    assert not any(
        "outside-pool" in c for run in cells if run != NOVEL for c in cells[run].values()
    )


def test_the_depth_rule_reads_judged_at_the_deepest_cutoff_within_the_pool() -> None:
    from judging.evaluation.standing import pool_standing

    measures = {
        "P@5": {"value": 0.8, "judged": {"measure": "Judged@5", "value": 1.0}},
        "P@10": {"value": 0.7, "judged": {"measure": "Judged@10", "value": 0.9}},
        "R@50": {"value": 0.5, "judged": {"measure": "Judged@50", "value": 0.4}},
        "AP": {"value": 0.5, "judged": {"measure": "Judged", "value": 0.3}},
    }
    # depth 10: Judged@10 (0.9) decides; Judged@50 and the full-depth Judged are beyond it
    standing = pool_standing(pooled=True, measures=measures, depth=10)
    assert (standing.outside, standing.k, standing.judged) == (True, 10, 0.9)
    assert standing.why == "unjudged documents in its top 10 (Judged@10 0.90)"
    # depth 5: its top 5 are all judged; a pooled run there is not outside the pool
    assert not pool_standing(pooled=True, measures=measures, depth=5).outside
    # not pooled: outside whatever its coverage; nothing within the depth stored: k is None
    assert pool_standing(pooled=False, measures={}, depth=10).as_dict() == {
        "outside": True,
        "why": "not pooled",
        "k": None,
        "judged": None,
    }
