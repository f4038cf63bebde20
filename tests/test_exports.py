"""Exports for a paper (issue 16 point 5): the leaderboard as CSV, LaTeX (booktabs) and Markdown
with significance markers against a baseline exactly where the adjusted p is <= 0.05, per-query
values as CSV and trec_eval -q lines equal to the stored values; the qrels version and hash in
every file; other researchers' runs never named."""

from __future__ import annotations

import csv
import io
from typing import Any

import pytest
from django.test import Client

from judging.campaigns.models import Topic
from judging.evaluation import exports
from judging.evaluation.models import Evaluation
from judging.workflows.qrels import qrels_imported
from judging.workflows.runs import run_submitted
from metrics.stats.paired import BaselineComparison, compare_to_baseline
from tests.knobs import set_knobs

QIDS = [str(q) for q in range(401, 421)]
RELEVANT = {"d0", "d3", "d6"}
QRELS = "".join(f"{q} 0 d{d} {1 if f'd{d}' in RELEVANT else 0}\n" for q in QIDS for d in range(10))


def ranking(order: list[int]) -> dict[str, float]:
    return {f"d{d}": 10.0 - i for i, d in enumerate(order)}


def runs() -> dict[str, dict[str, dict[str, float]]]:
    strong = {q: ranking([0, 3, 6, 1, 2, 4, 5, 7, 8, 9]) for q in QIDS}
    # the baseline finds the relevant documents at varying depth
    base = {q: ranking([(n + i) % 10 for i in range(10)]) for n, q in enumerate(QIDS)}
    near = {q: ranking([(n + 1 + i) % 10 for i in range(10)]) for n, q in enumerate(QIDS)}
    return {"base_run": base, "strong&co": strong, "near_base": near, "same_as_base": dict(base)}


@pytest.fixture
def paper(db: Any, campaign: Any, researcher: Any, other_researcher: Any, as_committed: Any) -> Any:
    for qid in QIDS[3:]:
        Topic.objects.create(campaign=campaign, qid=qid, title=f"topic {qid}")
    Topic.objects.filter(campaign=campaign, qid__in=QIDS[:10]).update(tags=["first_half"])
    for tag, results in runs().items():
        run_submitted(campaign=campaign, owner=researcher, tag=tag, results=results, pooled=True)
    run_submitted(
        campaign=campaign,
        owner=other_researcher,
        tag="theirs_secret",
        group="hidden-lab",
        results=runs()["near_base"],
        pooled=False,
    )
    with as_committed():
        qrels_imported(campaign=campaign, data=QRELS.encode())
    return campaign


def stored(campaign: Any, measure: str) -> dict[str, dict[str, float]]:
    return {
        e.run.tag: {q: float(v) for q, v in e.result["per_query"][measure].items()}
        for e in Evaluation.objects.filter(run__campaign=campaign, job__state="done", mode="honest")
    }


def get(user: Any, url: str) -> Any:
    client = Client()
    client.force_login(user)
    return client.get(url)


pytestmark = pytest.mark.django_db


