"""Loading the demo campaign and the demo users (local use only)."""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction

from judging.campaigns.models import Campaign
from judging.campaigns.services import (
    campaign_create,
    campaign_update,
    topics_import,
)
from judging.core.bulk import statistics_refresh
from judging.core.roles import ANNOTATOR, RESEARCHER, Account, grant
from judging.demo.data import build
from judging.workflows.documents import documents_imported
from judging.workflows.pools import pool_requested
from judging.workflows.qrels import qrels_published
from judging.workflows.runs import run_submitted

DEMO_CAMPAIGN = "Demo: energy, climate and health news"
DEMO_POOL_DEPTH = 10
DEMO_OVERLAP = 0.25  # a quarter of the items get a second judgment, for agreement
# The headline measure: first of the campaign's measures (the leaderboard sorts by it) and the
# measure of the bias report the demo computes. P@10 because (1) its upper bound (unjudged
# documents in the top 10 counted relevant) is simply P@10 plus the share of the top 10 left
# unjudged, never lowered by a larger normaliser as nDCG@10's can be; (2) every estimator of the
# penalty applies to P@k (Lipani et al.'s are defined for P@k only, or P@k and R@k), so the bias
# report shows them all with their measured error; (3) the pooled runs' top 10 are all judged at
# pool depth 10, so their P@10 cannot move when the pool grows: a rank movement between qrels
# versions is the correction of the unpooled run's score, nothing else.
DEMO_HEADLINE = "P@10"
# the recall the bias report's before/after compares: R@(5 x the report's depth)
DEMO_RECALL = f"R@{5 * DEMO_POOL_DEPTH}"
DEMO_MEASURES = ["P@10", "nDCG@10", "R@50", "AP", "RR@10", "Bpref", "Judged@10"]
# The second demo campaign: the same collection judged from a stratified sample of a depth-20
# pool (ranks 1-3 of every pooled run all judged, 4-20 three in ten), published as sampled qrels,
# so that its leaderboard shows the inferred measures (issue 32)
DEMO_SAMPLED_CAMPAIGN = "Demo: a sampled pool (the same news)"
DEMO_SAMPLED_STRATA = [[3, 1.0], [20, 0.3]]


# The simulated assessors judge dozens of items a second, faster than autovacuum refreshes
# PostgreSQL's statistics: they are refreshed before the first judgment and every this many.
# Without it the planner, still estimating a new pool's slots and an assessor's leases at a few
# rows, finds the assessor's latest leases (``queue.lease_next``) by rescanning all of them for
# each slot: 50 ms a lease after 700 (the retrieval story's assessor, ``rag_load``).
STATISTICS_EVERY = 100


def judging_statistics_refresh() -> None:
    """The statistics of the tables each judgment reads and grows (``statistics_refresh``)."""
    from judging.assessments.models import JudgingSlot, Judgment, Lease

    statistics_refresh(JudgingSlot, Lease, Judgment)


@dataclass(frozen=True)
class DemoUser:
    username: str
    password: str
    role: str


# Local demo credentials, printed by `make demo`. Never deploy them: `load_demo` refuses to run
# with DEBUG off unless forced.
DEMO_USERS = (
    DemoUser("admin", "admin-demo", "admin"),
    DemoUser("researcher", "researcher-demo", RESEARCHER),
    DemoUser("annotator", "annotator-demo", ANNOTATOR),
)


def demo_users_ensure() -> dict[str, Account]:
    users: dict[str, Account] = {}
    for spec in DEMO_USERS:
        user, _ = Account.objects.get_or_create(username=spec.username)
        user.set_password(spec.password)
        if spec.role == "admin":
            user.is_staff = True
            user.is_superuser = True
        user.save()
        if spec.role != "admin":
            grant(user, spec.role)
        users[spec.role] = user
    return users


def _fill(campaign: Campaign, demo: Any, users: dict[str, Account]) -> None:
    """The generated collection's topics, documents and runs, into ``campaign``."""
    topics = "\n".join(
        json.dumps(
            {
                "qid": t.qid,
                "title": t.title,
                "description": t.description,
                "narrative": t.narrative,
                "tags": list(t.tags),
            }
        )
        for t in demo.topics
    )
    topics_import(campaign=campaign, data=topics.encode(), fmt="jsonl", source="demo-topics")
    docs = "\n".join(
        json.dumps({"docid": d.docid, "title": d.title, "text": d.text}) for d in demo.documents
    )
    documents_imported(campaign=campaign, data=docs.encode(), fmt="jsonl", source="demo-documents")
    for run in demo.runs:
        run_submitted(
            campaign=campaign,
            owner=users[RESEARCHER],
            results=run.results,
            tag=run.tag,
            group=run.group,
            description=run.description,
            pooled=run.pooled,
        )


