"""The significance matrix, the baseline view and their downloads (page and API): the numbers
are metrics.stats' (compare_runs, paired_test, adjust, tukey_hsd, compare_to_baseline) on the
stored per-query values; bad parameters are 400s naming them; annotators and anonymous users
are refused; other researchers' runs are never named; the cap on runs holds and says so."""

from __future__ import annotations

import csv
import io
import re
from typing import Any

import numpy as np
import pytest
from django.test import Client

from judging.campaigns.models import Topic
from judging.evaluation.models import Evaluation
from judging.workflows.qrels import qrels_imported
from judging.workflows.runs import run_submitted
from metrics.stats.multiple import adjust
from metrics.stats.paired import compare_runs, compare_to_baseline, effect_size, paired_test
from metrics.stats.tukey import tukey_hsd
from tests.knobs import set_knobs

pytestmark = pytest.mark.django_db

TOPICS = [str(q) for q in range(401, 415)]  # 14 topics: randomization is Monte Carlo (2^14 > 10^4)
# (tag, owner, how strongly the run ranks relevant documents first)
RUNS = [
    ("strong", "researcher", 3.0),
    ("good", "researcher", 2.0),
    ("fair", "other", 1.2),
    ("weak", "other", 0.4),
    ("random", "researcher", 0.0),
]
OTHERS = ("fair", "weak")


def ranking(rng: np.random.Generator, quality: float) -> dict[str, float]:
    docs = [f"R{i}" for i in range(5)] + [f"N{i}" for i in range(10)]
    keys = {d: rng.normal() + (quality if d.startswith("R") else 0.0) for d in docs}
    order = sorted(docs, key=lambda d: -keys[d])
    return {d: float(len(order) - i) for i, d in enumerate(order)}


@pytest.fixture
def five(campaign: Any, researcher: Any, other_researcher: Any, as_committed: Any) -> Any:
    for qid in TOPICS:
        Topic.objects.get_or_create(campaign=campaign, qid=qid, defaults={"title": f"t {qid}"})
    rng = np.random.default_rng(42)
    owners = {"researcher": researcher, "other": other_researcher}
    for tag, owner, quality in RUNS:
        results = {q: ranking(rng, quality) for q in TOPICS}
        run_submitted(campaign=campaign, owner=owners[owner], tag=tag, results=results)
    qrels = "".join(
        f"{q} 0 {d} {g}\n"
        for q in TOPICS
        for d, g in [(f"R{i}", 1 + i % 2) for i in range(5)] + [(f"N{i}", 0) for i in range(10)]
    )
    with as_committed():
        qrels_imported(campaign=campaign, data=qrels.encode())
    return campaign


def stored(campaign: Any, measure: str = "AP") -> dict[str, dict[str, float]]:
    """Per-query values by tag, read from the stored evaluations directly."""
    return {
        e.run.tag: {q: float(v) for q, v in e.result["per_query"][measure].items()}
        for e in Evaluation.objects.filter(run__campaign=campaign, mode="honest").select_related(
            "run"
        )
    }


def api(api_client_for: Any, user: Any, campaign: Any, query: str) -> Any:
    """The API's answer; on AP unless the query names a measure (the default is R@50, 1.0 for
    every run here)."""
    query = query if "measure=" in query else f"measure=AP&{query}"
    return api_client_for(user).get(f"/api/v1/campaigns/{campaign.pk}/significance/?{query}")


def page(user: Any, campaign: Any, query: str = "") -> Any:
    client = Client()
    client.force_login(user)
    query = query if "measure=" in query else f"measure=AP&{query}"
    return client.get(f"/campaigns/{campaign.pk}/compare/?{query}")


def pair_map(rows: list[dict[str, Any]]) -> dict[frozenset[str], dict[str, Any]]:
    return {frozenset((r["run_a"], r["run_b"])): r for r in rows}


