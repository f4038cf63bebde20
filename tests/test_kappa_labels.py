"""Each kappa on the admin pages says which kappa it is (issue 29, point 11): the Agreement
page's pairs are Cohen's linear-weighted kappa, the Quality page's "vs others" is Cohen's
unweighted kappa; one pair of assessors shows both, worked by hand, each beside its label."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

from judging.assessments.models import Judgment
from judging.campaigns.models import Campaign

pytestmark = pytest.mark.django_db

# two assessors on four items of the 0-2 scale: 0/0, 1/2, 2/2, 2/1
GRADES_A = [0, 1, 2, 2]
GRADES_B = [0, 2, 2, 1]
# unweighted: p_o = 2/4; both margins (1/4, 1/4, 2/4): p_e = 6/16; (1/2 - 3/8) / (5/8) = 0.2
UNWEIGHTED = "0.200"
# linear weights |i - j| / 2: observed disagreement 2 * (1/2 * 1/4) = 1/4, expected 7/16;
# 1 - (1/4) / (7/16) = 3/7
LINEAR = "0.429"


@pytest.fixture
def two_assessors(campaign: Campaign, make_user: Callable[..., Any]) -> list[Any]:
    people = [make_user(name, "annotator") for name in ("kappa-a", "kappa-b")]
    topic = campaign.topics.get(qid="401")
    for i, grades in enumerate(zip(GRADES_A, GRADES_B, strict=True)):
        for who, grade in zip(people, grades, strict=True):
            Judgment.objects.create(
                campaign=campaign, topic=topic, docid=f"d{i}", annotator=who, grade=grade
            )
    return people


def _page(user: Any, url: str) -> str:
    client = Client()
    client.force_login(user)
    response = client.get(url)
    assert response.status_code == 200, response.status_code
    return str(response.content.decode())


def _cells(html: str, table_id: str) -> tuple[list[str], list[list[str]]]:
    """A table's header cells and body rows, as text."""
    table = re.search(rf'<table[^>]*id="{table_id}".*?</table>', html, re.S)
    assert table is not None, f"no table {table_id}"

    def text(cell: str) -> str:
        return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", cell)).strip()

    head = [text(c) for c in re.findall(r"<th[^>]*>(.*?)</th>", table.group(0), re.S)]
    body = re.search(r"<tbody>(.*?)</tbody>", table.group(0), re.S)
    assert body is not None
    rows = [
        [text(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
        for row in re.findall(r"<tr[^>]*>(.*?)</tr>", body.group(1), re.S)
    ]
    return head, rows


def test_the_agreement_page_labels_its_pair_kappa_linear_weighted(
    campaign: Campaign, two_assessors: list[Any], admin_user: Any
) -> None:
    html = _page(admin_user, f"/manage/{campaign.pk}/agreement/")
    head, rows = _cells(html, "pairs")
    column = head.index("Cohen's kappa (linear-weighted)")
    assert [row[column] for row in rows] == [LINEAR]


def test_the_quality_page_labels_its_kappa_vs_others_unweighted(
    campaign: Campaign, two_assessors: list[Any], admin_user: Any
) -> None:
    html = _page(admin_user, f"/manage/{campaign.pk}/quality/")
    head, rows = _cells(html, "assessors")
    column = next(i for i, h in enumerate(head) if h.startswith("Cohen's kappa (unweighted)"))
    assert [row[column].split()[0] for row in rows] == [UNWEIGHTED, UNWEIGHTED]
    assert LINEAR not in html