def test_latex_is_booktabs_with_escaped_names_the_hash_and_markers_where_p_is_small(
    paper: Any, api_client_for: Any, admin_user: Any
) -> None:
    version = paper.qrels_versions.get()
    r = api_client_for(admin_user).get(
        f"/api/v1/campaigns/{paper.pk}/leaderboard/export/"
        "?format=latex&baseline=base_run&test=t&correction=holm&measures=AP,nDCG@5"
    )
    assert r.status_code == 200 and r["Content-Type"].startswith("text/x-tex")
    assert f"qrels-v{version.number}.tex" in r["Content-Disposition"]
    tex = r.content.decode()
    assert f"% qrels version {version.number} (human), hash {version.content_hash}" in tex
    for command in (r"\toprule", r"\midrule", r"\bottomrule", r"\begin{tabular}{lrr}"):
        assert command in tex
    assert r"strong\&co" in tex and r"base\_run (baseline)" in tex
    assert "strong&co" not in tex.replace(r"strong\&co", "")
    assert r"\caption{qrels version 1" in tex and "honest mode, macro-averaged" in tex
    assert "paired t-test" in tex and "Holm correction" in tex and "0.05" in tex
    # a marker exactly where compare_to_baseline's adjusted p <= 0.05, per measure
    lines = {ln.split(" & ")[0].split(" (")[0]: ln for ln in tex.splitlines() if " & " in ln}
    for col, measure in enumerate(["AP", "nDCG@5"], start=1):
        values = stored(paper, measure)
        from judging.evaluation.selectors import common_queries

        comparisons = compare_to_baseline(
            values, "base_run", test="t", correction="holm", queries=common_queries(values)
        )
        significant = {c.run for c in comparisons if c.p_adjusted <= 0.05}
        assert "strong&co" in significant and "same_as_base" not in significant
        for c in comparisons:
            cell = lines[exports.latex_escape(c.run)].split(" & ")[col]
            assert (r"\textsuperscript{\dag}" in cell) == (c.run in significant), (c, cell)
    # the best value per measure is bold
    assert lines[r"strong\&co"].split(" & ")[1].startswith(r"\textbf{")


def test_markdown_is_a_pipe_table_with_notes(
    paper: Any, api_client_for: Any, admin_user: Any
) -> None:
    r = api_client_for(admin_user).get(
        f"/api/v1/campaigns/{paper.pk}/leaderboard/export/"
        "?format=markdown&baseline=base_run&test=randomization&correction=bh&cis=0"
    )
    assert r["Content-Type"].startswith("text/markdown")
    text = r.content.decode()
    table = [ln for ln in text.splitlines() if ln.startswith("|")]
    header, rule, *rows = table
    n = len(paper.measures) + 1
    assert header.count("|") == n + 1 and rule.count("|") == n + 1 and rule.startswith("|:---|")
    assert len(rows) == 5 and all(row.count("|") - row.count("\\|") == n + 1 for row in rows)
    assert r"strong&co" in text and r"base\_run (baseline)" in text
    assert "[" not in "".join(rows)  # cis=0: no intervals
    assert "paired randomization test" in text and "Benjamini-Hochberg" in text
    assert paper.qrels_versions.get().content_hash in text
    assert "†" in text


