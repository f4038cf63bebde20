"""Issue 34, point 5, in the service: answer runs submitted through the API, an automatic
assigner's label on every (answer, nugget) and (sentence, citation) item, a designed human sample
queued in the one judging queue and judged there, and every run's nugget and support scores
corrected with an interval. Worked checks: a sample of every item gives back the true scores
exactly; a uniform sample's intervals hold the true scores; the estimate waits for the whole
sample; a two-phase design draws its rest after the pilot."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest

from judging.assessments import queue, units
from judging.assessments.models import Judgment, Nugget, NuggetBank, UnitKind
from judging.autojudge.answer_samples import (
    answer_estimate,
    answer_sample_advance,
    answer_sample_create,
)
from judging.autojudge.models import AutoLabel, Judge
from judging.autojudge.services import judge_create
from judging.campaigns.models import Campaign, RunAnswer
from judging.core.errors import Conflict
from judging.core.roles import account
from judging.evaluation.answer_board import answer_board
from judging.workflows.judgments import judgment_recorded
from tests._answer_runs import submit_answers

pytestmark = pytest.mark.django_db

TOPICS = ["401", "402", "403"]
FACTS = {
    q: [f"fact {q}-{i} holds" for i in range(4)] for q in TOPICS
}  # nugget i of topic q; vital for i < 2


def _answer(run: str, q: str, known: list[int], cite_wrong: bool) -> dict[str, Any]:
    """A run's answer to topic q stating the facts ``known`` (one sentence each), each citing
    its own segment (or a wrong one)."""
    sentences = [
        {"text": f"As {run} puts it, {FACTS[q][i]}.", "citations": [0 if cite_wrong else j]}
        for j, i in enumerate(known)
    ]
    refs = [f"{q}-d{i}" for i in known] or [f"{q}-d9"]
    return {"run_id": run, "topic_id": q, "references": refs, "answer": sentences}


@pytest.fixture
def answered(
    campaign: Campaign,
    researcher: Any,
    admin_user: Any,
    api_client_for: Callable[[Any], Any],
) -> tuple[Campaign, NuggetBank, Judge, dict[str, int]]:
    """Three runs answer three topics; bank v1 has four nuggets a topic (two vital); an
    imported judge labels every item, wrongly on some. Returns the truth: key -> label."""
    plan = {"good": [0, 1, 2], "partial": [0, 3], "weak": [1]}
    client = api_client_for(researcher)
    for run, known in plan.items():
        submit_answers(
            client, campaign, [_answer(run, q, known, cite_wrong=run == "weak") for q in TOPICS]
        )
    bank = NuggetBank.objects.create(
        campaign=campaign, number=1, state="published", source="imported", content_hash="c" * 64
    )
    for q in TOPICS:
        topic = campaign.topics.get(qid=q)
        for i, text in enumerate(FACTS[q]):
            Nugget.objects.create(
                bank=bank,
                topic=topic,
                key=f"n{i}",
                position=i,
                text=text,
                importance="vital" if i < 2 else "okay",
            )
    judge = judge_create(
        campaign=campaign, name="assigner", kind="imported", model="test", created_by=admin_user
    )
    truth: dict[str, int] = {}
    answers = list(RunAnswer.objects.select_related("run", "topic"))
    for u in units.assignment_units(bank, answers):
        stated = any(FACTS_BY_TEXT.get(s) == u.payload["nugget_text"] for s in u.payload["answer"])
        truth[u.key] = 2 if stated else 0
    for u in units.support_units(answers):
        q = campaign.topics.get(pk=u.topic_id).qid
        fact = u.payload["sentence"].split(" puts it, ")[1].rstrip(".")
        truth[u.key] = 2 if u.payload["segment"] == f"{q}-d{FACTS[q].index(fact)}" else 0
    rng = random.Random(7)
    topic_of = {u.key: u.topic_id for u in units.assignment_units(bank, answers)}
    topic_of |= {u.key: u.topic_id for u in units.support_units(answers)}
    for key, label in truth.items():
        kind = UnitKind.CITATION_SUPPORT if "@" in key else UnitKind.NUGGET_ASSIGNMENT
        wrong = rng.random() < 0.2  # the assigner errs on a fifth of the items
        AutoLabel.objects.create(
            judge=judge,
            topic_id=topic_of[key],
            kind=kind,
            docid=key,
            grade=(2 - label) if wrong else label,
        )
    return campaign, bank, judge, truth


FACTS_BY_TEXT = {
    f"As {run} puts it, {fact}.": fact
    for run in ("good", "partial", "weak")
    for facts in FACTS.values()
    for fact in facts
}


def _judge_queue(campaign: Campaign, annotator: Any, truth: dict[str, int]) -> int:
    """The assessor judges every item served, with its true label; how many."""
    who = account(annotator)
    n = 0
    while (lease := queue.lease_next(campaign=campaign, annotator=who)) is not None:
        judgment_recorded(lease_id=lease.pk, annotator=who, grade=truth[lease.slot.docid])
        n += 1
    return n


def _true_scores(campaign: Campaign, annotator: Any, truth: dict[str, int]) -> dict[str, Any]:
    """Every run's scores with every item judged by people (the answer board, all judged)."""
    units.answer_items_queue(campaign=campaign, kind=UnitKind.NUGGET_ASSIGNMENT, bank=1)
    units.answer_items_queue(campaign=campaign, kind=UnitKind.CITATION_SUPPORT)
    _judge_queue(campaign, annotator, truth)
    board = answer_board(campaign=campaign)
    return {row.run.name: row for row in board.rows}


