"""Pools of what the generator saw (issue 35, point 4): a pool version's ``segments`` takes from
an answer run, for a topic it answered, every reference (``received``) or the references its
sentences cite (``cited``), whatever the depth; runs without answers contribute their ranked
list to the depth. The expected pools are worked by hand from the runs below."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from judging.autojudge import services as judges
from judging.autojudge.models import JudgeKind
from judging.campaigns.models import Document
from judging.core.errors import InvalidInput
from judging.pools.models import PoolState, PoolVersion
from judging.pools.services import pool_rankings
from judging.workflows.pools import pool_requested
from judging.workflows.runs import run_submitted
from tests._answer_runs import submit_answers
from tests.test_pools import as_results, pooled_docs

pytestmark = pytest.mark.django_db

DEPTH = 2
RANKED = {"401": ["r1", "r2", "r3", "r4"], "402": ["r5", "r6", "r7"]}
# team-a cites a1 and a3 on 401 (a3 below the depth), b3 on 402 (below the depth)
TEAM_A: list[dict[str, Any]] = [
    {
        "run_id": "team-a",
        "topic_id": "401",
        "references": ["a1", "a2", "a3", "a4"],
        "answer": [
            {"text": "First.", "citations": [0]},
            {"text": "Second.", "citations": [2, 0]},
        ],
    },
    {
        "run_id": "team-a",
        "topic_id": "402",
        "references": ["b1", "b2", "b3"],
        "answer": [{"text": "Only.", "citations": [2]}],
    },
]
# team-b cites c1 on 401 (a2 received, not cited) and nothing on 403
TEAM_B: list[dict[str, Any]] = [
    {
        "run_id": "team-b",
        "topic_id": "401",
        "references": ["a2", "c1", "c2"],
        "answer": [{"text": "One.", "citations": [1]}],
    },
    {
        "run_id": "team-b",
        "topic_id": "403",
        "references": ["c3", "c4", "c5"],
        "answer": [{"text": "Nothing cited.", "citations": []}],
    },
]
# By hand: the ranked run's top 2 on every topic, plus per segments what the answers give.
RANKED_TOP = {"401": {"r1", "r2"}, "402": {"r5", "r6"}}
CITED = {"401": RANKED_TOP["401"] | {"a1", "a3", "c1"}, "402": RANKED_TOP["402"] | {"b3"}}
RECEIVED = {
    "401": RANKED_TOP["401"] | {"a1", "a2", "a3", "a4", "c1", "c2"},
    "402": RANKED_TOP["402"] | {"b1", "b2", "b3"},
    "403": {"c3", "c4", "c5"},
}
# segments ranked (the default): the answer runs' references cut to the depth, as any run
RANKED_POOL = {
    "401": RANKED_TOP["401"] | {"a1", "a2", "c1"},
    "402": RANKED_TOP["402"] | {"b1", "b2"},
    "403": {"c3", "c4"},
}


@pytest.fixture
def answered(campaign: Any, researcher: Any, other_researcher: Any, api_client_for: Any) -> Any:
    """One ranked run and two answer runs, every segment with a text, pool depth 2."""
    run_submitted(campaign=campaign, owner=researcher, tag="ranked", results=as_results(RANKED))
    docids = {d for ds in RANKED.values() for d in ds}
    docids |= {d for line in TEAM_A + TEAM_B for d in line["references"]}
    Document.objects.bulk_create(
        Document(campaign=campaign, docid=d, text=f"text of {d}") for d in sorted(docids)
    )
    submit_answers(api_client_for(researcher), campaign, TEAM_A)
    submit_answers(api_client_for(other_researcher), campaign, TEAM_B)
    campaign.pool_depth = DEPTH
    campaign.save()
    return campaign


def built(campaign: Any, as_committed: Any, **request: Any) -> PoolVersion:
    with as_committed():
        version, created = pool_requested(campaign=campaign, **request)
    assert created
    version.refresh_from_db()
    assert version.state == PoolState.BUILT, version.error
    return version


def as_sets(version: PoolVersion) -> dict[str, set[str]]:
    return {q: set(ds) for q, ds in pooled_docs(version).items()}


def test_a_cited_pool_holds_what_the_answers_cite_and_the_ranked_runs_top_depth(
    answered: Any, as_committed: Any
) -> None:
    version = built(answered, as_committed, segments="cited")
    assert version.segments == "cited"
    # a3 and b3 sit below the depth in their references and are pooled all the same; a2, a4,
    # b1, b2 and c2 were received but not cited; topic 403's answer cites nothing
    assert as_sets(version) == CITED
    assert version.num_documents == sum(len(s) for s in CITED.values()) == 8


def test_a_received_pool_holds_every_reference_whatever_the_depth(
    answered: Any, as_committed: Any
) -> None:
    version = built(answered, as_committed, segments="received")
    assert version.segments == "received"
    assert as_sets(version) == RECEIVED


def test_by_default_answer_runs_contribute_their_references_to_the_depth(
    answered: Any, as_committed: Any
) -> None:
    version = built(answered, as_committed)
    assert version.segments == "ranked"
    assert as_sets(version) == RANKED_POOL


def test_the_budget_still_caps_a_cited_pool(answered: Any, as_committed: Any) -> None:
    version = built(answered, as_committed, segments="cited", strategy="rank", budget=3)
    got = pooled_docs(version)
    # take-N by best rank over the restricted lists: ranked [r1 r2], team-a [a1 a3],
    # team-b [c1] on 401: rank 1 is a1 c1 r1, all three within the budget
    assert got["401"] == ["a1", "c1", "r1"]
    assert set(got["402"]) <= CITED["402"] and len(got["402"]) == 3


class Recording:
    """A labeller that grades every pair 1 and remembers the pairs it was asked for."""

    seen: list[tuple[str, str]] = []

    def __init__(self, judge: Any) -> None:
        pass

    def label(self, pairs: Sequence[tuple[str, str]]) -> Iterable[judges.Label]:
        def generate() -> Iterator[judges.Label]:
            for q, d in pairs:
                Recording.seen.append((q, d))
                yield judges.Label(q, d, 1)

        return generate()


def test_a_judge_run_over_a_cited_pool_labels_only_the_cited_pairs(
    answered: Any, as_committed: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    version = built(answered, as_committed, segments="cited")
    expected = {(q, d) for q, ds in CITED.items() for d in ds}
    assert set(judges.pool_pairs(version)) == expected
    monkeypatch.setattr(Recording, "seen", [])
    monkeypatch.setitem(judges._LABELLERS, JudgeKind.EMBEDDING, Recording)
    judge = judges.judge_create(
        campaign=answered, name="minilm", kind=JudgeKind.EMBEDDING, model="all-MiniLM-L6-v2"
    )
    with as_committed():
        run = judges.judge_run_request(judge=judge, pool=version)
    run.refresh_from_db()
    assert run.state == "done", run.error
    assert sorted(Recording.seen) == sorted(expected)


def test_an_adaptive_strategy_at_lease_time_orders_by_the_cited_lists(
    campaign: Any, researcher: Any, annotator: Any, api_client_for: Any, as_committed: Any
) -> None:
    from judging.assessments.queue import judgment_record, lease_next
    from metrics.pooling.strategies import make_strategy

    run_submitted(
        campaign=campaign,
        owner=researcher,
        tag="R",
        results=as_results({"401": ["x1", "x2", "x3", "x4"]}),
    )
    refs = ["s1", "s2", "s3", "s4", "s5", "s6"]
    answer = [{"text": f"Sentence {i}.", "citations": [i]} for i in (1, 3, 5)]
    submit_answers(
        api_client_for(researcher),
        campaign,
        [{"run_id": "team-a", "topic_id": "401", "references": refs, "answer": answer}],
    )
    Document.objects.bulk_create(
        Document(campaign=campaign, docid=d, text=d) for d in ["x1", "x2", "x3", "x4", *refs]
    )
    with as_committed():
        version, _ = pool_requested(campaign=campaign, strategy="mtf", depth=3, segments="cited")
    cited = {"R": ["x1", "x2", "x3"], "team-a": ["s2", "s4", "s6"]}
    topic = campaign.topics.get(qid="401")
    assert {t: r["401"] for t, r in pool_rankings(version, topic=topic).items()} == cited

    oracle = {"s2": 2, "s4": 2, "s6": 1}
    served = []
    while (lease := lease_next(campaign=campaign, annotator=annotator)) is not None:
        served.append(lease.slot.docid)
        judgment_record(
            lease_id=lease.pk, annotator=annotator, grade=oracle.get(lease.slot.docid, 0)
        )
    # The strategy driven directly over the cited lists: after x1 (not relevant) it moves to
    # team-a and stays while it finds relevant segments. Over the references' top 3 instead
    # (s1 s2 s3) it would serve x2 and x3 before s4.
    direct = make_strategy("mtf")
    state = direct.start(cited, topic="401", relevance_level=1)
    expected: list[str] = []
    feedback: dict[str, int] = {}
    while (doc := direct.next_document(state, feedback)) is not None:
        expected.append(doc)
        feedback = {doc: oracle.get(doc, 0)}
    assert served == expected == ["x1", "s2", "s4", "s6", "x2", "x3"]


def test_a_restriction_with_no_answer_run_to_restrict_is_refused_naming_segments(
    answered: Any,
) -> None:
    ranked_only = list(answered.runs.filter(tag="ranked"))
    with pytest.raises(InvalidInput) as caught:
        pool_requested(campaign=answered, runs=ranked_only, segments="cited")
    (problem,) = caught.value.problems
    assert problem.location == "segments"
    assert "none of the contributing runs is an answer run" in problem.message
    assert not PoolVersion.objects.exists()
    # ranked needs no answer run
    version, created = pool_requested(campaign=answered, runs=ranked_only)
    assert created and version.segments == "ranked"


def test_a_sampled_pool_of_cited_segments_is_refused(answered: Any) -> None:
    with pytest.raises(InvalidInput) as caught:
        pool_requested(campaign=answered, strategy="stratified", segments="received")
    (problem,) = caught.value.problems
    assert problem.location == "segments" and "sampling strategy 'stratified'" in problem.message


def test_an_unknown_segments_value_is_refused_naming_the_known_ones(answered: Any) -> None:
    with pytest.raises(InvalidInput) as caught:
        pool_requested(campaign=answered, segments="read")
    (problem,) = caught.value.problems
    assert problem.location == "segments"
    assert "known: ranked, received, cited" in problem.message


def test_the_api_requests_a_cited_pool_and_shows_its_segments(
    answered: Any, admin_user: Any, api_client_for: Any, as_committed: Any
) -> None:
    client = api_client_for(admin_user)
    with as_committed():
        r = client.post(
            f"/api/v1/campaigns/{answered.pk}/pools/", {"segments": "cited"}, format="json"
        )
    assert r.status_code == 202, r.content
    assert r.json()["segments"] == "cited"
    version = PoolVersion.objects.get()
    assert as_sets(version) == CITED
    assert client.get(f"/api/v1/pools/{version.pk}/").json()["segments"] == "cited"
    listed = client.get(f"/api/v1/campaigns/{answered.pk}/pools/").json()["results"]
    assert [v["segments"] for v in listed] == ["cited"]


@pytest.mark.parametrize("value", ["read", 3, None])
def test_the_api_refuses_a_bad_segments_value_with_a_400_naming_it(
    answered: Any, admin_user: Any, api_client_for: Any, value: Any
) -> None:
    r = api_client_for(admin_user).post(
        f"/api/v1/campaigns/{answered.pk}/pools/", {"segments": value}, format="json"
    )
    assert r.status_code == 400, r.content
    body = r.json()
    assert [p["location"] for p in body["problems"]] == ["segments"], body
    assert not PoolVersion.objects.exists()


def test_the_api_refuses_a_restriction_without_answer_runs_naming_segments(
    answered: Any, admin_user: Any, api_client_for: Any
) -> None:
    r = api_client_for(admin_user).post(
        f"/api/v1/campaigns/{answered.pk}/pools/",
        {"segments": "received", "runs": ["ranked"]},
        format="json",
    )
    assert r.status_code == 400, r.content
    (problem,) = r.json()["problems"]
    assert problem["location"] == "segments" and "nothing to restrict" in problem["message"]


def test_build_pool_command_takes_segments(answered: Any) -> None:
    out = StringIO()
    call_command("build_pool", campaign=answered.name, segments="received", now=True, stdout=out)
    assert "pool version 1 built (answer runs' received segments)" in out.getvalue()
    assert as_sets(PoolVersion.objects.get()) == RECEIVED
    with pytest.raises(CommandError, match="invalid choice: 'read'"):
        call_command("build_pool", "--campaign", answered.name, "--segments", "read")


def test_the_pool_versions_page_shows_its_segments_beside_its_strategy(
    answered: Any, admin_user: Any, as_committed: Any
) -> None:
    version = built(answered, as_committed, segments="cited")
    admin_user.is_superuser = True  # the admin site's pages are the superuser's
    admin_user.save()
    client = Client()
    client.force_login(admin_user)
    page = client.get(f"/admin/pools/poolversion/{version.pk}/change/").content.decode()
    assert "What the answers cite" in page
    listing = client.get("/admin/pools/poolversion/").content.decode()
    assert "What the answers cite" in listing
