"""The leaderboard's views (issue 16 point 1): sort by any column in both orders (runs without a
value last either way, ties by label), filter by pooled, group and topic slice, choose the
measures; everything from the query string, the same on the page, the API and the CSV; bad
parameters named; other researchers' runs and groups never revealed."""

from __future__ import annotations

import csv
import io
from typing import Any

import pytest
from django.test import Client

from judging.campaigns.models import Topic
from judging.evaluation.board import BoardQuery, board_query
from judging.evaluation.models import Evaluation
from judging.evaluation.selectors import leaderboard
from judging.workflows.qrels import qrels_imported
from judging.workflows.runs import run_submitted

pytestmark = pytest.mark.django_db

QIDS = ("401", "402", "403")
# each run: for every topic a ranking of d0..d9 (a rotation, so the runs score differently)
QRELS = "".join(f"{q} 0 d{d} {1 if d % 3 == 0 else 0}\n" for q in QIDS for d in range(10))


def ranking(shift: int) -> dict[str, dict[str, float]]:
    return {
        q: {f"d{(i + shift + n) % 10}": 10.0 - i for i in range(10)} for n, q in enumerate(QIDS)
    }


@pytest.fixture
def board(
    campaign: Any, researcher: Any, other_researcher: Any, as_committed: Any, admin_user: Any
) -> Any:
    Topic.objects.filter(campaign=campaign, qid__in=["401", "402"]).update(tags=["easy"])
    Topic.objects.filter(campaign=campaign, qid="403").update(tags=["hard"])
    run_submitted(
        campaign=campaign,
        owner=researcher,
        tag="alpha",
        group="mine-a",
        pooled=True,
        results=ranking(0),
    )
    run_submitted(
        campaign=campaign,
        owner=researcher,
        tag="alpha_two",
        group="mine-b",
        pooled=False,
        results=ranking(1),
    )
    run_submitted(
        campaign=campaign,
        owner=other_researcher,
        tag="beta-secret",
        group="secret-team",
        pooled=True,
        results=ranking(2),
    )
    run_submitted(
        campaign=campaign, owner=other_researcher, tag="gamma", pooled=False, results=ranking(5)
    )
    with as_committed():
        qrels_imported(campaign=campaign, data=QRELS.encode())
    # submitted after the qrels, its evaluation never ran (no commit): a run without values
    run_submitted(campaign=campaign, owner=researcher, tag="delta", pooled=True, results=ranking(3))
    return campaign


def api(api_client_for: Any, user: Any, campaign: Any, query: str = "") -> Any:
    return api_client_for(user).get(f"/api/v1/campaigns/{campaign.pk}/leaderboard/?{query}")


def value(row: dict[str, Any], measure: str) -> float | None:
    return ((row.get("measures") or {}).get(measure) or {}).get("value")


def test_the_old_call_still_sorts_by_the_first_measure_best_first(
    board: Any, admin_user: Any
) -> None:
    version = board.qrels_versions.get()
    out = leaderboard(campaign=board, version=version, user=admin_user)
    first = board.measures[0]
    assert out["sorted_by"] == first and out["order"] == "desc"
    values = [value(r, first) for r in out["runs"]]
    assert out["runs"][-1]["run"] == "delta" and values[-1] is None  # no value: last
    scored = [v for v in values if v is not None]
    assert scored == sorted(scored, reverse=True)
    assert out["shown"] == out["total"] == 5
    assert out["view"] == f"sorted by {first} descending · all 5 runs"


@pytest.mark.parametrize("order", ["asc", "desc"])
@pytest.mark.parametrize("measure", ["AP", "nDCG@5", "P@10"])
def test_sorting_by_a_measure_in_both_orders_keeps_runs_without_a_value_last(
    board: Any, api_client_for: Any, admin_user: Any, measure: str, order: str
) -> None:
    out = api(api_client_for, admin_user, board, f"sort={measure}&order={order}").json()
    assert out["sorted_by"] == measure and out["order"] == order
    rows = out["runs"]
    assert rows[-1]["run"] == "delta" and value(rows[-1], measure) is None
    pairs = [(float(value(r, measure) or 0.0), r["run"]) for r in rows[:-1]]
    assert all(value(r, measure) is not None for r in rows[:-1])
    expected = sorted(pairs, key=lambda p: p[1])  # ties by label...
    expected.sort(key=lambda p: p[0], reverse=order == "desc")  # ...in either order
    assert pairs == expected