def test_a_full_sample_gives_back_the_true_scores(
    answered: tuple[Campaign, NuggetBank, Judge, dict[str, int]], annotator: Any
) -> None:
    campaign, _, judge, truth = answered
    n_items = sum("@" not in k for k in truth)
    hs = answer_sample_create(
        judge=judge, kind=UnitKind.NUGGET_ASSIGNMENT, bank=1, budget=n_items, seed=3
    )
    waiting = answer_estimate(hs)
    assert waiting.ready is False and waiting.progress.queued == n_items
    assert _judge_queue(campaign, annotator, truth) == n_items
    est = answer_estimate(hs)
    assert est.ready and est.n_sampled == n_items
    true = _true_scores(campaign, annotator, truth)
    for row in est.runs:
        cell = row.measures["strict_vital_score"].ppi
        want = true[row.run.name].nuggets["strict_vital_score"].mean
        assert cell is not None and cell.value == pytest.approx(want, abs=1e-9)
        assert cell.high - cell.low == pytest.approx(0.0, abs=1e-6)  # type: ignore[operator]


def test_a_uniform_sample_corrects_the_assigner_with_intervals_that_hold(
    answered: tuple[Campaign, NuggetBank, Judge, dict[str, int]], annotator: Any
) -> None:
    campaign, _, judge, truth = answered
    support = [k for k in truth if "@" in k]
    hs = answer_sample_create(
        judge=judge, kind=UnitKind.CITATION_SUPPORT, budget=len(support) // 2, seed=11
    )
    assert hs.design_info["phase"] == "full"
    judged = _judge_queue(campaign, annotator, truth)
    assert judged == hs.items.count() == len(support) // 2
    est = answer_estimate(hs)
    assert est.ready and est.measures == ["precision", "recall"]
    true = _true_scores(campaign, annotator, truth)
    for row in est.runs:
        for m in ("precision", "recall"):
            cell = row.measures[m].ppi
            want = true[row.run.name].support[m].mean
            assert cell is not None and cell.low <= want <= cell.high, (row.run, m, cell, want)
            assert row.measures[m].human_only is not None


