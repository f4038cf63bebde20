"""Human samples chosen by the service and the hybrid leaderboard: a sample is queued ahead of its
topics, the estimate waits for every sampled document, a perfect judge gives the full-judgment
value exactly, a two-phase design draws the rest after its pilot, and the pages and API check
who asks."""

from __future__ import annotations

from typing import Any

import pytest

from judging.assessments.models import JudgingSlot
from judging.autojudge import services
from judging.autojudge.estimates import estimate, sample_advance, sample_create
from judging.autojudge.models import JudgeKind, SampleItem
from judging.campaigns.models import Campaign
from judging.core.errors import Conflict, InvalidInput
from judging.pools.models import PoolVersion
from judging.workflows.qrels import qrels_imported
from metrics import evaluate
from tests.test_judging_api import build_pool

pytestmark = pytest.mark.django_db

DOCS = {q: [f"d{q}-{i}" for i in range(1, 9)] for q in ("401", "402", "403")}  # 24 documents
# people: documents 1-3 of each topic relevant (1 highly); the judge is right except on 3 and 7
HUMAN = {
    (q, d): (2 if d.endswith("-1") else 1 if d[-1] in "23" else 0)
    for q, ds in DOCS.items()
    for d in ds
}


def judge_labels(perfect: bool) -> dict[tuple[str, str], int]:
    if perfect:
        return dict(HUMAN)
    return {
        k: (0 if k[1].endswith("-3") else 1 if k[1].endswith("-7") else g) for k, g in HUMAN.items()
    }


@pytest.fixture
def world(campaign: Campaign, researcher: Any) -> dict[str, Any]:
    build_pool(campaign, researcher, DOCS)
    return {"pool": PoolVersion.objects.get(campaign=campaign), "campaign": campaign}


def make_judge(campaign: Campaign, perfect: bool, name: str = "file") -> Any:
    judge = services.judge_create(campaign=campaign, name=name, kind=JudgeKind.IMPORTED, model="m")
    services.store_labels(
        judge, [services.Label(q, d, g) for (q, d), g in judge_labels(perfect).items()]
    )
    return judge


def people_grade_everything(campaign: Campaign, as_committed: Any) -> None:
    qrels = "".join(f"{q} 0 {d} {g}\n" for (q, d), g in HUMAN.items())
    with as_committed():
        qrels_imported(campaign=campaign, data=qrels.encode())


def test_a_uniform_sample_is_queued_first_and_the_estimate_waits_for_it(
    world: dict[str, Any], as_committed: Any
) -> None:
    campaign, pool = world["campaign"], world["pool"]
    judge = make_judge(campaign, perfect=False)
    hs = sample_create(judge=judge, pool=pool, design="uniform", budget=8, seed=3)
    items = list(SampleItem.objects.filter(sample=hs))
    # the pilot slice (20% of the budget) is judged with certainty, the rest uniformly
    pilot = [i for i in items if i.pi == 1.0]
    assert len(items) == 8 and len(pilot) == 2
    assert all(i.pi == pytest.approx(6 / 22) for i in items if i.pi < 1.0)
    for item in items:  # first in their topics' queues
        slot = JudgingSlot.objects.get(topic=item.topic, docid=item.docid, slot=1)
        assert slot.position == 0
    assert JudgingSlot.objects.filter(campaign=campaign, position=0).count() == 8
    waiting = estimate(hs)
    assert waiting["ready"] is False
    assert waiting["progress"] == {"phase": "full", "queued": 8, "graded": 0, "complete": False}
    people_grade_everything(campaign, as_committed)
    ready = estimate(hs)
    assert ready["ready"] and ready["n_sampled"] == 8 and ready["n_items"] == 24
    for run, by_m in ready["runs"].items():
        for m, cell in by_m.items():
            e = cell["ppi"]
            assert e["low"] <= e["value"] <= e["high"], (run, m)
    again = sample_create(judge=judge, pool=pool, design="uniform", budget=8, seed=3)
    assert set(again.items.values_list("docid", flat=True)) == {i.docid for i in items}