@pytest.mark.parametrize("test", ["t", "randomization", "bootstrap"])
def test_the_pairs_equal_compare_runs_holm(
    five: Any, api_client_for: Any, admin_user: Any, test: str
) -> None:
    body = api(api_client_for, admin_user, five, f"measure=AP&test={test}").json()
    values = stored(five)
    expected = pair_map(
        [c.__dict__ for c in compare_runs(values, test=test, queries=sorted(TOPICS))]
    )
    got = pair_map(body["comparisons"])
    assert len(got) == 10 and got.keys() == expected.keys()
    assert body["correction"] == "holm" and body["test"] == test and body["n_queries"] == 14
    for key, row in got.items():
        ref = expected[key]
        sign = 1.0 if ref["run_a"] == row["run_a"] else -1.0
        assert row["diff"] == pytest.approx(sign * ref["diff"], abs=1e-12)
        assert row["p_value"] == pytest.approx(ref["p_value"], rel=1e-9, abs=1e-15)
        assert row["p_holm"] == pytest.approx(ref["p_holm"], rel=1e-9, abs=1e-15)
        assert row["significant"] == ref["significant"]
        assert row["effect"] == pytest.approx(
            effect_size(list(values[row["run_a"]].values()), list(values[row["run_b"]].values()))
        )
    assert any(r["significant"] for r in got.values())  # the fixture has real differences


@pytest.mark.parametrize("correction", ["bonferroni", "bh", "none"])
def test_every_correction_adjusts_the_raw_p_values_over_all_pairs(
    five: Any, api_client_for: Any, admin_user: Any, correction: str
) -> None:
    body = api(api_client_for, admin_user, five, f"view=matrix&correction={correction}").json()
    names = {"bonferroni": "Bonferroni", "bh": "Benjamini-Hochberg", "none": "none"}
    assert body["correction"] == correction and names[correction] in body["correction_name"]
    values = stored(five)
    runs = [r["run"] for r in body["runs"]]
    raw, pairs = [], []
    for i in range(len(runs)):
        for j in range(i + 1, len(runs)):
            a = [values[runs[i]][q] for q in TOPICS]
            b = [values[runs[j]][q] for q in TOPICS]
            raw.append(paired_test(a, b, test="t").p_value)
            pairs.append((i, j))
    expected = adjust(raw, correction)
    for (i, j), p, pa in zip(pairs, raw, expected, strict=True):
        cell = body["cells"][i][j]
        assert cell["p"] == pytest.approx(p, rel=1e-9, abs=1e-15)
        assert cell["p_adjusted"] == pytest.approx(pa, rel=1e-9, abs=1e-15)
        assert cell["significant"] == (pa <= 0.05)
        mirror = body["cells"][j][i]
        assert mirror["diff"] == -cell["diff"] and mirror["p_adjusted"] == cell["p_adjusted"]
    assert all(body["cells"][k][k] is None for k in range(len(runs)))
    means = [r["mean"] for r in body["runs"]]
    assert means == sorted(means, reverse=True)  # best first


def test_tukey_is_its_own_correction(five: Any, api_client_for: Any, admin_user: Any) -> None:
    body = api(api_client_for, admin_user, five, "test=tukey&correction=bonferroni").json()
    assert body["test"] == "tukey" and body["correction"] == "tukey"
    assert body["correction_name"] == "Tukey HSD (itself a multiple comparison procedure)"
    expected = pair_map([c.__dict__ for c in tukey_hsd(stored(five), queries=sorted(TOPICS))])
    for key, row in pair_map(body["comparisons"]).items():
        assert row["p_value"] == pytest.approx(expected[key]["p_value"], abs=1e-12)
        assert row["p_adjusted"] == row["p_value"] and "p_holm" not in row