def test_two_phases_and_refusals(
    answered: tuple[Campaign, NuggetBank, Judge, dict[str, int]], annotator: Any
) -> None:
    campaign, _, judge, truth = answered
    with pytest.raises(Conflict, match=r"not judged yet"):
        hs = answer_sample_create(
            judge=judge, kind=UnitKind.NUGGET_ASSIGNMENT, bank=1, design="active", budget=20
        )
        assert hs.design_info["phase"] == "pilot" and hs.items.count() == 4  # 20% of 20
        answer_sample_advance(hs)  # the pilot is not judged yet
    hs = answer_sample_create(
        judge=judge, kind=UnitKind.NUGGET_ASSIGNMENT, bank=1, design="active", budget=20, seed=5
    )
    _judge_queue(campaign, annotator, truth)
    hs = answer_sample_advance(hs)
    # the active design draws its rest by Poisson sampling: about the budget, not exactly it
    assert hs.design_info["phase"] == "full" and hs.items.count() == hs.design_info["n_sampled"]
    assert 4 < hs.items.count() <= 40
    _judge_queue(campaign, annotator, truth)
    assert answer_estimate(hs).ready
    AutoLabel.objects.filter(judge=judge, kind=UnitKind.NUGGET_ASSIGNMENT).first().delete()  # type: ignore[union-attr]
    with pytest.raises(Conflict, match="has not labelled 1 of the"):
        answer_sample_create(judge=judge, kind=UnitKind.NUGGET_ASSIGNMENT, bank=1, budget=5)


def test_the_api_draws_reads_and_advances_answer_samples(
    answered: tuple[Campaign, NuggetBank, Judge, dict[str, int]],
    annotator: Any,
    admin_user: Any,
    other_researcher: Any,
    api_client_for: Callable[[Any], Any],
) -> None:
    campaign, _, judge, truth = answered
    admin = api_client_for(admin_user)
    url = f"/api/v1/judges/{judge.pk}/answer-samples/"
    bad = admin.post(url, {"kind": "nugget_assignment", "budget": 5}, format="json")
    assert bad.status_code == 400 and "bank" in bad.content.decode()
    made = admin.post(
        url, {"kind": "citation_support", "budget": 6, "design": "active"}, format="json"
    )
    assert made.status_code == 201, made.content
    body = made.json()
    assert body["ready"] is False and body["progress"]["phase"] == "pilot"
    sample = body["sample"]
    early = admin.post(f"/api/v1/answer-samples/{sample}/advance/")
    assert early.status_code == 409 and "not judged yet" in early.content.decode()
    _judge_queue(campaign, annotator, truth)
    assert admin.post(f"/api/v1/answer-samples/{sample}/advance/").status_code == 200
    _judge_queue(campaign, annotator, truth)
    seen = api_client_for(other_researcher).get(f"/api/v1/answer-samples/{sample}/").json()
    assert seen["ready"] is True and seen["kind"] == "citation_support"
    runs = [row["run"] for row in seen["runs"]]
    assert len(runs) == 3 and not {"good", "partial", "weak"} & set(runs)  # not theirs
    cell = seen["runs"][0]["measures"]["precision"]
    assert set(cell) == {"ppi", "auto_only", "human_only"}
    assert cell["ppi"]["low"] <= cell["ppi"]["value"] <= cell["ppi"]["high"]


def test_the_leaderboard_shows_the_corrected_scores(
    answered: tuple[Campaign, NuggetBank, Judge, dict[str, int]],
    annotator: Any,
    admin_user: Any,
) -> None:
    from django.test import Client

    campaign, _, judge, truth = answered
    answer_sample_create(judge=judge, kind=UnitKind.NUGGET_ASSIGNMENT, bank=1, budget=10)
    web = Client()
    web.force_login(admin_user)
    page = web.get(f"/campaigns/{campaign.pk}/leaderboard/").content.decode()
    assert 'id="corrected-nugget_assignment"' in page and "0 of 10 sampled items judged" in page
    _judge_queue(campaign, annotator, truth)
    page = web.get(f"/campaigns/{campaign.pk}/leaderboard/").content.decode()
    assert 'id="corrected-table-nugget_assignment"' in page
    assert "people judged a uniform sample of 10 (bank v1)" in page