def test_an_estimate_is_computed_once_until_what_it_rests_on_changes(
    world: dict[str, Any], as_committed: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import metrics.ppi as ppi
    from judging.autojudge.estimates import sample_human_grades

    campaign, pool = world["campaign"], world["pool"]
    judge = make_judge(campaign, perfect=False)
    people_grade_everything(campaign, as_committed)
    hs = sample_create(judge=judge, pool=pool, design="uniform", budget=8, seed=3)
    calls: list[int] = []
    real = ppi.estimate_runs

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(ppi, "estimate_runs", counted)
    first = estimate(hs)
    assert estimate(hs) == first and len(calls) == 1  # the second read comes from the cache
    assert estimate(hs, level=0.9) != first and len(calls) == 2  # another level: computed
    # a person changes a sampled document's grade: computed again, from the new grade
    (q, d), g = next(iter(sample_human_grades(hs).items()))
    changed = "".join(
        f"{qq} 0 {dd} {(1 - min(gg, 1)) if (qq, dd) == (q, d) else gg}\n"
        for (qq, dd), gg in HUMAN.items()
    )
    with as_committed():
        qrels_imported(campaign=campaign, data=changed.encode())
    assert sample_human_grades(hs)[(q, d)] != g
    estimate(hs)
    assert len(calls) == 3


def test_a_perfect_judge_gives_the_full_judgment_value_inside_its_interval(
    world: dict[str, Any], as_committed: Any
) -> None:
    from judging.evaluation.services import rankings

    campaign, pool = world["campaign"], world["pool"]
    judge = make_judge(campaign, perfect=True)
    people_grade_everything(campaign, as_committed)
    hs = sample_create(judge=judge, pool=pool, design="uniform", budget=6, seed=1)
    report = estimate(hs)
    assert report["ready"]
    qrels: dict[str, dict[str, int]] = {}
    for (q, d), g in HUMAN.items():
        qrels.setdefault(q, {})[d] = g
    widths: list[float] = []
    for run in campaign.runs.all():
        ranked = rankings(run)
        as_run = {q: {d: float(len(ds) - i) for i, d in enumerate(ds)} for q, ds in ranked.items()}
        truth = evaluate(
            qrels, as_run, ["P@10", "R@10", "nDCG@10", "AP"], compat="trec_eval", ci=None
        )
        for m in ("P@10", "R@10", "nDCG@10", "AP"):
            cell = report["runs"][run.tag][m]["ppi"]
            assert cell["value"] == pytest.approx(truth.aggregates[m].value, abs=1e-6), (run, m)
            widths.append(cell["high"] - cell["low"])
    # a judge that agrees with 6 sampled labels is not proven right on the others: the
    # variance floor keeps intervals open, the estimates stay exact
    assert max(widths) > 0


def test_a_judge_whose_every_label_has_a_score_is_calibrated_on_the_scores(
    world: dict[str, Any], as_committed: Any, client: Any, researcher: Any
) -> None:
    campaign, pool = world["campaign"], world["pool"]
    scored = services.judge_create(
        campaign=campaign, name="cosine", kind=JudgeKind.IMPORTED, model="m"
    )
    graded = judge_labels(perfect=False)
    # a similarity: the human grade plus a spread that keeps the two grades overlapping
    sim = {k: 0.3 * HUMAN[k] + 0.05 * (i % 7) for i, k in enumerate(sorted(graded))}
    services.store_labels(
        scored, [services.Label(q, d, g, score=sim[(q, d)]) for (q, d), g in graded.items()]
    )
    plain = make_judge(campaign, perfect=False, name="grades-only")
    people_grade_everything(campaign, as_committed)
    by_scores = estimate(sample_create(judge=scored, pool=pool, design="uniform", budget=10))
    by_grades = estimate(sample_create(judge=plain, pool=pool, design="uniform", budget=10))
    assert by_scores["calibration"] == "score" and by_grades["calibration"] == "grade"
    for run, by_m in by_scores["runs"].items():
        for m, cell in by_m.items():
            assert cell["ppi"]["low"] <= cell["ppi"]["value"] <= cell["ppi"]["high"], (run, m)
    # one document without a score: the grades calibrate, and the page says which was used
    gap = services.judge_create(campaign=campaign, name="gap", kind=JudgeKind.IMPORTED, model="m")
    services.store_labels(
        gap,
        [
            services.Label(q, d, g, score=None if (q, d) == ("401", "d401-1") else sim[(q, d)])
            for (q, d), g in graded.items()
        ],
    )
    hs = sample_create(judge=gap, pool=pool, design="uniform", budget=10, seed=4)
    assert estimate(hs)["calibration"] == "grade"
    client.force_login(researcher)
    page = client.get(f"/campaigns/{campaign.pk}/samples/{hs.pk}/").content.decode()
    assert 'id="calibration"' in page and "per grade and per how many runs" in page


def test_a_neyman_design_queues_its_pilot_then_draws_the_rest(
    world: dict[str, Any], as_committed: Any
) -> None:
    campaign, pool = world["campaign"], world["pool"]
    judge = make_judge(campaign, perfect=False)
    hs = sample_create(judge=judge, pool=pool, design="stratified", budget=12, seed=2)
    assert hs.design_info["phase"] == "pilot"
    pilot = hs.items.count()
    assert 2 <= pilot < 12
    assert set(hs.items.values_list("pi", flat=True)) == {1.0}
    with pytest.raises(Conflict, match="not graded yet"):
        sample_advance(hs)
    people_grade_everything(campaign, as_committed)
    hs = sample_advance(hs)
    assert hs.design_info["phase"] == "full"
    assert hs.items.count() == hs.design_info["n_sampled"] >= pilot
    assert estimate(hs)["ready"]
    with pytest.raises(Conflict, match="already drawn"):
        sample_advance(hs)


@pytest.mark.parametrize("with_scores", [False, True])
def test_an_active_design_weighs_documents_at_the_pilots_calibrated_predictions(
    world: dict[str, Any], as_committed: Any, monkeypatch: pytest.MonkeyPatch, with_scores: bool
) -> None:
    from metrics.ppi import PoolStructure

    campaign, pool = world["campaign"], world["pool"]
    judge = services.judge_create(campaign=campaign, name="act", kind=JudgeKind.IMPORTED, model="m")
    services.store_labels(
        judge,
        [
            services.Label(q, d, g, score=(0.4 * g + 0.01 * len(d)) if with_scores else None)
            for (q, d), g in judge_labels(perfect=False).items()
        ],
    )
    hs = sample_create(judge=judge, pool=pool, design="active", budget=12, seed=2)
    assert hs.design_info["phase"] == "pilot"
    people_grade_everything(campaign, as_committed)
    seen: list[dict[str, Any]] = []
    real = PoolStructure.active_weights

    def spy(self: Any, auto: Any, **kwargs: Any) -> Any:
        seen.append(kwargs)
        return real(self, auto, **kwargs)

    monkeypatch.setattr(PoolStructure, "active_weights", spy)
    hs = sample_advance(hs)
    # one calibration for the influence and the variance weights both
    (kw,) = seen
    assert len(kw["pilot"]) == len(kw["pilot_grades"]) == hs.items.filter(pi=1.0).count()
    assert (kw["score"] is not None) is with_scores and kw["groups"] is not None
    assert 0.0 <= hs.design_info["uniform_mix"] <= 1.0  # the defensive mixture, recorded
    pis = list(hs.items.filter(pi__lt=1.0).values_list("pi", flat=True))
    assert pis and all(0.0 < p < 1.0 for p in pis)
    report = estimate(hs)
    assert report["ready"] and report["calibration"] == ("score" if with_scores else "grade")


def test_bad_samples_are_refused_naming_the_field(world: dict[str, Any]) -> None:
    judge = make_judge(world["campaign"], perfect=False)
    with pytest.raises(InvalidInput, match="budget"):
        sample_create(judge=judge, pool=world["pool"], design="uniform", budget=25)
    with pytest.raises(InvalidInput, match="design"):
        sample_create(judge=judge, pool=world["pool"], design="lucky", budget=5)
    assert not SampleItem.objects.exists()


def test_pages_and_api_check_who_asks(
    world: dict[str, Any],
    as_committed: Any,
    client: Any,
    admin_user: Any,
    researcher: Any,
    annotator: Any,
    api_client_for: Any,
) -> None:
    campaign, pool = world["campaign"], world["pool"]
    judge = make_judge(campaign, perfect=False)
    people_grade_everything(campaign, as_committed)
    # admins draw samples and ask for audits; researchers read; annotators get nothing
    api = api_client_for(researcher)
    body = {"pool": pool.number, "design": "uniform", "budget": 6}
    assert api.post(f"/api/v1/judges/{judge.pk}/samples/", body, format="json").status_code == 403
    r = api_client_for(admin_user).post(f"/api/v1/judges/{judge.pk}/samples/", body, format="json")
    assert r.status_code == 201, r.content
    sample_id = r.json()["id"]
    r = api.get(f"/api/v1/samples/{sample_id}/")
    assert r.status_code == 200 and r.json()["estimate"]["ready"] is True
    assert api_client_for(annotator).get(f"/api/v1/samples/{sample_id}/").status_code == 403
    bad = api_client_for(admin_user).post(
        f"/api/v1/judges/{judge.pk}/samples/", {**body, "budget": 1000}, format="json"
    )
    assert bad.status_code == 400 and "budget" in bad.content.decode()

    with as_committed():  # the audit's task runs when the request's transaction commits
        r = api_client_for(admin_user).post(
            f"/api/v1/judges/{judge.pk}/audits/", {"human": 1, "pool": pool.number}, format="json"
        )
    assert r.status_code == 202, r.content
    audit = api.get(f"/api/v1/audits/{r.json()['id']}/").json()
    assert audit["state"] == "done", audit["error"]
    assert audit["result"]["agreement"]["n"] == 24  # every pool document, graded by both
    assert (
        api.post(
            f"/api/v1/judges/{judge.pk}/audits/", {"human": 1, "pool": 1}, format="json"
        ).status_code
        == 403
    )

    client.force_login(researcher)
    page = client.get(f"/campaigns/{campaign.pk}/samples/{sample_id}/")
    assert page.status_code == 200 and 'id="hybrid-board"' in page.content.decode()
    assert 'id="judge-weight"' in page.content.decode()
    weights = api.get(f"/api/v1/samples/{sample_id}/").json()["estimate"]["judge_weight"]
    assert set(weights) == {"P@10", "R@10", "nDCG@10", "AP"}
    assert all(0.0 <= w <= 1.0 for w in weights.values())
    est = api.get(f"/api/v1/samples/{sample_id}/").json()["estimate"]
    # a 6-document sample of a 24-document pool leaves topics too thin for per-topic ratios:
    # the page says how many and that their intervals leave a bias out
    assert 0 < est["thin_topics"] <= est["n_topics"]
    assert 'id="thin-topics"' in page.content.decode()
    assert client.post(f"/campaigns/{campaign.pk}/samples/create/", {}).status_code == 403
    assert client.get(f"/campaigns/{campaign.pk}/samples/").status_code == 200
    assert client.get(f"/campaigns/{campaign.pk}/judges/{judge.pk}/audit/").status_code == 200
    client.force_login(annotator)
    assert client.get(f"/campaigns/{campaign.pk}/samples/{sample_id}/").status_code == 403
    assert client.get(f"/campaigns/{campaign.pk}/judges/{judge.pk}/audit/").status_code == 403