def test_the_baseline_view_equals_compare_to_baseline(
    five: Any, api_client_for: Any, admin_user: Any
) -> None:
    body = api(api_client_for, admin_user, five, "baseline=random&test=t&correction=holm").json()
    expected = {
        c.run: c
        for c in compare_to_baseline(stored(five), "random", test="t", queries=sorted(TOPICS))
    }
    assert body["baseline"] == "random" and body["correction"] == "holm"
    assert {r["run"] for r in body["rows"]} == set(expected) == {"strong", "good", "fair", "weak"}
    for row in body["rows"]:
        ref = expected[row["run"]]
        assert row["diff"] == pytest.approx(ref.diff, abs=1e-12)
        assert (row["ci_low"], row["ci_high"]) == pytest.approx((ref.ci_low, ref.ci_high))
        assert row["p_value"] == pytest.approx(ref.p_value, abs=1e-15)
        assert row["p_adjusted"] == pytest.approx(ref.p_adjusted, abs=1e-15)
        assert (row["wins"], row["ties"], row["losses"]) == (ref.wins, ref.ties, ref.losses)
        assert row["significant"] == ref.significant
    csv_text = api(api_client_for, admin_user, five, "baseline=random&format=csv").getvalue()
    lines = list(csv.DictReader(io.StringIO(csv_text.decode())))
    assert len(lines) == 4 and {line["baseline"] for line in lines} == {"random"}
    assert {line["qrels_version"] for line in lines} == {"1"} and lines[0]["qrels_hash"]


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("test=magic", "test"),
        ("correction=sidak", "correction"),
        ("test=t&correction=tukey", "correction"),
        ("measure=P@20", "measure"),
        ("runs=nosuchrun", "runs"),
        ("top=three", "top"),
        ("top=1", "top"),
        ("baseline=nosuchrun", "baseline"),
        ("baseline=strong&test=tukey", "test"),
        ("view=grid", "view"),
        ("view=baseline", "baseline"),
        ("format=xml", "format"),
    ],
)
def test_bad_parameters_are_400s_naming_them(
    five: Any, api_client_for: Any, admin_user: Any, query: str, field: str
) -> None:
    r = api(api_client_for, admin_user, five, query)
    assert r.status_code == 400, (query, r.content)
    assert field in [p.get("location") for p in r.json()["problems"]], r.json()
    if "view=" not in query:  # the page has no view parameter: a baseline chooses
        shown = page(admin_user, five, query)
        assert shown.status_code == 400, query
        assert 'id="filter-error"' in shown.content.decode()


def test_annotators_are_refused_and_anonymous_users_sent_to_log_in(
    five: Any, api_client_for: Any, annotator: Any
) -> None:
    assert page(annotator, five).status_code == 403
    assert page(annotator, five, "format=csv").status_code == 403
    assert api(api_client_for, annotator, five, "view=matrix").status_code == 403
    anonymous = Client().get(f"/campaigns/{five.pk}/compare/?format=csv")
    assert anonymous.status_code == 302 and "/login/" in anonymous["Location"]
    assert Client().get(f"/api/v1/campaigns/{five.pk}/significance/").status_code in (401, 403)


def test_other_researchers_runs_are_never_named(
    five: Any, api_client_for: Any, researcher: Any
) -> None:
    answers = [
        page(researcher, five).content.decode(),
        page(researcher, five, "test=tukey").content.decode(),
        page(researcher, five, "format=csv").getvalue().decode(),
        page(researcher, five, "baseline=random").content.decode(),
        page(researcher, five, "baseline=random&format=csv").getvalue().decode(),
    ]
    for query in ("", "view=matrix", "view=pairs&format=csv", "baseline=random"):
        answers.append(api(api_client_for, researcher, five, query).getvalue().decode())
    others = five.runs.filter(tag__in=OTHERS)
    for text in answers:
        for run in others:
            assert not re.search(rf"\b{run.tag}\b", text), run.tag
            assert run.name not in text or run.name.startswith("anonymous")
        assert "strong" in text  # the researcher's own runs by name
        assert "anonymous run #" in text
    # another researcher's run can be a baseline or chosen, under its label only
    label = f"anonymous run #{others[0].pk}"
    r = api(api_client_for, researcher, five, f"baseline={label}")
    assert r.status_code == 200 and r.json()["baseline"] == label
    assert api(api_client_for, researcher, five, f"runs={others[0].tag}").status_code == 400


