"""The authorization matrix's dataset: one campaign with every kind of object a URL can name.

Two researchers with a run each (the objects of the first one are "own", of the second one
"another's"), an annotator assigned to the campaign's topics who holds a lease and has judgments,
a second annotator with no assignment, lease or judgment, and an admin; a built pool, a published
qrels version with its reusability report, the runs' evaluations and bias reports (the default,
leave-one-group-out, and P@2 on topic 401 only). Built with the services and
workflows, tasks run as their commit would run them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from django.test import TestCase

PASSWORD = "matrix-pw-for-tests-only"

# Strings that only the owner of an object (or an admin) may ever read: no denied answer carries
# them, and no answer at all to an annotator carries a run's tag, group or description.
OWN_RUN_TAG = "rita-secret-run"
OWN_RUN_GROUP = "rita-secret-group"
OWN_RUN_DESCRIPTION = "rita-secret-description"
OTHER_RUN_TAG = "oscar-secret-run"
OTHER_RUN_GROUP = "oscar-secret-group"
OTHER_RUN_DESCRIPTION = "oscar-secret-description"


@dataclass
class Dataset:
    users: dict[str, Any]
    tokens: dict[str, str]
    campaign: Any
    run: Any  # the researcher's own run
    other_run: Any  # the other researcher's run
    pool: Any
    qrels: Any
    lease: Any  # the annotator's active lease
    judgment: Any  # one of the annotator's judgments
    objects: dict[str, Any] = field(default_factory=dict)  # admin: one object per model
    judge: Any = None  # an imported judge with labels over the pool, the researcher's submission
    embedding_judge: Any = None  # a judge that runs (no endpoint needed)
    judge_run: Any = None  # a finished run of the embedding judge
    audit: Any = None  # a stored audit of the imported judge
    sample: Any = None  # a human sample for the imported judge
    calibration: Any = None  # a failed calibration of the embedding judge
    account: Any = None  # the account the admin's users page acts on (the other annotator)
    chunking: Any = None  # the documents cut into paragraphs


def _docs() -> bytes:
    lines = []
    for qid in ("401", "402"):
        for i in range(1, 5):
            docid = f"d{qid}-{i}"
            lines.append(
                json.dumps(
                    {"docid": docid, "title": f"title {docid}", "text": f"the text of {docid}"}
                )
            )
    return "\n".join(lines).encode()


def _topics() -> bytes:
    return "\n".join(
        json.dumps({"qid": qid, "title": f"topic {qid}", "description": "d", "narrative": "n"})
        for qid in ("401", "402")
    ).encode()


def build() -> Dataset:
    from django.contrib.admin.sites import site
    from django.contrib.auth import get_user_model
    from rest_framework.authtoken.models import Token

    from judging.assessments.models import JudgingSlot, Judgment
    from judging.assessments.queue import judgment_record, lease_next
    from judging.campaigns.services import campaign_create, topics_import
    from judging.core.models import WorkerHeartbeat
    from judging.core.roles import ANNOTATOR, RESEARCHER, grant
    from judging.evaluation.bias import bias_report_request
    from judging.pools.models import PoolVersion
    from judging.workflows.documents import documents_imported
    from judging.workflows.passages import chunking_made
    from judging.workflows.pools import pool_requested
    from judging.workflows.qrels import qrels_published
    from judging.workflows.runs import run_submitted

    User = get_user_model()
    users: dict[str, Any] = {"anonymous": None}
    for role, name, group in (
        ("annotator", "matrix-ann", ANNOTATOR),
        ("other_annotator", "matrix-ann2", ANNOTATOR),
        ("researcher", "matrix-rita", RESEARCHER),
        ("other_researcher", "matrix-oscar", RESEARCHER),
        ("admin", "matrix-admin", None),
    ):
        user = User.objects.create_user(username=name, password=PASSWORD)
        if group is None:  # admins are staff superusers, as `createsuperuser` and the demo make
            user.is_staff = user.is_superuser = True
            user.save()
        else:
            grant(user, group)
        users[role] = user
    tokens = {role: Token.objects.create(user=user).key for role, user in users.items() if user}
    admin = users["admin"]

    with TestCase.captureOnCommitCallbacks(execute=True):
        campaign = campaign_create(
            name="Matrix campaign",
            scale=[
                {"grade": 0, "label": "No"},
                {"grade": 1, "label": "Some"},
                {"grade": 2, "label": "Yes"},
            ],
            pool_depth=3,
            created_by=admin,
        )
        topics_import(campaign=campaign, data=_topics(), fmt="jsonl", source="matrix-topics")
        documents_imported(campaign=campaign, data=_docs(), fmt="jsonl", source="matrix-docs")
        run = run_submitted(
            campaign=campaign,
            owner=users["researcher"],
            tag=OWN_RUN_TAG,
            group=OWN_RUN_GROUP,
            description=OWN_RUN_DESCRIPTION,
            results={q: {f"d{q}-{i}": 10.0 - i for i in (1, 2, 3)} for q in ("401", "402")},
        )
        other_run = run_submitted(
            campaign=campaign,
            owner=users["other_researcher"],
            tag=OTHER_RUN_TAG,
            group=OTHER_RUN_GROUP,
            description=OTHER_RUN_DESCRIPTION,
            results={q: {f"d{q}-{i}": 10.0 - i for i in (4, 3, 2)} for q in ("401", "402")},
        )
        pool_requested(campaign=campaign, strategy="depth", depth=3, requested_by=admin)
    pool = PoolVersion.objects.get(campaign=campaign)
    assert pool.number == 1, f"the matrix's pool was not built: {pool.state}"

    annotator = users["annotator"]
    with TestCase.captureOnCommitCallbacks(execute=True):
        # judge every item but the last, which stays leased to the annotator
        slots = JudgingSlot.objects.filter(campaign=campaign).count()
        assert slots >= 3, f"the matrix's pool queued {slots} items"
        for i in range(slots - 1):
            lease = lease_next(campaign=campaign, annotator=annotator)
            assert lease is not None
            judgment_record(lease_id=lease.pk, annotator=annotator, grade=1 + i % 2)
        lease = lease_next(campaign=campaign, annotator=annotator)
        assert lease is not None, "the matrix needs a lease left for the annotator"
        qrels, _ = qrels_published(campaign=campaign, note="matrix v1", created_by=admin)
        bias_report_request(campaign=campaign)
        bias_report_request(campaign=campaign, kind="loo_group")
        bias_report_request(campaign=campaign, measure="P@2", topics="401")
    judgment = Judgment.objects.filter(annotator=annotator).order_by("pk").first()
    chunking = chunking_made(campaign=campaign, name="para", spec="paragraph", created_by=admin)
    judge, embedding_judge, judge_run = _judges(campaign, pool, admin, users["researcher"])
    audit, sample = _audit_and_sample(judge, qrels, pool)
    calibration = _calibration(embedding_judge, qrels, pool)
    _nugget_banks(campaign, qrels, admin)
    assert judgment is not None
    WorkerHeartbeat.objects.create(hostname="matrix-host", token="matrix-token")

    data = Dataset(
        users=users,
        tokens=tokens,
        campaign=campaign,
        run=run,
        other_run=other_run,
        pool=pool,
        qrels=qrels,
        lease=lease,
        judgment=judgment,
        judge=judge,
        embedding_judge=embedding_judge,
        judge_run=judge_run,
        audit=audit,
        sample=sample,
        calibration=calibration,
        account=users["other_annotator"],
        chunking=chunking,
    )
    for model in site._registry:
        key = f"{model._meta.app_label}_{model._meta.model_name}"
        data.objects[key] = model._default_manager.order_by("pk").first()
    # the admin's change pages of runs and users show the researcher's own objects
    data.objects["campaigns_run"] = run
    data.objects["auth_user"] = users["researcher"]
    return data


def _judges(campaign: Any, pool: Any, admin: Any, participant: Any) -> tuple[Any, Any, Any]:
    """An imported judge with labels over the pool, submitted by the researcher (a participant
    of a judges' track: the other researcher never reads it), the organisers' embedding judge
    and a finished run of it (the matrix configures no chat endpoint)."""
    from judging.autojudge.models import JudgeKind, JudgeRun
    from judging.autojudge.services import judge_create, labels_import

    judge = judge_create(
        campaign=campaign,
        name="matrix-file",
        kind=JudgeKind.IMPORTED,
        model="m",
        created_by=participant,
        owner=participant,
        pool=pool,
        saw_human_qrels=False,
    )
    labels_import(judge=judge, data=b"401 0 d401-1 2\n401 0 d401-2 1\n402 0 d402-1 0\n")
    embedding = judge_create(
        campaign=campaign,
        name="matrix-minilm",
        kind=JudgeKind.EMBEDDING,
        model="all-MiniLM-L6-v2",
        created_by=admin,
    )
    from judging.core.models import Job

    done = Job.objects.create(kind="judge_run", key="judge-run:test", state="done")
    run = JudgeRun.objects.create(judge=embedding, pool=pool, job=done, total=pool.num_documents)
    return judge, embedding, run


def _audit_and_sample(judge: Any, qrels: Any, pool: Any) -> tuple[Any, Any]:
    """A stored (empty) audit of the imported judge and a drawn human sample for it."""
    from judging.autojudge.estimates import sample_create
    from judging.autojudge.models import JudgeAudit
    from judging.core.models import Job

    done = Job.objects.create(kind="judge_audit", key="judge-audit:matrix", state="done")
    audit = JudgeAudit.objects.create(judge=judge, human=qrels, pool=pool, job=done)
    sample = sample_create(judge=judge, pool=pool, design="uniform", budget=2, seed=0)
    return audit, sample


def _calibration(judge: Any, qrels: Any, pool: Any) -> Any:
    """A stored calibration of the embedding judge (failed: the matrix loads no model)."""
    from judging.autojudge.models import JudgeCalibration
    from judging.core.models import Job

    failed = Job.objects.create(
        kind="judge_calibration",
        key="judge-calibration:matrix",
        state="failed",
        error="Conflict: nothing to fit",
    )
    return JudgeCalibration.objects.create(judge=judge, human=qrels, pool=pool, job=failed)


def _nugget_banks(campaign: Any, qrels: Any, admin: Any) -> None:
    """Nugget bank v1 (published, one nugget of topic 401) and v2, a draft copy of it."""
    from judging.assessments.nuggets import bank_create, bank_publish
    from metrics.io.nuggets import DraftNugget

    nuggets = {"401": [DraftNugget("the matrix's nugget", "vital", ("d401-1",))]}
    first = bank_create(
        campaign=campaign, by=admin, source="imported", nuggets=nuggets, qrels=qrels
    )
    bank_publish(bank=first, by=admin)
    bank_create(campaign=campaign, by=admin, source="copied", based_on=first)