def test_either_naming_style_sorts_the_same(
    board: Any, api_client_for: Any, admin_user: Any
) -> None:
    a = api(api_client_for, admin_user, board, "sort=nDCG@5").json()
    b = api(api_client_for, admin_user, board, "sort=ndcg_cut_5").json()
    assert b["sorted_by"] == "nDCG@5"
    assert [r["run"] for r in a["runs"]] == [r["run"] for r in b["runs"]]


@pytest.mark.parametrize("order", ["asc", "desc"])
def test_sorting_by_run_pooled_and_group(
    board: Any, api_client_for: Any, admin_user: Any, order: str
) -> None:
    by_run = api(api_client_for, admin_user, board, f"sort=run&order={order}").json()
    names = [r["run"] for r in by_run["runs"]]
    assert names == sorted(names, key=str.casefold, reverse=order == "desc")
    by_pooled = api(api_client_for, admin_user, board, f"sort=pooled&order={order}").json()
    flags = [r["pooled"] for r in by_pooled["runs"]]
    assert flags == sorted(flags, reverse=order == "desc")
    # ties (same pooled state) in label order
    for flag in (True, False):
        same = [r["run"] for r in by_pooled["runs"] if r["pooled"] is flag]
        assert same == sorted(same, key=str.casefold)
    by_group = api(api_client_for, admin_user, board, f"sort=group&order={order}").json()
    groups = [r["group"] for r in by_group["runs"]]
    with_group = [g for g in groups if g]
    assert with_group == sorted(with_group, reverse=order == "desc")
    assert groups[len(with_group) :] == [""] * (len(groups) - len(with_group))  # none: last


def test_the_default_order_is_descending_for_measures_and_ascending_for_run(
    board: Any, api_client_for: Any, admin_user: Any
) -> None:
    assert api(api_client_for, admin_user, board, "sort=AP").json()["order"] == "desc"
    assert api(api_client_for, admin_user, board, "sort=run").json()["order"] == "asc"


@pytest.mark.parametrize("order", ["asc", "desc"])
def test_sorting_by_judged_and_by_ci_width(
    board: Any, api_client_for: Any, admin_user: Any, order: str
) -> None:
    out = api(api_client_for, admin_user, board, f"sort=nDCG@5:judged&order={order}").json()
    assert out["sorted_by"] == "nDCG@5:judged"
    judged = [
        (r.get("measures") or {}).get("nDCG@5", {}).get("judged", {}).get("value")
        for r in out["runs"]
    ]
    assert judged[-1] is None
    assert judged[:-1] == sorted(judged[:-1], reverse=order == "desc")
    assert "Judged@k of nDCG@5" in out["view"]
    ci = api(api_client_for, admin_user, board, f"sort=AP:ci&order={order}").json()
    widths = [
        r["measures"]["AP"]["ci_high"] - r["measures"]["AP"]["ci_low"]
        for r in ci["runs"]
        if r.get("measures")
    ]
    assert widths == sorted(widths, reverse=order == "desc")
    assert ci["runs"][-1]["run"] == "delta"


def test_filter_by_pooled(board: Any, api_client_for: Any, admin_user: Any) -> None:
    yes = api(api_client_for, admin_user, board, "pooled=yes").json()
    assert {r["run"] for r in yes["runs"]} == {"alpha", "beta-secret", "delta"}
    no = api(api_client_for, admin_user, board, "pooled=no").json()
    assert {r["run"] for r in no["runs"]} == {"alpha_two", "gamma"}
    assert no["shown"] == 2 and no["total"] == 5 and no["filters"]["pooled"] == "no"
    assert "not pooled runs only" in no["view"] and "2 of 5 runs" in no["view"]


