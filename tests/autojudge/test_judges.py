"""Automatic judges as versioned things, their labels kept apart from human judgments, runs over a
pool version (progress, cost, one failing pair stops nothing else), and automatic and hybrid
qrels versions that say what they rest on, row by row."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import pytest
from django.db import IntegrityError, transaction

from judging.assessments.models import QrelsEntry, QrelsKind, QrelsVersion
from judging.assessments.selectors import qrels_version
from judging.assessments.services import qrels_publish
from judging.autojudge import services
from judging.autojudge.models import AutoLabel, Judge, JudgeKind, JudgeRun, LabelStatus
from judging.campaigns.models import Campaign
from judging.core.errors import Conflict, InvalidInput
from judging.evaluation.selectors import latest_qrels_version
from judging.pools.models import PoolVersion
from judging.workflows.qrels import qrels_imported
from tests.knobs import override_knobs
from tests.test_judging_api import THREE_TOPICS

pytestmark = pytest.mark.django_db

ENDPOINTS = {"local": {"base_url": "http://127.0.0.1:9/v1", "api_key": "sk-secret-123"}}


def imported_judge(campaign: Campaign, name: str = "umbrela-file") -> Judge:
    return services.judge_create(
        campaign=campaign, name=name, kind=JudgeKind.IMPORTED, model="gpt-4o"
    )


def test_versions_count_up_and_an_unused_identical_version_is_reused(campaign: Campaign) -> None:
    first = imported_judge(campaign)
    assert (first.name, first.version) == ("umbrela-file", 1)
    assert imported_judge(campaign).pk == first.pk  # same identity, never used: no duplicate
    second = services.judge_create(
        campaign=campaign, name="umbrela-file", kind=JudgeKind.IMPORTED, model="gpt-4o-mini"
    )
    assert second.version == 2
    assert str(second) == "umbrela-file v2"


def test_a_version_that_labelled_something_never_changes(campaign: Campaign) -> None:
    judge = imported_judge(campaign)
    services.store_labels(judge, [services.Label("401", "d401-1", 2)])
    judge.refresh_from_db()
    assert judge.locked_at is not None
    judge.model = "something-else"
    with pytest.raises(Conflict, match="model never change"):
        judge.save()
    judge.refresh_from_db()
    judge.description = "descriptions may change"
    judge.save()  # not part of what the version says
    # the same name and identity again: a new version, since v1 is used and differs from nothing,
    # judge_create returns it (identical); a changed prompt makes v2
    again = services.judge_create(
        campaign=campaign,
        name=judge.name,
        kind=JudgeKind.IMPORTED,
        model="gpt-4o",
        params={"note": "x"},
    )
    assert again.version == 2


def test_bad_judges_are_refused_with_the_field_named(campaign: Campaign) -> None:
    with pytest.raises(InvalidInput, match="name"):
        services.judge_create(campaign=campaign, name="Bad Name", kind="imported", model="m")
    with pytest.raises(InvalidInput, match="kind"):
        services.judge_create(campaign=campaign, name="x", kind="oracle", model="m")
    with pytest.raises(InvalidInput, match="model"):
        services.judge_create(campaign=campaign, name="x", kind="imported", model=" ")
    with pytest.raises(InvalidInput, match=r"params\.endpoint"):
        services.judge_create(
            campaign=campaign, name="x", kind=JudgeKind.OPENAI, model="m", params={}
        )
    with (
        override_knobs(llm_endpoints=ENDPOINTS),
        pytest.raises(InvalidInput, match="never from a judge"),
    ):
        services.judge_create(
            campaign=campaign,
            name="x",
            kind=JudgeKind.OPENAI,
            model="m",
            params={"endpoint": "local", "api_key": "sk-other"},
        )
    assert not Judge.objects.exists()


def test_labels_off_the_scale_or_on_unknown_topics_store_nothing(campaign: Campaign) -> None:
    judge = imported_judge(campaign)
    with pytest.raises(InvalidInput) as caught:
        services.store_labels(
            judge,
            [
                services.Label("401", "a", 1),
                services.Label("401", "b", 7),
                services.Label("999", "c", 1),
            ],
        )
    where = [p.location for p in caught.value.problems]
    assert where == ["401 b", "999 c"]
    assert not AutoLabel.objects.exists()
    judge.refresh_from_db()
    assert judge.locked_at is None  # nothing stored: nothing used


def test_one_label_per_judge_version_topic_and_document(campaign: Campaign) -> None:
    judge = imported_judge(campaign)
    services.store_labels(judge, [services.Label("401", "a", 1)])
    # a graded pair is not replaced (the label is the cache: the version already answered)
    assert services.store_labels(judge, [services.Label("401", "a", 2)]) == 0
    assert services.labels(judge) == {("401", "a"): 1}
    # a failed pair is asked again and replaced; another failed pair sharing its topic with one
    # and its document with another answered pair keeps its record
    failed = [
        services.Label("401", "b", None, status=LabelStatus.ERROR),
        services.Label("402", "c", None, status=LabelStatus.ERROR),
    ]
    services.store_labels(judge, failed)
    answered = [
        services.Label("401", "b", 0),
        services.Label("402", "b", 1),  # topic 402, as the failed (402, c)
        services.Label("401", "c", 2),  # document c, as the failed (402, c)
    ]
    services.store_labels(judge, answered)
    assert services.labels(judge) == {
        ("401", "a"): 1,
        ("401", "b"): 0,
        ("402", "b"): 1,
        ("401", "c"): 2,
    }
    assert AutoLabel.objects.filter(judge=judge, topic__qid="402", docid="c").exists()
    with pytest.raises(IntegrityError), transaction.atomic():
        AutoLabel.objects.create(judge=judge, topic=campaign.topics.get(qid="401"), docid="a")


class Scripted:
    """A labeller that grades by docid and fails on the documents it is told to."""

    def __init__(self, judge: Judge, failing: Sequence[str] = (), boom_after: int | None = None):
        self.failing = set(failing)
        self.boom_after = boom_after
        self.seen: list[tuple[str, str]] = []

    def label(self, pairs: Sequence[tuple[str, str]]) -> Iterable[services.Label]:
        def generate() -> Iterator[services.Label]:
            for n, (q, d) in enumerate(pairs):
                if self.boom_after is not None and n == self.boom_after:
                    raise RuntimeError("endpoint http://127.0.0.1:9 said no to sk-secret-123")
                self.seen.append((q, d))
                if d in self.failing:
                    yield services.Label(q, d, None, status=LabelStatus.ERROR, answer="503")
                else:
                    grade = int(d[-1]) % 3
                    yield services.Label(
                        q, d, grade, prompt_tokens=100, completion_tokens=5, cost=0.01
                    )

        return generate()


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    made: dict[str, Any] = {"failing": (), "boom_after": None, "labellers": []}

    def factory(judge: Judge) -> Scripted:
        labeller = Scripted(judge, made["failing"], made["boom_after"])
        made["labellers"].append(labeller)
        return labeller

    monkeypatch.setitem(services._LABELLERS, JudgeKind.EMBEDDING, factory)
    return made


def embedding_judge(campaign: Campaign) -> Judge:
    return services.judge_create(
        campaign=campaign, name="minilm", kind=JudgeKind.EMBEDDING, model="all-MiniLM-L6-v2"
    )


def test_a_run_labels_the_pool_counts_cost_and_a_failing_pair_stops_nothing_else(
    campaign: Campaign, pooled: PoolVersion, scripted: dict[str, Any], as_committed: Any
) -> None:
    judge = embedding_judge(campaign)
    scripted["failing"] = ("d402-2",)
    with as_committed():
        run = services.judge_run_request(judge=judge, pool=pooled)
    run.refresh_from_db()
    assert run.state == "done", run.error
    assert (run.total, run.done, run.ok, run.errors, run.cached) == (12, 12, 11, 1, 0)
    assert run.prompt_tokens == 1100 and run.completion_tokens == 55
    assert run.cost == pytest.approx(0.11)
    assert len(services.labels(judge)) == 11
    # a second run asks only for the pair that failed: the labels are the cache
    with as_committed():
        again = services.judge_run_request(judge=judge, pool=pooled)
    again.refresh_from_db()
    assert (again.cached, again.done, again.errors) == (11, 12, 1)
    assert scripted["labellers"][-1].seen == [("402", "d402-2")]


def test_a_labeller_that_breaks_fails_the_run_keeps_what_it_stored_and_hides_the_key(
    campaign: Campaign, pooled: PoolVersion, scripted: dict[str, Any], as_committed: Any
) -> None:
    scripted["boom_after"] = 3
    with override_knobs(llm_endpoints=ENDPOINTS, autojudge_batch=2):
        judge = embedding_judge(campaign)
        with as_committed():
            run = services.judge_run_request(judge=judge, pool=pooled)
    run.refresh_from_db()
    assert run.state == "failed"
    assert "said no" in run.error and "sk-secret-123" not in run.error and "***" in run.error
    assert len(services.labels(judge)) == 3  # stored before the failure: kept


def test_an_imported_judge_does_not_run_and_runs_need_a_built_pool_of_the_campaign(
    campaign: Campaign, pooled: PoolVersion, admin_user: Any
) -> None:
    with pytest.raises(Conflict, match="imported"):
        services.judge_run_request(judge=imported_judge(campaign), pool=pooled)
    from judging.campaigns.services import campaign_create

    other = campaign_create(name="Other", scale=campaign.scale, created_by=admin_user)
    stranger = services.judge_create(
        campaign=other, name="minilm", kind=JudgeKind.EMBEDDING, model="m"
    )
    with pytest.raises(InvalidInput, match="another campaign"):
        services.judge_run_request(judge=stranger, pool=pooled)
    assert not JudgeRun.objects.exists()


def _grades(version: QrelsVersion) -> dict[tuple[str, str], tuple[int, int | None]]:
    rows = QrelsEntry.objects.filter(version=version).values_list(
        "topic__qid", "docid", "grade", "judge_id"
    )
    return {(q, d): (g, j) for q, d, g, j in rows}


def test_automatic_and_hybrid_qrels_keep_provenance_and_never_become_the_default(
    campaign: Campaign, pooled: PoolVersion, admin_user: Any, as_committed: Any
) -> None:
    with as_committed():
        human = qrels_imported(
            campaign=campaign, data=b"401 0 d401-1 2\n401 0 d401-2 0\n402 0 d402-1 1\n"
        )
    judge = imported_judge(campaign)
    services.store_labels(
        judge,
        [services.Label(q, d, 1) for q, ds in THREE_TOPICS.items() for d in ds if d != "d403-4"],
    )
    automatic = services.automatic_qrels(judge=judge, pool=pooled, created_by=admin_user)
    assert automatic.kind == QrelsKind.AUTOMATIC
    assert automatic.judges == [judge.describe()]
    assert automatic.kind_label == "automatic (umbrela-file v1)"
    assert automatic.label == f"v{automatic.number} · automatic (umbrela-file v1)"
    rows = _grades(automatic)
    assert len(rows) == 11 and {j for _, j in rows.values()} == {judge.pk}
    assert "1 pool document(s) without an automatic grade left out" in automatic.note

    hybrid = services.hybrid_qrels(judge=judge, pool=pooled, human=human)
    assert hybrid.kind_label == "hybrid (human + umbrela-file v1)"
    rows = _grades(hybrid)
    assert rows[("401", "d401-1")] == (2, None)  # the person's grade, marked human
    assert rows[("401", "d401-2")] == (0, None)
    assert rows[("401", "d401-3")] == (1, judge.pk)  # the judge's, marked with the judge
    assert len(rows) == 11
    assert "3 human grade(s) from qrels v1" in hybrid.note
    assert "8 automatic grade(s)" in hybrid.note

    # "the latest qrels" stays the latest human version; automatic ones are read by number
    assert qrels_version(campaign) == human
    assert qrels_version(campaign, hybrid.number) == hybrid
    assert latest_qrels_version(campaign.pk) == human
    # publishing overlays the human import, never an automatic version
    version, created = qrels_publish(campaign=campaign)
    assert (version, created) == (human, False)
    with pytest.raises(InvalidInput, match="not human"):
        services.hybrid_qrels(judge=judge, pool=pooled, human=automatic)


def test_a_stored_version_keeps_its_kind_and_judges(
    campaign: Campaign, pooled: PoolVersion
) -> None:
    from judging.assessments.immutability import is_immutability_error

    judge = imported_judge(campaign)
    services.store_labels(judge, [services.Label("401", "d401-1", 1)])
    automatic = services.automatic_qrels(judge=judge, pool=pooled)
    changes: list[dict[str, Any]] = [{"kind": QrelsKind.HUMAN}, {"judges": []}]
    for change in changes:
        with pytest.raises(IntegrityError) as caught, transaction.atomic():
            QrelsVersion.objects.filter(pk=automatic.pk).update(**change)
        assert is_immutability_error(caught.value)