@transaction.atomic
def demo_load() -> Campaign | None:
    """Create the demo users, and the demo campaign if the database has no campaign yet.

    Returns the campaign when it was created, None when the database already had campaigns.
    """
    users = demo_users_ensure()
    if Campaign.objects.exists():
        return None
    demo = build()
    campaign = campaign_create(
        name=DEMO_CAMPAIGN,
        pool_depth=DEMO_POOL_DEPTH,
        overlap=DEMO_OVERLAP,
        description="A small generated newsroom collection: six topics, a few hundred "
        "documents and six runs. One run (novel-neural) is not pooled.",
        guidelines="Judge each news article against the topic: its title, description and "
        "narrative say what counts. Grade the article, not the source; a short mention "
        "is partially relevant at most.",
        created_by=users["admin"],
    )
    campaign = campaign_update(campaign=campaign, data={"measures": DEMO_MEASURES})
    _fill(campaign, demo, users)
    # Pool version 1: depth-10 union of the pooled runs, built when this transaction commits
    # (inline with the embedded default, by a worker when a broker is configured).
    pool_requested(
        campaign=campaign, strategy="depth", depth=DEMO_POOL_DEPTH, requested_by=users["admin"]
    )
    return campaign


# Two simulated assessors judge pool version 1, except the last topic, which is left for the demo
# annotator to judge in the browser. Their grades follow the generator's hidden truth; the second
# assessor is off by one grade on about one item in six, so that agreement has something to show.
SIMULATED_ASSESSORS = ("assessor-a", "assessor-b")
LEFT_FOR_THE_ANNOTATOR = "6"


def _simulated_grade(assessor: str, qid: str, docid: str, truth: int) -> int:
    if assessor == SIMULATED_ASSESSORS[1] and zlib.crc32(f"{qid}/{docid}".encode()) % 6 == 0:
        return max(0, truth - 1) if truth >= 2 else min(3, truth + 1)
    return truth


def demo_judge(campaign: Campaign) -> int:
    """Judge pool version 1 with the simulated assessors, publish qrels version 1 and queue the
    bias report on the headline measure (DEMO_HEADLINE). Returns the number of judgments made
    (0 when the pool is not built yet)."""
    from judging.assessments.models import TopicAssignment
    from judging.assessments.queue import judgment_record, lease_next, lease_release
    from judging.evaluation.bias import bias_report_request
    from judging.pools.models import PoolState, PoolVersion

    pool = PoolVersion.objects.filter(campaign=campaign, number=1).first()
    if pool is None or pool.state != PoolState.BUILT:
        return 0
    truth = build().truth
    users = demo_users_ensure()
    User = get_user_model()
    assessors = []
    for name in SIMULATED_ASSESSORS:
        user, _ = User.objects.get_or_create(username=name)
        user.set_unusable_password()
        user.save()
        grant(user, ANNOTATOR)
        assessors.append(user)
    topics = {t.qid: t for t in campaign.topics.all()}
    owners = {"1": 0, "2": 0, "3": 0, "4": 1, "5": 1}
    for qid, who in owners.items():
        TopicAssignment.objects.get_or_create(
            campaign=campaign, topic=topics[qid], annotator=assessors[who]
        )
    TopicAssignment.objects.get_or_create(
        campaign=campaign, topic=topics[LEFT_FOR_THE_ANNOTATOR], annotator=users[ANNOTATOR]
    )
    made = 0
    active = list(assessors)
    judging_statistics_refresh()
    while active:
        for assessor in list(active):
            lease = lease_next(campaign=campaign, annotator=assessor)
            if lease is None or lease.slot.topic.qid == LEFT_FOR_THE_ANNOTATOR:
                if lease is not None:
                    lease_release(lease_id=lease.pk, annotator=assessor)
                active.remove(assessor)
                continue
            qid, docid = lease.slot.topic.qid, lease.slot.docid
            grade = _simulated_grade(assessor.get_username(), qid, docid, truth[qid].get(docid, 0))
            judgment_record(
                lease_id=lease.pk,
                annotator=assessor,
                grade=grade,
                active_seconds=8.0 + zlib.crc32(docid.encode()) % 20,
            )
            made += 1
            if made % STATISTICS_EVERY == 0:
                judging_statistics_refresh()
    qrels_published(
        campaign=campaign,
        note="Pool v1 judged by the simulated assessors "
        f"(topic {LEFT_FOR_THE_ANNOTATOR} left for you).",
        created_by=users["admin"],
    )
    # qrels_published asks for the campaign's default report (AP); the demo's is on its headline
    bias_report_request(campaign=campaign, measure=DEMO_HEADLINE)
    demo_autojudge(campaign, pool)
    return made


# An automatic judge over pool version 1, kept apart from the people's grades: a file of labels
# in UMBRELA's output format (as a track would get from running UMBRELA on its pool), imported
# as judge "demo-llm" v1, audited against qrels v1, and a human sample for corrected estimates.
# The labels are simulated from the generator's truth: right on most documents, one grade too
# generous on about one in five and too strict on about one in eight (so the audit has
# something to find). The sample is stratified by the judge's grade; its documents of topic 6
# (left for the demo annotator) are first in that topic's queue: judge them and the hybrid
# leaderboard (Human samples) fills in.
DEMO_JUDGE = "demo-llm"
DEMO_JUDGE_MODEL = "gpt-4o-mini (simulated)"
DEMO_SAMPLE_BUDGET = 36