def test_filter_by_group_shows_only_the_researchers_own_groups(
    board: Any, api_client_for: Any, researcher: Any
) -> None:
    whole = api(api_client_for, researcher, board)
    assert whole.status_code == 200
    assert whole.json()["groups"] == ["mine-a", "mine-b"]
    assert b"secret-team" not in whole.content and b"beta-secret" not in whole.content
    mine = api(api_client_for, researcher, board, "group=mine-a").json()
    assert [r["run"] for r in mine["runs"]] == ["alpha"]
    # another researcher's group is not one the board shows: refused, and not named back
    hidden = api(api_client_for, researcher, board, "group=secret-team")
    assert hidden.status_code == 400
    body = hidden.json()
    assert body["problems"][0]["location"] == "group"
    assert "mine-a" in body["detail"] and "beta-secret" not in hidden.content.decode()
    # an anonymised run has no group to filter by
    assert all(r["group"] == "" for r in whole.json()["runs"] if r["run_id"] is None)


def test_a_slice_scores_are_the_stored_slice_aggregates(
    board: Any, api_client_for: Any, admin_user: Any
) -> None:
    out = api(api_client_for, admin_user, board, "slice=easy").json()
    assert out["slice"] == {"tag": "easy", "n_topics": 2}
    assert "over the 2 topics tagged easy" in out["view"]
    stored = {
        e.run.tag: e.slices["easy"]
        for e in Evaluation.objects.filter(run__campaign=board, job__state="done")
    }
    checked = 0
    for row in out["runs"]:
        if row["run"] not in stored:
            continue
        for m, entry in row["measures"].items():
            assert entry["value"] == pytest.approx(stored[row["run"]][m]["value"])
            assert entry["ci_low"] == pytest.approx(stored[row["run"]][m]["ci_low"])
            checked += 1
        assert row["n_queries"] == 2
    assert checked >= 4 * 6
    # and sorted by the slice's values, not the whole board's
    first = board.measures[0]
    values = [float(v) for r in out["runs"] if (v := value(r, first)) is not None]
    assert values == sorted(values, reverse=True)


def test_measures_chooses_which_and_in_what_order(
    board: Any, api_client_for: Any, admin_user: Any
) -> None:
    out = api(api_client_for, admin_user, board, "measures=P@10,map").json()
    assert out["measures"] == ["P@10", "AP"]
    assert out["sorted_by"] == "P@10"  # the first shown
    assert all(set(r["measures"]) == {"P@10", "AP"} for r in out["runs"] if r.get("measures"))
    rows = csv.reader(
        io.StringIO(
            api(api_client_for, admin_user, board, "measures=AP&format=csv").getvalue().decode()
        )
    )
    header = next(rows)
    assert [h for h in header if h.startswith("P@10")] == []


def test_the_csv_follows_the_sort_and_the_filters(
    board: Any, api_client_for: Any, admin_user: Any
) -> None:
    out = api(api_client_for, admin_user, board, "sort=run&order=desc&pooled=yes").json()
    response = api(api_client_for, admin_user, board, "sort=run&order=desc&pooled=yes&format=csv")
    rows = list(csv.DictReader(io.StringIO(response.getvalue().decode())))
    assert (
        [r["run"] for r in rows]
        == [r["run"] for r in out["runs"]]
        == [
            "delta",
            "beta-secret",
            "alpha",
        ]
    )
    assert {r["qrels_hash"] for r in rows} == {board.qrels_versions.get().content_hash}


