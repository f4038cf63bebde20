"""The wording rule on every page a researcher and an admin can reach for the demo campaign: no
``nan``, ``NaN``, ``None``, no blank or ``0.0000`` p-value, every percentage says of what (it is
followed by "of ..." or sits in an element whose title says "% of ..."), and a chart's legend
names only the series it draws (tests/_page_checks.py states the convention exactly).

Walked: home, leaderboard, significance (each test and measure, so every pair of runs), every
run page and its recall chart, the bias page with and without a stored report and its charts,
the manage pages; then again after the README's re-pooling steps (qrels v2, before/after)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from judging.assessments.queue import judgment_record, lease_next
from judging.campaigns.models import Campaign, Run
from judging.demo.data import build
from judging.workflows.pools import pool_requested
from judging.workflows.qrels import qrels_published
from tests._page_checks import wording_problems

pytestmark = [pytest.mark.django_db, pytest.mark.follow_ups]


def client_for(username: str) -> Client:
    client = Client()
    client.force_login(get_user_model().objects.get(username=username))
    return client


def urls(campaign: Campaign, client: Client, *, admin: bool) -> Iterator[str]:
    c = campaign.pk
    yield "/"
    yield f"/campaigns/{c}/leaderboard/"
    for measure in campaign.measures:
        for test in ("t", "randomization", "bootstrap"):
            yield f"/campaigns/{c}/compare/?measure={measure}&test={test}"
    runs = Run.objects.filter(campaign=campaign) if admin else None
    home = client.get("/").content.decode()
    ids = (
        [r.pk for r in runs]
        if runs is not None
        else sorted({int(i) for i in re.findall(r'href="/runs/(\d+)/"', home)})
    )
    assert ids, "no run page to walk"
    for run_id in ids:
        yield f"/runs/{run_id}/"
        yield f"/runs/{run_id}/?mode=trec_eval"
        yield f"/runs/{run_id}/recall.svg"
    yield f"/campaigns/{c}/bias/"
    yield f"/campaigns/{c}/bias/?kind=loo_group"  # not computed: the Compute button
    yield f"/campaigns/{c}/bias/?measure=P@10&depth=5"
    for chart in ("scatter", "deltas", "efficiency", "reusability"):
        yield f"/campaigns/{c}/bias/{chart}.svg"
    if admin:
        yield f"/manage/{c}/"
        yield f"/manage/{c}/agreement/"


def walk(campaign: Campaign, username: str, *, admin: bool) -> dict[str, int]:
    """Every page and chart, its status; asserts the wording rule on each one answered."""
    client = client_for(username)
    seen: dict[str, int] = {}
    problems: dict[str, list[str]] = {}
    for url in urls(campaign, client, admin=admin):
        response = client.get(url)
        seen[url] = response.status_code
        if response.status_code != 200:
            continue
        found = wording_problems(response.content.decode())
        if found:
            problems[url] = found
    assert problems == {}
    assert not [u for u, s in seen.items() if s >= 500]
    return seen


def test_every_page_of_the_demo_keeps_the_wording_rule_for_a_researcher(demo: Campaign) -> None:
    seen = walk(demo, "researcher", admin=False)
    assert seen[f"/campaigns/{demo.pk}/leaderboard/"] == 200
    assert seen[f"/campaigns/{demo.pk}/bias/"] == 200
    assert seen[f"/campaigns/{demo.pk}/bias/scatter.svg"] == 200
    assert sum(1 for u, s in seen.items() if u.startswith("/runs/") and s == 200) >= 3


def test_every_page_of_the_demo_keeps_the_wording_rule_for_an_admin(demo: Campaign) -> None:
    seen = walk(demo, "admin", admin=True)
    assert seen[f"/manage/{demo.pk}/"] == 200 and seen[f"/manage/{demo.pk}/agreement/"] == 200
    runs = Run.objects.filter(campaign=demo).count()
    assert sum(1 for u, s in seen.items() if re.match(r"^/runs/\d+/$", u) and s == 200) == runs


def test_the_significance_table_writes_no_zero_or_blank_p_value(demo: Campaign) -> None:
    client = client_for("researcher")
    html = client.get(f"/campaigns/{demo.pk}/compare/?measure=AP&test=randomization").content
    page = html.decode()
    cells = re.findall(r'<td class="num p">(.*?)</td>', page)
    assert len(cells) >= 2 * 15  # six runs: 15 pairs, p and Holm's p
    assert all(c == "< 0.0001" or re.fullmatch(r"[01]\.\d{4}", c) for c in cells), cells
    assert "0.0000" not in cells


def judge_everything_left(campaign: Campaign) -> None:
    truth = build().truth
    annotator = get_user_model().objects.get(username="annotator")
    while (lease := lease_next(campaign=campaign, annotator=annotator)) is not None:
        slot = lease.slot
        judgment_record(
            lease_id=lease.pk, annotator=annotator, grade=truth[slot.topic.qid].get(slot.docid, 0)
        )


def test_after_repooling_the_before_after_keeps_the_wording_rule(
    demo: Campaign, as_committed: Any
) -> None:
    """The README's steps 2-5: finish pool v1, pool the novel run, judge, publish qrels v2."""
    judge_everything_left(demo)
    with as_committed():
        qrels_published(campaign=demo, note="pool v1 complete")
    demo.runs.filter(tag="novel-neural").update(pooled=True)
    with as_committed():
        pool_requested(campaign=demo)
    judge_everything_left(demo)
    with as_committed():
        qrels_published(campaign=demo, note="pool v2 judged")
    seen = walk(demo, "researcher", admin=False)
    page = client_for("researcher").get(f"/campaigns/{demo.pk}/bias/").content.decode()
    assert seen[f"/campaigns/{demo.pk}/bias/"] == 200
    assert "Before and after re-pooling" in page
    walk(demo, "admin", admin=True)


@pytest.mark.parametrize(
    ("html", "problem"),
    [
        ("<p>mean 0.4 nan</p>", "nan"),
        ("<td>None</td>", "nan/None"),
        ("<p>Webber &amp; Park (0.0513, 72.0%)</p>", "does not say of what"),
        ('<table><tr><td class="num p">0.0000</td></tr></table>', "p-value cell"),
        ('<table><tr><td class="num p"> </td></tr></table>', "p-value cell"),
        ('<table><tr><td class="num"></td></tr></table>', "blank number cell"),
        ('<svg><circle cx="NaN" cy="1"/></svg>', "NaN"),
        (
            '<svg><polyline data-series="rank order"/><text class="legend">rank order</text>'
            '<text class="legend">Move-to-Front</text></svg>',
            "not drawn",
        ),
    ],
)
def test_the_wording_check_finds_what_breaks_the_rule(html: str, problem: str) -> None:
    found = wording_problems(html)
    assert found and problem in " ".join(found)


def test_the_wording_check_accepts_what_says_of_what() -> None:
    html = (
        "<p>7.0% of the run's own score; 95% CI [0.1, 0.2]; 95% bootstrap confidence intervals"
        '</p><table><tr><td class="num"><span class="pct" title="% of the relevant documents">'
        '25.0%</span></td><td class="num p">&lt; 0.0001</td><td class="num p">not enough data'
        '</td></tr></table><svg><polyline data-series="R@k"/><text class="legend">R@k</text></svg>'
    )
    assert wording_problems(html) == []


def test_the_reusability_basis_says_of_what_its_percentages_are(demo: Campaign) -> None:
    html = client_for("researcher").get(f"/campaigns/{demo.pk}/bias/").content.decode()
    assert 'id="verdict-basis"' in html
    assert wording_problems(html) == []