def _demo_llm_grade(qid: str, docid: str, truth: int) -> int:
    h = zlib.crc32(f"llm/{qid}/{docid}".encode()) % 40
    if h < 8:
        return min(3, truth + 1)
    if h < 13:
        return max(0, truth - 1)
    return truth


def demo_label_file(campaign: Campaign) -> bytes:
    """The simulated judge's labels of pool version 1, in UMBRELA's JSONL output format."""
    from judging.autojudge.services import pool_pairs
    from judging.pools.models import PoolVersion

    truth = build().truth
    pool = PoolVersion.objects.get(campaign=campaign, number=1)
    lines = []
    for qid, docid in pool_pairs(pool):
        grade = _demo_llm_grade(qid, docid, truth[qid].get(docid, 0))
        record = {
            "qid": qid,
            "docid": docid,
            "model": DEMO_JUDGE_MODEL,
            "judgment": grade,
            "result_status": 1,
            "prediction": f"##final score: {grade}",
        }
        lines.append(json.dumps(record))
    return ("\n".join(lines) + "\n").encode()


def demo_autojudge(campaign: Campaign, pool: Any) -> None:
    from judging.assessments.models import QrelsVersion
    from judging.autojudge.audit import audit_request
    from judging.autojudge.estimates import sample_create
    from judging.autojudge.models import JudgeKind
    from judging.autojudge.services import judge_create, labels_import

    users = demo_users_ensure()
    judge = judge_create(
        campaign=campaign,
        name=DEMO_JUDGE,
        kind=JudgeKind.IMPORTED,
        model=DEMO_JUDGE_MODEL,
        description="UMBRELA-format labels of pool v1 from a simulated LLM judge (imported).",
        created_by=users["admin"],
    )
    labels_import(judge=judge, data=demo_label_file(campaign), format="umbrela", source="demo")
    human = QrelsVersion.objects.filter(campaign=campaign).human().latest_first().first()
    if human is not None:
        audit_request(judge=judge, human=human, pool=pool, requested_by=users["admin"])
    sample_create(
        judge=judge,
        pool=pool,
        design="stratified",
        allocation="proportional",
        budget=DEMO_SAMPLE_BUDGET,
        seed=1,
        created_by=users["admin"],
    )


@transaction.atomic
def demo_sampled_load() -> Campaign | None:
    """The sampled demo campaign (DEMO_SAMPLED_CAMPAIGN), with its stratified pool requested
    (built when this transaction commits); None when it exists already."""
    users = demo_users_ensure()
    if Campaign.objects.filter(name=DEMO_SAMPLED_CAMPAIGN).exists():
        return None
    campaign = campaign_create(
        name=DEMO_SAMPLED_CAMPAIGN,
        pool_depth=20,
        description="The demo's newsroom collection judged from a sample: ranks 1-3 of every "
        "pooled run all judged, ranks 4-20 three in ten. Its qrels keep the three states "
        "(judged, pooled but not sampled, not pooled); the leaderboard shows the inferred "
        "measures (xinfAP, statAP, ebAP, infNDCG, iP@10).",
        guidelines="Judge each news article against the topic, as in the first demo campaign.",
        created_by=users["admin"],
    )
    campaign = campaign_update(campaign=campaign, data={"measures": ["P@10", "AP", "nDCG@10"]})
    _fill(campaign, build(), users)
    pool_requested(
        campaign=campaign,
        strategy="stratified",
        params={"strata": DEMO_SAMPLED_STRATA, "seed": 1},
        requested_by=users["admin"],
    )
    return campaign


def demo_sampled_judge(campaign: Campaign) -> int:
    """The first simulated assessor judges the drawn documents of the sampled campaign's pool,
    and its sampled qrels version 1 is published. Returns the judgments made (0: pool not
    built yet)."""
    from judging.assessments.queue import judgment_record, lease_next
    from judging.pools.models import PoolState, PoolVersion

    pool = PoolVersion.objects.filter(campaign=campaign, number=1).first()
    if pool is None or pool.state != PoolState.BUILT:
        return 0
    truth = build().truth
    users = demo_users_ensure()
    assessor, _ = get_user_model().objects.get_or_create(username=SIMULATED_ASSESSORS[0])
    assessor.set_unusable_password()
    assessor.save()
    grant(assessor, ANNOTATOR)
    made = 0
    while (lease := lease_next(campaign=campaign, annotator=assessor)) is not None:
        qid, docid = lease.slot.topic.qid, lease.slot.docid
        judgment_record(
            lease_id=lease.pk,
            annotator=assessor,
            grade=truth[qid].get(docid, 0),
            active_seconds=8.0 + zlib.crc32(docid.encode()) % 20,
        )
        made += 1
    qrels_published(
        campaign=campaign,
        note="The stratified sample of pool v1, judged by a simulated assessor.",
        created_by=users["admin"],
    )
    return made