@pytest.mark.parametrize(
    ("query", "param"),
    [
        ("sort=bogus", "sort"),
        ("sort=AP:wrong", "sort"),
        ("sort=Judged@99:judged", "sort"),
        ("order=up", "order"),
        ("pooled=maybe", "pooled"),
        ("group=nobody", "group"),
        ("slice=nope", "slice"),
        ("measures=AP,XYZ", "measures"),
        ("sort=AP&sort=P@10", "sort"),
    ],
)
def test_bad_parameters_are_400_naming_the_parameter(
    board: Any, api_client_for: Any, admin_user: Any, query: str, param: str
) -> None:
    response = api(api_client_for, admin_user, board, query)
    assert response.status_code == 400
    body = response.json()
    assert body["error"] == "invalid_input" and body["problems"][0]["location"] == param
    page = Client()
    page.force_login(admin_user)
    shown = page.get(f"/campaigns/{board.pk}/leaderboard/?{query}")
    assert shown.status_code == 400
    text = shown.content.decode()
    assert f"{param}:" in text and 'id="leaderboard"' in text  # said, and the default view


def test_board_query_defaults_and_round_trip() -> None:
    measures = ["AP", "nDCG@10"]
    assert board_query({}, measures) == BoardQuery()
    q = board_query(
        {"sort": "ndcg_cut_10:judged", "order": "ASC", "pooled": "no", "measures": "nDCG@10"},
        measures,
    )
    assert q.sort == "nDCG@10:judged" and q.order == "asc" and q.measures == ("nDCG@10",)
    assert board_query(q.params(), measures) == q


def test_the_page_has_sort_links_filters_and_says_what_the_view_is(
    board: Any, researcher: Any
) -> None:
    client = Client()
    client.force_login(researcher)
    page = client.get(f"/campaigns/{board.pk}/leaderboard/?sort=AP&order=asc&pooled=no").content
    text = page.decode()
    assert "sorted by AP ascending · not pooled runs only" in text
    assert 'aria-sort="ascending"' in text and "▲" in text
    # the current column flips its order, the others start at their own default; filters kept
    assert "sort=AP&amp;order=desc" in text and "pooled=no" in text
    assert "sort=run&amp;order=asc" in text
    assert 'name="pooled"' in text and 'name="slice"' in text and 'name="measures"' in text
    assert "secret-team" not in text and "beta-secret" not in text
    # compact: no Judged@k line until asked
    assert "cell-details" not in text
    detailed = client.get(f"/campaigns/{board.pk}/leaderboard/?details=1").content.decode()
    assert "cell-details" in detailed and "judged " in detailed
    sliced = client.get(f"/campaigns/{board.pk}/leaderboard/?slice=hard").content.decode()
    assert "the 1 topic tagged hard" in sliced


def test_annotators_are_refused_and_anonymous_users_sent_to_log_in(
    board: Any, api_client_for: Any, annotator: Any
) -> None:
    urls = [
        f"/campaigns/{board.pk}/leaderboard/?sort=AP",
        f"/campaigns/{board.pk}/leaderboard/export/?format=latex",
        f"/campaigns/{board.pk}/per-query/?format=trec",
    ]
    client = Client()
    client.force_login(annotator)
    for url in urls:
        assert client.get(url).status_code == 403
        anonymous = Client().get(url)
        assert anonymous.status_code == 302 and "/login/" in anonymous["Location"]
    for url in urls:
        api_url = f"/api/v1{url}"
        assert api_client_for(annotator).get(api_url).status_code == 403
        assert Client().get(api_url).status_code == 401


def test_the_note_on_queries_a_run_does_not_answer_names_the_runs(
    board: Any, researcher: Any, as_committed: Any
) -> None:
    """'2 of 3 averaged queries are not in the run (scored 0)' is one run's line, not the
    board's: the note says which runs it is about."""
    with as_committed():
        run_submitted(
            campaign=board,
            owner=researcher,
            tag="one-topic",
            pooled=False,
            results={"401": ranking(0)["401"]},
        )
    client = Client()
    client.force_login(researcher)
    page = client.get(f"/campaigns/{board.pk}/leaderboard/").content.decode()
    note = page[page.index('id="qrels-note"') : page.index("</p>", page.index('id="qrels-note"'))]
    assert (
        "In 1 of 5 evaluated runs (one-topic): 2 of 3 averaged queries are not in the run "
        "(scored 0)" in note
    ), note
