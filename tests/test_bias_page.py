"""The bias page shows a stored report as a researcher can believe it: every estimator of the
non-pooled runs' penalty with its error measured on this campaign (the recommended one said why),
the penalty as a share of the run's own score, before/after on the same topics with drops and
gains worded right, the reusability verdict first, filters that round-trip in the URL, and a
clear 400 for a bad filter. The reports are hand-made in SPEC.md's shapes (tests/_bias_reports.py)
and stored directly, so these tests read the page, not the metrics."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from django.test import Client

from judging.assessments.models import QrelsVersion
from judging.campaigns.models import Run
from judging.core.models import Job, JobState
from judging.evaluation.models import BiasReport, Reusability
from judging.workflows.qrels import qrels_imported
from judging.workflows.runs import run_submitted
from tests import _bias_reports as fx
from tests._page_checks import page_text, wording_problems

pytestmark = [pytest.mark.django_db, pytest.mark.follow_ups]

QRELS_V1 = "401 0 d1 1\n401 0 d2 0\n402 0 d4 1\n"
QRELS_V2 = "401 0 d1 1\n401 0 d2 0\n402 0 d4 1\n403 0 d7 1\n"


@pytest.fixture
def world(campaign: Any, researcher: Any, other_researcher: Any) -> Any:
    """Rita's runs alpha, gamma and novel-x (not pooled), Oscar's beta; qrels v1 and v2 (no task
    runs: nothing commits, so no report is computed; the tests store theirs)."""
    campaign.pool_depth = 10
    campaign.save()
    owners = {"alpha": researcher, "beta": other_researcher, "gamma": researcher}
    for tag in [*fx.POOLED, fx.NOVEL]:
        run_submitted(
            campaign=campaign,
            owner=owners.get(tag, researcher),
            tag=tag,
            results={"401": {"d1": 2.0, "d2": 1.0}, "402": {"d4": 1.0}},
        )
    Run.objects.filter(campaign=campaign, tag=fx.NOVEL).update(pooled=False)
    for tag in fx.POOLED:
        Run.objects.filter(campaign=campaign, tag=tag).update(group=f"g-{tag}")
    qrels_imported(campaign=campaign, data=QRELS_V1.encode())
    qrels_imported(campaign=campaign, data=QRELS_V2.encode())
    return campaign


def store(campaign: Any, result: dict[str, Any], *, measure: str = "P@10", **key: Any) -> Any:
    """Store ``result`` as the done report of qrels v2 for these parameters (replacing the
    pending one the import asked for, when it is the default report)."""
    version = QrelsVersion.objects.get(campaign=campaign, number=2)
    where = {"kind": key.pop("kind", "loo_run"), "measure": measure, "depth": 10, **key}
    report = BiasReport.objects.filter(campaign=campaign, qrels=version, **where).first()
    if report is None:
        job = Job.objects.create(kind="bias_report", key="bias")
        report = BiasReport.objects.create(campaign=campaign, qrels=version, job=job, **where)
    Job.objects.filter(pk=report.job_id).update(state=JobState.DONE, error="")
    BiasReport.objects.filter(pk=report.pk).update(result=result)
    report.refresh_from_db()
    return report


def get(user: Any, url: str) -> Any:
    client = Client()
    client.force_login(user)
    return client.get(url)


def page(user: Any, campaign: Any, query: str = "measure=P@10") -> str:
    response = get(user, f"/campaigns/{campaign.pk}/bias/?{query}")
    assert response.status_code == 200, response.content[:500]
    html: str = response.content.decode()
    assert wording_problems(html) == []
    return html


def section(html: str, element_id: str, end: str = "</section>") -> str:
    """The HTML from the element with ``element_id`` to the next ``end``."""
    start = html.index(f'id="{element_id}"')
    stop = html.find(end, start)
    return html[start : stop if stop > 0 else None]


def table_of(html: str, element_id: str) -> str:
    return section(html, element_id, "</table>")


def test_the_recommended_estimate_is_a_penalty_and_a_share_of_the_runs_own_score(
    world: Any, researcher: Any
) -> None:
    store(world, fx.result())
    html = page(researcher, world)
    penalty = page_text(section(html, "penalty"))
    assert (
        "Recommended for P@10 over all the left-out runs: Webber & Park 2009, for the lowest "
        "mean absolute error (0.0121) of the 6 estimators that apply to P@10" in penalty
    )
    # 0.214 - 0.2 = +0.014, 100 * 0.014 / 0.2 = 7.0% of the run's own score
    assert (
        "Webber & Park 2009 estimates 0.2140: a penalty of +0.0140 P@10, 7.0% of the run's own "
        "score; 95% interval [0.2043, 0.2237] (the interval of the mean correction the estimate "
        "rests on, not of this run's score: this report predates intervals for a run's own "
        "score (the next qrels version's report has them))" in penalty
    )
    assert "72.0" not in html and "72%" not in html  # the old misleading mean % delta
    table = table_of(html, "estimates-1")
    rows = re.findall(r"<tr class=\"(recommended|)\"><td>(.*?)</td>", table)
    assert rows[0] == (
        "recommended",
        'Webber &amp; Park 2009 <strong class="badge">recommended</strong>',
    )
    assert len(rows) == 6  # every applicable estimator, the recommended first
    upper = page_text(table[table.index("Upper bound") :].split("</tr>")[0])
    assert "0.4000 +0.2000 100.0% [" not in upper  # no interval for a bound: an explained dash
    assert upper.startswith("Upper bound 0.4000 +0.2000 100.0% — 0.0892 4 2 0.000")
    lipani2016 = page_text(table[table.index("Lipani et al. 2016") :].split("</tr>")[0])
    assert lipani2016 == "Lipani et al. 2016 0.2260 +0.0260 13.0% — — — — —"
    assert """title="% of the run's own score">7.0%</span>""" in table
    basis = page_text(html)
    assert (
        "the mean leave-one-out delta of the 3 pooled runs: +0.0140 P@10 (95% CI [+0.0043, "
        "+0.0237])" in basis
    )


def test_estimators_that_do_not_apply_say_why_and_have_no_row(world: Any, researcher: Any) -> None:
    store(world, fx.result(measure="AP"), measure="AP")
    html = page(researcher, world, "measure=AP")
    notes = page_text(html[html.index('id="not-applicable"') :].split("</ul>")[0])
    assert "Lipani, Lupu & Hanbury 2015 does not apply to AP: defined for P@k only." in notes
    assert "Upper bound does not apply to AP: top-k measures only." in notes
    table = table_of(html, "estimates-1")
    assert "Lipani" not in table and "Upper bound" not in table
    assert table.count("<tr") == 1 + 3  # header + pool, webber_park, condensed


def test_an_old_report_shows_webber_park_as_a_share_of_the_runs_own_score(
    world: Any, researcher: Any
) -> None:
    store(world, fx.result(old=True))
    html = page(researcher, world)
    text = page_text(section(html, "penalty"))
    # 0.0233 / 0.2 = 11.65% of novel-x's own score; not the pooled runs' mean 72.0% delta
    assert "novel-x 0.2000 +0.0233 11.7% 0.2233" in text
    assert "72.0" not in html
    assert "mean leave-one-out delta of the 3 pooled runs (+0.0233 P@10)" in text
    assert 'id="mixed-topics"' in html  # before/after of an old report may mix topic sets


def test_before_after_is_on_the_same_topics_with_drops_and_gains_worded_right(
    world: Any, researcher: Any
) -> None:
    store(world, fx.result())
    html = page(researcher, world)
    ba = section(html, "before-after-section")
    note = ba.index('id="topics-note"')
    assert note < ba.index('id="before-after"')  # said above the table
    text = page_text(ba)
    assert "Compared on 2 topics; topic 403 is new in v2 (not in v1)." in text
    assert "Kendall tau-b between the two rankings 0.333 · tau_AP 0.250." in text
    assert "Novel run novel-x: +0.0600 P@10 (95% CI [+0.0120, +0.1080], p < 0.0001)." in text
    assert "Recall fell for 2 of the 3 other runs on the 2 compared topics (mean -0.0132)." in text
    rows = {
        r.split(" ")[0] if not r.startswith("anonymous") else " ".join(r.split(" ")[:3]): r
        for r in (page_text("<tr" + row) for row in table_of(ba, "before-after").split("<tr")[2:])
    }
    beta = f"anonymous run #{world.runs.get(tag='beta').pk}"  # Oscar's run, seen by Rita
    assert rows["novel-x"].startswith("novel-x novel 0.2000 4 0.2600 2 up 2 +0.0600")
    assert rows["novel-x"].endswith("0.3000 0.5000 gain of 0.2000")
    assert rows["alpha"].endswith("0.6000 0.5805 drop of 0.0195")
    assert "same rank" in rows["alpha"]
    assert rows[beta].startswith(f"{beta} 0.3000 2 0.2500 3 down 1 -0.0500 — not enough data")
    assert rows["gamma"].endswith("0.4000 0.4000 no change")
    assert "< 0.0001" in rows["gamma"]  # a stored p of 0 is not written 0.0000
    new = page_text(ba[ba.index('id="new-topics"') :])
    assert "novel-x 0.3000 1 0.6000" in new and beta not in new  # it has no new-topic scores
    assert "On the topics new in v2 (403), scored under v2 only" in text


def test_the_reusability_verdict_comes_first_then_its_numbers(world: Any, researcher: Any) -> None:
    store_reusability(world, fx.reusability())
    store(world, fx.result())
    html = page(researcher, world)
    reuse = section(html, "reusability")
    assert reuse.index('id="verdict"') < reuse.index("stat-grid") < reuse.index('id="judged"')
    text = page_text(reuse)
    assert (
        "A new system's AP is likely underestimated by 0.010-0.030; the pool is shallow for "
        "topic 402." in text
    )
    assert "25.0% of the relevant documents were found by one group only" in text
    assert (
        "Relevant documents found by one group only (Voorhees 2018) 25.0% 10 of the 40 relevant"
        in text
    )
    assert """title="% of the relevant documents">25.0%</span>""" in reuse
    assert "Judged@100 0.420 none: every run is pooled" in text
    assert "402 12 40 3" in page_text(reuse[reuse.index('id="shallow"') :])
    assert "g-alpha 6" in page_text(reuse[reuse.index('id="unique-relevant"') :])
    assert "<svg" in reuse and 'data-series="relevant found per judgment at this depth"' in reuse
    chart = get(researcher, f"/campaigns/{world.pk}/bias/reusability.svg?measure=P@10")
    assert chart.status_code == 200 and chart["Content-Type"] == "image/svg+xml"
    assert wording_problems(chart.content.decode()) == []


def store_reusability(campaign: Any, result: dict[str, Any] | None) -> None:
    """Store ``result`` as qrels v2's done reusability report (None: there is none), replacing
    the pending one the import asked for."""
    version = QrelsVersion.objects.get(campaign=campaign, number=2)
    Reusability.objects.filter(qrels=version).delete()
    if result is not None:
        job = Job.objects.create(kind="reusability", key="reusability", state=JobState.DONE)
        Reusability.objects.create(qrels=version, campaign=campaign, job=job, result=result)


def test_a_reusability_report_not_computed_yet_says_how_to_get_it(
    world: Any, researcher: Any
) -> None:
    store_reusability(world, None)
    html = page(researcher, world)
    assert 'id="reusability-missing"' in html and "/reusability/" in html
    assert 'id="not-computed"' in html  # and the bias report is offered to compute


def test_another_researchers_runs_are_anonymised(
    world: Any, researcher: Any, other_researcher: Any
) -> None:
    store(world, fx.result())
    store_reusability(world, fx.reusability())
    beta = world.runs.get(tag="beta")
    mine = page(researcher, world)
    # Oscar's group: neither in the validation table, nor among the units with unique relevant
    # documents, nor as the group whose leaving out costs most
    assert "g-beta" not in mine and "anonymous group #1" in mine
    assert f"anonymous run #{beta.pk}" in mine
    assert ">beta<" not in mine and "<td>beta" not in mine and "beta (not pooled)" not in mine
    theirs = page(other_researcher, world)
    novel = world.runs.get(tag=fx.NOVEL)
    assert f"anonymous run #{novel.pk}" in theirs
    assert "novel-x" not in theirs and ">alpha<" not in theirs
    assert "g-alpha" not in theirs and "g-gamma" not in theirs and "g-beta" in theirs
    scatter = get(other_researcher, f"/campaigns/{world.pk}/bias/scatter.svg?measure=P@10")
    assert "novel-x" not in scatter.content.decode()


def test_annotators_may_not_see_the_page_or_its_charts(world: Any, annotator: Any) -> None:
    store(world, fx.result())
    assert get(annotator, f"/campaigns/{world.pk}/bias/?measure=P@10").status_code == 403
    assert get(annotator, f"/campaigns/{world.pk}/bias/scatter.svg?measure=P@10").status_code == 403
    assert get(annotator, f"/campaigns/{world.pk}/bias/reusability.svg").status_code == 403


def test_the_filters_round_trip_in_the_url_and_the_chart_links(world: Any, researcher: Any) -> None:
    store(world, fx.result(), kind="loo_group")
    html = page(researcher, world, "qrels=2&measure=P%4010&depth=10&kind=loo_group")
    form = html[html.index('id="filters"') :].split("</form>")[0]
    assert "<option selected>P@10</option>" in form
    assert '<option value="loo_group" selected>' in form
    assert 'name="depth" value="10"' in form
    links = re.findall(r'href="(/campaigns/\d+/bias/\w+\.svg\?[^"]+)"', html)
    assert {urlsplit(u).path.rsplit("/", 1)[1] for u in links} >= {"scatter.svg", "deltas.svg"}
    for url in links:
        query = parse_qs(urlsplit(url.replace("&amp;", "&")).query)
        assert query["measure"] == ["P@10"] and query["kind"] == ["loo_group"]
        assert query["depth"] == ["10"] and query["qrels"] == ["2"]
        assert get(researcher, url.replace("&amp;", "&")).status_code == 200
    # the qrels picker of the sub-navigation keeps the other filters
    nav = html[html.index('class="subnav"') :].split("</nav>")[0]
    assert '<input type="hidden" name="kind" value="loo_group">' in nav


def test_a_measure_typed_in_is_checked_and_kept(world: Any, researcher: Any) -> None:
    html = page(researcher, world, "measure=AP&measure_other=P%405")
    assert "This analysis (P@5 at depth 10, loo_run) of qrels version 2 is not computed yet" in (
        page_text(html)
    )
    assert "<option selected>P@5</option>" in html
    assert '<input type="hidden" name="measure" value="P@5">' in html  # what Compute sends


@pytest.mark.parametrize(
    ("query", "named"),
    [
        ("measure=bogus", "measure"),
        ("measure_other=P%403000000000", "measure"),
        ("depth=abc", "depth"),
        ("depth=-3", "depth"),
        ("kind=loo_topic", "kind"),
    ],
)
def test_a_bad_filter_is_a_400_page_that_names_it(
    world: Any, researcher: Any, query: str, named: str
) -> None:
    response = get(researcher, f"/campaigns/{world.pk}/bias/?{query}")
    assert response.status_code == 400
    html = response.content.decode()
    error = page_text(html[html.index('id="filter-error"') :].split("</div>")[0])
    assert f"{named}:" in error
    assert 'id="filters"' in html  # the form is there to correct it
    assert wording_problems(html) == []
    chart = get(researcher, f"/campaigns/{world.pk}/bias/scatter.svg?{query}")
    assert chart.status_code == 400 and named in chart.content.decode()


def test_a_bad_topics_spec_is_a_clear_400_naming_topics(world: Any, researcher: Any) -> None:
    for spec in ("999", "tag:no-such-tag", "abc;drop", "900-950", ",", "x" * 5000):
        response = get(researcher, f"/campaigns/{world.pk}/bias/?topics={spec}")
        assert response.status_code == 400, spec
        html = response.content.decode()
        assert "topics:" in page_text(html[html.index('id="filter-error"') :]), spec


def test_a_topics_filter_is_kept_by_compute_and_the_links(
    world: Any, researcher: Any, as_committed: Any
) -> None:
    client = Client()
    client.force_login(researcher)
    html = client.get(f"/campaigns/{world.pk}/bias/?measure=P@10&topics=401-402").content.decode()
    assert '<input type="hidden" name="topics" value="401-402">' in html
    with as_committed():
        r = client.post(
            f"/campaigns/{world.pk}/bias/compute/",
            {
                "qrels": "2",
                "measure": "P@10",
                "depth": "10",
                "kind": "loo_run",
                "topics": "401-402",
            },
        )
    assert r.status_code == 302
    assert parse_qs(urlsplit(r["Location"]).query)["topics"] == ["401-402"]


def test_the_charts_draw_the_recommended_estimate_and_a_legend_of_drawn_series(
    world: Any, researcher: Any
) -> None:
    store(world, fx.result())
    scatter = get(researcher, f"/campaigns/{world.pk}/bias/scatter.svg?measure=P@10")
    svg = scatter.content.decode()
    assert "novel-x (not pooled): 0.2140 vs 0.2000" in svg  # Webber & Park's estimate as x
    assert wording_problems(svg) == []
    efficiency = get(researcher, f"/campaigns/{world.pk}/bias/efficiency.svg?measure=P@10")
    svg = efficiency.content.decode()
    assert "Move-to-Front" not in svg  # its curve has no value: neither drawn nor in the legend
    assert 'class="legend"' in svg and "rank order" in svg
    assert wording_problems(svg) == []


def test_when_no_correction_is_recommended_the_page_says_so_and_names_the_best_one(
    world: Any, researcher: Any
) -> None:
    result = fx.result()
    result["estimators"]["recommended"] = "pool"
    result["estimators"]["recommended_why"] = (
        "lowest mean absolute error (0.0533) of the 6 estimators that apply to P@10"
    )
    store(world, result)
    text = page_text(section(page(researcher, world), "penalty"))
    assert (
        "Recommended for P@10 over all the left-out runs: No correction, for the lowest mean "
        "absolute error" in text
    )
    assert (
        "no correction is measured to do better than the score the pool gives: 0.2000 is the "
        "best estimate of its P@10 had it been pooled. The best-measured correction, Webber & "
        "Park 2009 (MAE 0.0121), would put the penalty at +0.0140 P@10, 7.0% of the run's own "
        "score." in text
    )
    assert "a penalty of 0.0000" not in text


def test_many_runs_not_pooled_get_one_summary_row_each_and_their_tables_folded(
    world: Any, researcher: Any
) -> None:
    """TREC 2011 Medical has 86 runs not pooled: a table of every estimator per run made the
    page tens of thousands of pixels tall. Beyond five, a summary row each, the tables folded."""
    result = fx.result()
    not_pooled = result["estimators"]["not_pooled"]
    not_pooled.update({f"novel-{i}": dict(not_pooled[fx.NOVEL]) for i in range(6)})
    store(world, result)
    html = page(researcher, world)
    summary = table_of(html, "estimates-summary")
    assert summary.count("<tr") == 1 + 7  # header + every run not pooled
    rows = [page_text(r) for r in summary.split("</tr>")[1:-1]]
    assert (
        f"{fx.NOVEL} 0.2000 0.2140 +0.0140 7.0% [0.2043, 0.2237] Webber & Park 2009 (+0.0140)"
        in rows
    )
    detail = section(html, "estimates-detail", "</details>")
    assert detail.count('class="grid spaced estimates"') == 7  # still there, folded
    assert "Every estimator, run by run (7 runs)" in page_text(detail)
    store(world, fx.result())  # one run not pooled: its table shown, nothing folded
    html = page(researcher, world)
    assert 'id="estimates-summary"' not in html and 'id="estimates-detail"' not in html