def test_the_audit_of_an_answer_assigner(
    answered: tuple[Campaign, NuggetBank, Judge, dict[str, int]], annotator: Any
) -> None:
    from judging.autojudge.answer_audit import answer_audit

    campaign, _, judge, truth = answered
    waiting = answer_audit(judge=judge, kind=UnitKind.CITATION_SUPPORT)
    assert waiting["judged_by_people"] == 0 and waiting["rankings"] == {}
    assert waiting["rankings_note"].startswith("undefined: ")
    _true_scores(campaign, annotator, truth)  # people judge every item
    audit = answer_audit(judge=judge, kind=UnitKind.CITATION_SUPPORT)
    support = {k: v for k, v in truth.items() if "@" in k}
    assert audit["items"] == audit["judged_by_people"] == len(support)
    # worked by hand: the judge flipped a label where the test's seeded draw said so
    auto = dict(
        AutoLabel.objects.filter(judge=judge, kind=UnitKind.CITATION_SUPPORT).values_list(
            "docid", "grade"
        )
    )
    agree = sum(auto[k] == v for k, v in support.items())
    assert audit["labels"]["exact"] == pytest.approx(agree / len(support))
    assert audit["labels"]["n"] == len(support)
    assert set(audit["topics"]) == set(TOPICS)
    assert sum(t["n"] for t in audit["topics"].values()) == len(support)
    assert set(audit["rankings"]) == {"precision", "recall"}
    for ranking in audit["rankings"].values():
        tau = ranking["kendall_tau_b"]
        assert ranking["n_runs"] == 3 and (tau is None or -1.0 <= tau <= 1.0)


def test_the_audit_command(
    answered: tuple[Campaign, NuggetBank, Judge, dict[str, int]], annotator: Any
) -> None:
    from io import StringIO

    from django.core.management import call_command

    campaign, _, judge, truth = answered
    _true_scores(campaign, annotator, truth)
    out = StringIO()
    call_command("answer_audit", judge=judge.pk, kind="nugget_assignment", bank=1, stdout=out)
    text = out.getvalue()
    n = sum("@" not in k for k in truth)
    assert text.startswith(f"assigner v1 on nugget_assignment: {n} of {n} items labelled by both")
    assert "strict_vital_score: tau-b " in text and "401\t" in text


def test_from_submission_to_a_corrected_score_with_the_embedding_assigner(
    answered: tuple[Campaign, NuggetBank, Judge, dict[str, int]],
    annotator: Any,
    as_committed: Any,
) -> None:
    """The done-when of issue 34 in one path: answer runs submitted through the API (the
    fixture), the real embedding judge labelling every (answer, nugget) item through its job,
    a stratified sample queued and judged in the one queue, the scores corrected with an
    interval that holds the scores people give when they judge everything."""
    from judging.autojudge.answer_labels import answer_auto_labels, answer_run_request

    campaign, bank, _, truth = answered
    judge = judge_create(
        campaign=campaign, name="minilm", kind="embedding", model="all-MiniLM-L6-v2"
    )
    with as_committed():
        answer_run_request(judge=judge, kind=UnitKind.NUGGET_ASSIGNMENT, bank=bank)
    n_items = sum("@" not in k for k in truth)
    assert len(answer_auto_labels(judge, UnitKind.NUGGET_ASSIGNMENT)) == n_items
    hs = answer_sample_create(
        judge=judge,
        kind=UnitKind.NUGGET_ASSIGNMENT,
        bank=1,
        design="stratified",
        budget=n_items // 2,
        seed=2,
    )
    _judge_queue(campaign, annotator, truth)
    est = answer_estimate(hs)
    assert est.ready and est.calibration == "score"  # calibrated on the cosines
    true = _true_scores(campaign, annotator, truth)
    for row in est.runs:
        cell = row.measures["all_score"].ppi
        want = true[row.run.name].nuggets["all_score"].mean
        assert cell is not None and cell.low <= want <= cell.high, (row.run, cell, want)