def test_the_csv_export_has_version_hash_and_significance_columns(
    paper: Any, api_client_for: Any, admin_user: Any
) -> None:
    r = api_client_for(admin_user).get(
        f"/api/v1/campaigns/{paper.pk}/leaderboard/export/?baseline=base_run&measures=AP"
    )
    assert r["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(r.getvalue().decode())))
    version = paper.qrels_versions.get()
    assert {row["qrels_version"] for row in rows} == {str(version.number)}
    assert {row["qrels_hash"] for row in rows} == {version.content_hash}
    assert set(rows[0]) >= {"AP", "AP ci_low", "AP p_adjusted", "AP significant", "baseline"}
    by_run = {row["run"]: row for row in rows}
    assert by_run["base_run"]["AP significant"] == "baseline"
    assert by_run["strong&co"]["AP significant"] == "True"
    assert by_run["same_as_base"]["AP significant"] == "False"


def test_per_query_csv_equals_the_stored_values(
    paper: Any, api_client_for: Any, admin_user: Any
) -> None:
    r = api_client_for(admin_user).get(f"/api/v1/campaigns/{paper.pk}/per-query/?format=csv")
    assert r["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(r.getvalue().decode())))
    assert list(rows[0]) == [
        "qrels_version",
        "qrels_kind",
        "qrels_hash",
        "run",
        "qid",
        "measure",
        "value",
    ]
    assert {row["qrels_kind"] for row in rows} == {"human"}
    got: dict[tuple[str, str, str], float] = {
        (row["run"], row["measure"], row["qid"]): float(row["value"]) for row in rows
    }
    expected = {
        (tag, m, q): v
        for m in paper.measures
        for tag, values in stored(paper, m).items()
        for q, v in values.items()
    }
    assert got == expected


def test_per_query_trec_format_parses_back_to_the_stored_values(
    paper: Any, api_client_for: Any, admin_user: Any
) -> None:
    version = paper.qrels_versions.get()
    r = api_client_for(admin_user).get(
        f"/api/v1/campaigns/{paper.pk}/per-query/?format=trec&run=strong%26co&run=base_run"
    )
    assert r["Content-Type"].startswith("text/plain")
    text = r.getvalue().decode()
    lines = text.splitlines()
    assert lines[0].startswith("runid") and lines[0].endswith("\tall\tbase_run")
    assert lines[1].split() == ["qrels_version", "all", str(version.number)]
    assert lines[2].split() == ["qrels_kind", "all", "human"]
    assert lines[3].split() == ["qrels_hash", "all", version.content_hash]
    assert all(
        len(ln.split("\t")[0]) == 22 for ln in lines
    )  # padded as metrics/cli/evaluate.py does
    parsed = exports.read_trec_q(lines)
    assert list(parsed) == ["base_run", "strong&co"]  # the board's order
    for m in paper.measures:
        values = stored(paper, m)
        for tag in ("base_run", "strong&co"):
            back = parsed[tag][exports.trec_name(m)]
            assert back == pytest.approx(values[tag], abs=5e-5)
    assert "ndcg_cut_5" in parsed["base_run"] and "map" in parsed["base_run"]


def test_exports_never_name_another_researchers_run_or_group(
    paper: Any, api_client_for: Any, researcher: Any
) -> None:
    api = api_client_for(researcher)
    for url in (
        f"/api/v1/campaigns/{paper.pk}/leaderboard/export/?format=latex&baseline=base_run",
        f"/api/v1/campaigns/{paper.pk}/leaderboard/export/?format=markdown",
        f"/api/v1/campaigns/{paper.pk}/leaderboard/export/?format=csv&baseline=base_run",
        f"/api/v1/campaigns/{paper.pk}/per-query/?format=csv",
        f"/api/v1/campaigns/{paper.pk}/per-query/?format=trec",
    ):
        r = api.get(url)
        assert r.status_code == 200, url
        body = r.getvalue().decode()
        assert "theirs_secret" not in body and "hidden-lab" not in body
        assert "anonymous run" in body
    hidden = api.get(f"/api/v1/campaigns/{paper.pk}/per-query/?run=theirs_secret")
    assert hidden.status_code == 400 and "theirs_secret" in hidden.json()["detail"]  # echoed only
    grouped = api.get(f"/api/v1/campaigns/{paper.pk}/leaderboard/export/?group=hidden-lab")
    assert grouped.status_code == 400


@pytest.mark.parametrize(
    ("query", "param"),
    [
        ("format=docx", "format"),
        ("test=z", "test"),
        ("correction=sidak", "correction"),
        ("cis=maybe", "cis"),
        ("baseline=nope", "baseline"),
        ("sort=nope", "sort"),
    ],
)
def test_bad_export_parameters_are_400_in_the_api_and_a_message_on_the_page(
    paper: Any, api_client_for: Any, admin_user: Any, query: str, param: str
) -> None:
    r = api_client_for(admin_user).get(f"/api/v1/campaigns/{paper.pk}/leaderboard/export/?{query}")
    assert r.status_code == 400 and r.json()["problems"][0]["location"] == param
    client = Client()
    client.force_login(admin_user)
    page = client.get(f"/campaigns/{paper.pk}/leaderboard/export/?{query}", follow=True)
    assert page.status_code in (200, 400)
    assert f"{param}:" in page.content.decode()


def test_the_page_downloads_follow_the_view(paper: Any, admin_user: Any) -> None:
    r = get(
        admin_user,
        f"/campaigns/{paper.pk}/leaderboard/export/?format=markdown&pooled=no&sort=run",
    )
    assert r.status_code == 200 and r["Content-Type"].startswith("text/markdown")
    assert "leaderboard-campaign" in r["Content-Disposition"]
    assert r"theirs\_secret" in r.content.decode() and "base" not in r.content.decode()
    assert "not pooled runs only" in r.content.decode()
    pq = get(admin_user, f"/campaigns/{paper.pk}/per-query/?format=trec&slice=first_half")
    parsed = exports.read_trec_q(pq.getvalue().decode().splitlines())
    assert set(parsed["base_run"]["map"]) == set(QIDS[:10])  # the slice's topics only
    assert "per-query-campaign" in pq["Content-Disposition"]
    assert "qrels-v1.txt" in pq["Content-Disposition"]


def test_latex_escape_and_the_pure_formatters() -> None:
    assert exports.latex_escape(r"a_b&c%d#e$f{g}~h^i\j") == (
        r"a\_b\&c\%d\#e\$f\{g\}\textasciitilde{}h\textasciicircum{}i\textbackslash{}j"
    )
    board = {
        "campaign": 1,
        "qrels_version": 3,
        "qrels_hash": "abc123",
        "mode": "honest",
        "measures": ["AP"],
        "slice": None,
        "view": "sorted by AP descending · all 2 runs",
        "runs": [
            {
                "run": "x|y",
                "pooled": True,
                "measures": {"AP": {"value": 0.5, "ci_low": 0.4, "ci_high": 0.6}},
            },
            {"run": "b", "pooled": True, "measures": {"AP": {"value": 0.25}}},
        ],
    }
    c = BaselineComparison(
        run="x|y", baseline="b", mean_run=0.5, mean_baseline=0.25, diff=0.25, ci_low=0.1,
        ci_high=0.4, effect=1.0, p_value=0.01, p_adjusted=0.05, test="t", correction="holm",
        n=10, wins=8, ties=1, losses=1, significant=True,
    )  # fmt: skip
    options = exports.ExportOptions(format="markdown", baseline="b")
    md = exports.leaderboard_markdown(board, options, {"AP": {"x|y": c}})
    assert r"| x\|y | **0.500** † [0.400, 0.600] |" in md
    assert "| b (baseline) | 0.250 |" in md
    tex = exports.leaderboard_latex(board, options, {"AP": {"x|y": c}})
    assert (
        r"x\textbar{}y & \textbf{0.500}\textsuperscript{\dag} {\scriptsize [0.400, 0.600]} \\"
        in tex
    )
    assert "% qrels version 3 (human), hash abc123" in tex


def test_the_export_limits_are_settings_and_a_400_naming_the_parameter(
    paper: Any, api_client_for: Any, admin_user: Any, settings: Any
) -> None:
    api = api_client_for(admin_user)
    base = f"/api/v1/campaigns/{paper.pk}"
    set_knobs(settings, export_max_comparisons=8)  # 4 runs against the baseline x 2 measures
    assert (
        api.get(f"{base}/leaderboard/export/?baseline=base_run&measures=AP,P@10").status_code == 200
    )
    r = api.get(f"{base}/leaderboard/export/?baseline=base_run&measures=AP,P@10,RR@10")
    assert r.status_code == 400 and r.json()["problems"][0]["location"] == "baseline"
    assert "POOLJUDGE_EXPORT_MAX_COMPARISONS" in r.json()["problems"][0]["message"]
    set_knobs(settings, export_max_runs=2)
    assert api.get(f"{base}/per-query/?run=base_run&run=near_base").status_code == 200
    r = api.get(f"{base}/per-query/")
    assert r.status_code == 400 and r.json()["problems"][0]["location"] == "run"
    # significance is on honest per-query values: not offered on a trec_eval board
    r = api.get(f"{base}/leaderboard/export/?baseline=base_run&mode=trec_eval")
    assert r.status_code in (400,) and r.json()["problems"][0]["location"] == "baseline"
    assert api.get(f"{base}/per-query/?mode=trec_eval").status_code == 400
