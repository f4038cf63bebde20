"""CSV formula injection (issue 29, point 19): no CSV the service writes lets a spreadsheet run
a formula from stored text. A run tag ``=HYPERLINK("http://evil.example","x")`` (or a topic id
starting with ``@``) reaches every CSV download as text with a leading single quote (OWASP's
rule for cells starting with = + - @ tab or CR); every text cell is quoted, every unquoted cell
is a number, so a negative difference stays a number.

The CSV endpoints are listed here (``CSV_ENDPOINTS``) and the list is checked twice: every URL
pattern of the URL conf is asked (as an admin, with the queries of the authorization matrix and
with ``format=csv``) and the ones answering ``text/csv`` must be exactly the list's; and no
module of ``judging/`` but the one writer imports ``csv``, so a new CSV cannot skip it."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from django.db import transaction
from django.test import Client
from django.urls import reverse

from judging.campaigns.models import Topic
from judging.core import csvfiles
from judging.workflows.qrels import qrels_imported
from judging.workflows.runs import run_submitted
from tests import authz_dataset
from tests.authz_matrix import MATRIX, ROUTES
from tests.test_authorization_matrix import (  # noqa: F401  (dataset: the matrix's fixture)
    _content,
    _urls,
    dataset,
    url_patterns,
)

# (URL name, query): every CSV the service answers; {baseline} is a run label
CSV_ENDPOINTS = [
    ("api-leaderboard", "format=csv"),
    ("api-leaderboard-export", "format=csv&baseline={baseline}"),
    ("api-per-query", "format=csv"),
    ("api-significance", "format=csv"),
    ("api-significance", "format=csv&view=matrix"),
    ("api-significance", "format=csv&baseline={baseline}"),
    ("leaderboard", "format=csv"),
    ("leaderboard-export", "format=csv&baseline={baseline}"),
    ("per-query", "format=csv"),
    ("compare", "format=csv"),
    ("compare", "format=csv&baseline={baseline}"),
]

# OWASP's list: a cell starting with one of these is a formula to a spreadsheet
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
EVIL = '=HYPERLINK("http://evil.example","x")'
HOSTILE_TAGS = [EVIL, "+cmd|'/C_calc'!A0", "-2+3+cmd|'/C_calc'!A0", "@SUM(1+1)*cmd|'/C_calc'!A0"]
SEPARATED = "plain;=1+1"  # starts harmlessly, a formula after a semicolon
HOSTILE_QID = "@401"
# columns that hold numbers wherever they appear: written bare, read back as numbers
NUMERIC_COLUMNS = {"qrels_version", "n_queries", "value", "mean", "mean_a", "diff", "p_value"}
QIDS = [HOSTILE_QID, *(str(q) for q in range(402, 414))]


def ranking(order: list[int]) -> dict[str, float]:
    return {f"d{d}": 10.0 - i for i, d in enumerate(order)}


@pytest.fixture
def hostile(db: Any, campaign: Any, researcher: Any, as_committed: Any) -> Any:
    """A campaign whose runs are tagged with formulas and whose first topic id is one."""
    campaign.topics.all().delete()
    for qid in QIDS:
        Topic.objects.create(campaign=campaign, qid=qid, title=f"topic {qid}")
    for n, tag in enumerate(HOSTILE_TAGS):  # rankings rotated by topic and run
        results = {q: ranking([(k + n + i) % 10 for i in range(10)]) for k, q in enumerate(QIDS)}
        run_submitted(campaign=campaign, owner=researcher, tag=tag, results=results, pooled=True)
    best = {q: ranking([0, 3, 6, 9, 1, 2, 4, 5, 7, 8]) for q in QIDS}  # the relevant ones first
    run_submitted(campaign=campaign, owner=researcher, tag=SEPARATED, results=best, pooled=True)
    qrels = "".join(f"{q} 0 d{d} {int(d % 3 == 0)}\n" for q in QIDS for d in range(10))
    with as_committed():
        qrels_imported(campaign=campaign, data=qrels.encode())
    return campaign


def url(name: str, query: str, campaign: Any) -> str:
    kwargs = {key: campaign.pk for key in ROUTES[name].kwargs}
    return f"{reverse(name, kwargs=kwargs)}?{query.format(baseline=quote(EVIL, safe=''))}"


def body(response: Any) -> str:
    return _content(response).decode()


@pytest.mark.parametrize(("name", "query"), CSV_ENDPOINTS)
def test_every_csv_download_neutralises_formulas_and_keeps_numbers(
    hostile: Any, admin_user: Any, api_client_for: Any, name: str, query: str
) -> None:
    if name.startswith("api-"):
        response = api_client_for(admin_user).get(url(name, query, hostile))
    else:
        client = Client()
        client.force_login(admin_user)
        response = client.get(url(name, query, hostile))
    assert response.status_code == 200, body(response)[:300]
    assert response["Content-Type"].startswith("text/csv")
    text = body(response)
    # unquoted cells must read as numbers (QUOTE_NONNUMERIC fails on anything else)
    rows = list(csv.reader(io.StringIO(text), quoting=csv.QUOTE_NONNUMERIC))
    cells = [cell for row in rows for cell in row if isinstance(cell, str)]
    formulas = [c for c in cells if c.startswith(FORMULA_START)]
    assert formulas == [], formulas
    for tag in HOSTILE_TAGS:
        assert f"'{tag}" in cells, (tag, sorted(set(cells))[:20])
    assert f'"{SEPARATED}"' in text  # quoted: a ";" cannot start another cell
    if name.endswith("per-query"):
        assert f"'{HOSTILE_QID}" in cells
    # and numbers are never written as text
    columns = [c for c in rows[0] if c in NUMERIC_COLUMNS]
    assert "qrels_version" in columns
    for column in columns:
        at = rows[0].index(column)
        values = [row[at] for row in rows[1:] if row[at] != ""]
        assert values and all(isinstance(v, float) for v in values), (column, values[:5])


def test_a_negative_difference_stays_a_number(hostile: Any, admin_user: Any) -> None:
    client = Client()
    client.force_login(admin_user)
    text = body(
        client.get(url("compare", f"format=csv&measure=AP&baseline={quote(SEPARATED)}", hostile))
    )
    rows = list(csv.reader(io.StringIO(text), quoting=csv.QUOTE_NONNUMERIC))
    diffs = [row[rows[0].index("diff")] for row in rows[1:]]
    assert any(isinstance(d, float) and d < 0 for d in diffs), diffs


@pytest.mark.parametrize(
    ("value", "written"),
    [
        ("=1+1", "'=1+1"),
        ("+1", "'+1"),
        ("-1", "'-1"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\tx", "'\tx"),
        ("\rx", "'\rx"),
        ("'already", "'already"),
        ("a=b", "a=b"),
        ("", ""),
        (None, ""),
        (True, "True"),
        (-0.25, -0.25),
        (-3, -3),
        (float("-inf"), float("-inf")),
    ],
)
def test_one_cell(value: Any, written: Any) -> None:
    assert csvfiles.cell(value) == written


def test_the_writer_quotes_text_and_leaves_numbers_bare() -> None:
    assert csvfiles.text([["run", "diff"], [EVIL, -0.5], ["-x", 3]]) == (
        '"run","diff"\r\n"\'=HYPERLINK(""http://evil.example"",""x"")",-0.5\r\n"\'-x",3\r\n'
    )


def test_no_module_writes_csv_but_the_one_writer() -> None:
    """A new CSV cannot forget the neutralising: the ``csv`` module is imported in
    ``judging/core/csvfiles.py`` only, and only it sets a ``text/csv`` content type."""
    root = Path(__file__).resolve().parent.parent / "judging"
    writer = root / "core" / "csvfiles.py"
    imports = re.compile(r"^\s*(import csv\b|from csv import)", re.M)
    content_type = re.compile(r"""content_type\s*=\s*["']text/csv""")
    offenders = [
        str(path.relative_to(root))
        for path in root.rglob("*.py")
        if path != writer and (imports.search(t := path.read_text()) or content_type.search(t))
    ]
    assert offenders == []
    assert imports.search(writer.read_text())


def test_the_csv_endpoints_are_exactly_the_listed_ones(
    dataset: authz_dataset.Dataset,  # noqa: F811
    db: None,
) -> None:
    """Every named URL pattern (but the admin site's), asked by an admin with GET with each of
    the matrix's queries and with ``format=csv`` added: the ones answering ``text/csv`` are
    the list's. A new CSV download without an entry in CSV_ENDPOINTS fails here."""
    admin = dataset.users["admin"]
    client = Client(raise_request_exception=False)
    client.force_login(admin)
    answering: set[str] = set()
    for pattern in url_patterns():
        name = pattern.name
        if name is None or name.startswith("admin:") or (name, "GET") not in MATRIX:
            continue
        for address in _urls(pattern, dataset):
            joiner = "&" if "?" in address else "?"
            for asked in (address, f"{address}{joiner}format=csv"):
                with transaction.atomic():
                    response = client.get(asked)
                    _content(response)
                    transaction.set_rollback(True)
                if response.get("Content-Type", "").startswith("text/csv"):
                    answering.add(name)
    assert answering == {name for name, _ in CSV_ENDPOINTS}