def test_the_anchoring_arm_on_answer_items(
    answered: tuple[Campaign, NuggetBank, Judge, dict[str, int]],
    annotator: Any,
    admin_user: Any,
) -> None:
    """The assigner's labels suggested to assessors of answer items, a share hidden until they
    commit; agreement with the judge in both arms, as TREC 2024 RAG compared post-editing with
    judging from scratch."""
    from django.test import Client

    from judging.autojudge.answer_audit import answer_audit
    from judging.autojudge.suggestions import suggestions_configure

    campaign, _, judge, truth = answered
    suggestions_configure(campaign=campaign, judge=judge, hidden_share=0.5, by=admin_user)
    units.answer_items_queue(campaign=campaign, kind=UnitKind.CITATION_SUPPORT)
    who = account(annotator)
    lease = queue.lease_next(campaign=campaign, annotator=who)
    assert lease is not None
    web = Client()
    web.force_login(annotator)
    page = web.get(f"/annotate/{campaign.pk}/").content.decode()
    auto = {
        key: int(grade or 0)
        for key, grade in AutoLabel.objects.filter(
            judge=judge, kind=UnitKind.CITATION_SUPPORT
        ).values_list("docid", "grade")
    }
    label = {0: "No support", 1: "Partial support", 2: "Full support"}[auto[lease.slot.docid]]
    shown = f'<strong id="suggestion-label">{label}</strong>' in page
    hidden = 'id="suggestion" class="suggestion-hint" hidden' in page
    assert shown != hidden  # one arm or the other, on the kind's scale
    _judge_queue(campaign, annotator, truth)
    arms = set(
        Judgment.objects.filter(kind=UnitKind.CITATION_SUPPORT).values_list(
            "suggestion_arm", flat=True
        )
    )
    assert arms == {"shown", "hidden"}
    audit = answer_audit(judge=judge, kind=UnitKind.CITATION_SUPPORT)
    anchoring = audit["anchoring"]
    assert anchoring["kind"] == "citation_support" and anchoring["scale"] == [0, 1, 2]
    n = anchoring["shown"]["n"] + anchoring["hidden"]["n"]
    assert n == sum("@" in k for k in truth)


def test_the_audit_page(
    answered: tuple[Campaign, NuggetBank, Judge, dict[str, int]],
    annotator: Any,
    admin_user: Any,
    researcher: Any,
) -> None:
    from django.test import Client

    campaign, _, judge, truth = answered
    url = f"/campaigns/{campaign.pk}/judges/{judge.pk}/answer-audit/"
    web = Client()
    web.force_login(researcher)
    assert web.get(url).status_code == 403  # it names every run
    web.force_login(admin_user)
    page = web.get(url).content.decode()
    assert "Nugget assignment under nugget bank v1" in page
    assert 'id="answer-audit-rankings-note">undefined: ' in page
    _true_scores(campaign, annotator, truth)
    page = web.get(url + "?kind=citation_support").content.decode()
    assert 'id="answer-audit-rankings"' in page and 'id="answer-audit-topics"' in page
    bad = web.get(url + "?kind=document").content.decode()
    assert 'id="answer-audit-error">kind must be one of' in bad


def test_the_audit_api(
    answered: tuple[Campaign, NuggetBank, Judge, dict[str, int]],
    annotator: Any,
    admin_user: Any,
    api_client_for: Callable[[Any], Any],
) -> None:
    campaign, _, judge, truth = answered
    admin = api_client_for(admin_user)
    url = f"/api/v1/judges/{judge.pk}/answer-audit/"
    assert admin.get(url).status_code == 400  # no kind
    waiting = admin.get(url + "?kind=nugget_assignment").json()
    assert waiting["bank"] == 1 and waiting["rankings"] == {} and waiting["anchoring"] is None
    _true_scores(campaign, annotator, truth)
    audit = admin.get(url + "?kind=nugget_assignment").json()
    assert audit["judged_by_people"] == audit["items"] == sum("@" not in k for k in truth)
    assert set(audit["rankings"]) >= {"strict_vital_score", "all_score"}