def test_the_resampling_tests_are_capped_and_the_page_says_which_runs(
    five: Any, api_client_for: Any, admin_user: Any, settings: Any
) -> None:
    set_knobs(settings, significance_max_runs=3)
    body = api(api_client_for, admin_user, five, "test=randomization&view=matrix").json()
    assert [r["run"] for r in body["runs"]] == ["strong", "good", "fair"]  # best 3 by AP
    assert body["selection"]["how"] == "top" and body["selection"]["cap"] == 3
    assert "best 3 of 5" in body["selection"]["text"]
    assert "POOLJUDGE_SIGNIFICANCE_MAX_RUNS" in body["selection"]["text"]
    html = page(admin_user, five, "test=randomization").content.decode()
    assert "In the matrix, best first: the best 3 of 5 evaluated runs by mean AP" in html
    too_many = api(api_client_for, admin_user, five, "test=bootstrap&runs=strong,good,fair,weak")
    assert too_many.status_code == 400 and "runs" in too_many.content.decode()
    # the t-test is not capped at 3: all five, and the choice of runs is honoured
    assert len(api(api_client_for, admin_user, five, "view=matrix").json()["runs"]) == 5
    chosen = api(api_client_for, admin_user, five, "view=matrix&runs=weak&runs=good").json()
    assert [r["run"] for r in chosen["runs"]] == ["good", "weak"]
    assert chosen["selection"] == {**chosen["selection"], "how": "given"}
    top = api(api_client_for, admin_user, five, "view=matrix&top=2").json()
    assert [r["run"] for r in top["runs"]] == ["strong", "good"]


def test_the_matrix_page_states_the_test_correction_and_qrels_and_colours_cells(
    five: Any, admin_user: Any
) -> None:
    html = page(admin_user, five, "measure=AP&test=t&correction=bh").content.decode()
    method = re.search(r'id="significance-method">(.*?)</p>', html, re.S)
    assert method is not None
    sentence = re.sub(r"<[^>]+>", "", method.group(1))
    assert "qrels version 1" in sentence and "over 14 topics" in sentence
    assert "paired t-test" in sentence and "Benjamini-Hochberg" in sentence
    assert "macro" in sentence and "0.05" in sentence
    cells = [
        (c, t)
        for c, t in re.findall(r'<td class="(sig-[\w-]+)" title="([^"]*)"', html)
        if c != "sig-diag"
    ]
    assert len(cells) == 5 * 4
    assert any(c.startswith("sig-up-") for c, _ in cells)
    assert any(c.startswith("sig-down-") for c, _ in cells)
    assert all("p adjusted" in t and "effect d_z" in t for _, t in cells)
    assert 'id="significance-legend"' in html
    assert "▲" in html and "▼" in html


def test_the_pair_list_downloads_as_csv_with_every_pair(five: Any, admin_user: Any) -> None:
    r = page(admin_user, five, "measure=AP&test=t&correction=holm&format=csv")
    assert r["Content-Type"].startswith("text/csv") and "attachment" in r["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(r.getvalue().decode())))
    assert len(rows) == 10
    assert set(rows[0]) >= {
        "run_a",
        "run_b",
        "mean_a",
        "mean_b",
        "diff",
        "effect_dz",
        "p_value",
        "p_adjusted",
        "significant",
        "test",
        "correction",
        "qrels_version",
        "qrels_hash",
    }
    assert {(x["test"], x["correction"], x["qrels_version"]) for x in rows} == {("t", "holm", "1")}


def test_the_baseline_page_shows_one_row_per_run(five: Any, admin_user: Any) -> None:
    html = page(admin_user, five, "baseline=random&correction=bonferroni").content.decode()
    table = re.search(r'<table class="grid" id="baseline-table">(.*?)</table>', html, re.S)
    assert table is not None
    assert table.group(1).count("<tr>") == 1 + 4  # header and the four other runs
    assert "Bonferroni" in html and "baseline <strong>random</strong>" in html


def test_the_page_offers_no_coverage_figure_to_test_and_defaults_to_a_measure(
    five: Any, admin_user: Any
) -> None:
    # Judged@10 says how much of a ranking is judged, not how good it is: it is not offered
    five.measures = ["Judged@10", "P@10", "AP"]
    five.save(update_fields=["measures"])
    client = Client()
    client.force_login(admin_user)
    html = client.get(f"/campaigns/{five.pk}/compare/").content.decode()
    picker = re.search(r'<select name="measure">(.*?)</select>', html, re.S)
    assert picker is not None
    assert re.findall(r"<option[^>]*>([^<]+)</option>", picker.group(1)) == ["P@10", "AP"]
    method = re.search(r'id="significance-method">(.*?)</p>', html, re.S)
    assert method is not None and method.group(1).startswith("P@10 against")
