"""The demo's judges' track (issue 35; docs/guide/judges-track.md): a generated campaign of 30
topics and 12 systems, large enough for the meta-evaluation's intervals to be the validated
ones (label agreement from 10 topics, tau-b from 25: benchmarks/meta_intervals.py), where

- the organisers import a simulated LLM judge's labels of pool v1 (``llm-simulated``);
- two participants submit theirs: ``qwen-strict`` (the demo researcher's) and
  ``overlap-baseline`` (another participant's, "team-judges": the demo researcher sees it only
  as "anonymous judge #1");
- the organisers combine the three into a majority jury (``track-jury``);
- a simulated assessor's grades of the pool are people's qrels v1, and the meta-evaluation
  ranks the four judges against them, the runs ranked by nDCG@10.

Everything is generated from fixed seeds: the same figures on every machine. A judge's errors
are drawn per (judge, topic, document) from a hash, more often on the topics it finds hard.
"""

from __future__ import annotations

import json
import random
import zlib
from typing import Any

from django.db import transaction

from judging.campaigns.models import Campaign
from judging.campaigns.services import campaign_create, topics_import
from judging.core.roles import RESEARCHER, Account, grant
from judging.workflows.documents import documents_imported
from judging.workflows.pools import pool_requested
from judging.workflows.runs import run_submitted

CAMPAIGN = "Demo: a judges' track"
SEED = 35
TOPICS = [f"t{n:02d}" for n in range(1, 31)]
DOCS_PER_TOPIC = 40
SYSTEMS = 12
DEPTH = 10
MEASURE = "nDCG@10"
PARTICIPANT = "team-judges"
ORGANISERS_JUDGE = "llm-simulated"
JURY = "track-jury"
# name, owner, model, family, open weights, (too generous, too strict) in 100, its cost per label
JUDGES = (
    (ORGANISERS_JUDGE, None, "gpt-4o-mini (simulated)", "gpt", False, (14, 8), 2e-4),
    ("qwen-strict", RESEARCHER, "qwen2.5-72b-instruct (simulated)", "qwen", True, (4, 14), 4e-4),
    ("overlap-baseline", PARTICIPANT, "term overlap (simulated)", "", True, (22, 22), 1e-5),
)


def truth() -> dict[str, dict[str, int]]:
    """Each topic's documents and their true grades (0-3): a few highly relevant, more relevant
    and partly relevant ones, the rest not, in shares that vary by topic."""
    rng = random.Random(SEED)
    out: dict[str, dict[str, int]] = {}
    for qid in TOPICS:
        n3, n2, n1 = rng.randint(1, 4), rng.randint(2, 6), rng.randint(2, 8)
        grades = [3] * n3 + [2] * n2 + [1] * n1
        grades += [0] * (DOCS_PER_TOPIC - len(grades))
        rng.shuffle(grades)
        out[qid] = {f"{qid}-d{i:02d}": g for i, g in enumerate(grades)}
    return out


def runs(grades: dict[str, dict[str, int]]) -> dict[str, dict[str, dict[str, float]]]:
    """12 systems from weak to strong: a document's score is its grade times the system's skill
    plus noise, with a per-topic wobble, so systems close in skill swap places from topic to
    topic."""
    rng = random.Random(SEED + 1)
    out: dict[str, dict[str, dict[str, float]]] = {}
    for s in range(SYSTEMS):
        skill = 0.4 + 0.06 * s
        tag = f"system-{s + 1:02d}"
        out[tag] = {}
        for qid, docs in grades.items():
            wobble = rng.gauss(0.0, 0.35)
            out[tag][qid] = {
                d: round(g * max(0.0, skill + wobble) + rng.gauss(0.0, 1.0), 4)
                for d, g in docs.items()
            }
    return out


def _flip(name: str, qid: str, docid: str, grade: int, errors: tuple[int, int]) -> int:
    """``grade`` as judge ``name`` gives it: one grade too generous or too strict on the given
    shares in 100, twice as often on the topics it finds hard (one in four)."""
    hard = zlib.crc32(f"{name}/{qid}".encode()) % 4 == 0
    h = zlib.crc32(f"{name}/{qid}/{docid}".encode()) % (50 if hard else 100)
    generous, strict = errors
    if h < generous:
        return min(3, grade + 1)
    if h < generous + strict:
        return max(0, grade - 1)
    return grade


def _lines(pairs: list[tuple[str, str]], grade: Any) -> bytes:
    return "".join(f"{q} 0 {d} {grade(q, d)}\n" for q, d in pairs).encode()


@transaction.atomic
def track_load(users: dict[str, Account]) -> Campaign | None:
    """The campaign, its topics, documents and runs, and pool v1 requested (built when this
    transaction commits); None when it exists already."""
    if Campaign.objects.filter(name=CAMPAIGN).exists():
        return None
    campaign = campaign_create(
        name=CAMPAIGN,
        pool_depth=DEPTH,
        description="A generated judges' track: 30 topics, 12 systems, pool v1 of their top "
        "10; three judges (the organisers' and two participants') and a jury ranked against "
        "people's grades on the meta-evaluation.",
        guidelines="Grade each document against its topic (0-3).",
        created_by=users["admin"],
    )
    grades = truth()
    topics = "\n".join(
        json.dumps({"qid": q, "title": f"Generated topic {q}", "description": f"Topic {q}."})
        for q in TOPICS
    )
    topics_import(campaign=campaign, data=topics.encode(), fmt="jsonl", source="track-topics")
    docs = "\n".join(
        json.dumps({"docid": d, "title": d, "text": f"Generated document {d}."})
        for q in TOPICS
        for d in grades[q]
    )
    documents_imported(campaign=campaign, data=docs.encode(), fmt="jsonl", source="track-docs")
    for tag, results in runs(grades).items():
        run_submitted(
            campaign=campaign,
            owner=users[RESEARCHER],
            results=results,
            tag=tag,
            description="A generated system.",
            pooled=True,
        )
    pool_requested(campaign=campaign, requested_by=users["admin"])
    return campaign


@transaction.atomic
def track_judge(campaign: Campaign, users: dict[str, Account]) -> bool:
    """People's qrels v1 of pool v1, the three judges, the jury and the meta-evaluation; False
    when pool v1 is not built yet (a worker builds it)."""
    from judging.autojudge.juries import jury_request
    from judging.autojudge.meta_eval import meta_request
    from judging.autojudge.models import Judge, JudgeKind, JuryMethod
    from judging.autojudge.services import judge_create, labels_import, pool_pairs
    from judging.autojudge.submissions import judge_submit
    from judging.core.jobs import compute_here
    from judging.pools.models import PoolState, PoolVersion
    from judging.workflows.qrels import qrels_imported

    pool = PoolVersion.objects.filter(campaign=campaign, number=1).first()
    if pool is None or pool.state != PoolState.BUILT:
        return False
    grades = truth()
    pairs = pool_pairs(pool)
    people = _lines(pairs, lambda q, d: _flip("assessor", q, d, grades[q][d], (4, 4)))
    human = qrels_imported(
        campaign=campaign,
        data=people,
        note="A simulated assessor's grades of pool v1.",
        created_by=users["admin"],
    )
    participant, _ = Account.objects.get_or_create(username=PARTICIPANT)
    participant.set_unusable_password()
    participant.save()
    grant(participant, RESEARCHER)
    owners = {RESEARCHER: users[RESEARCHER], PARTICIPANT: participant}
    members: list[Judge] = []
    for name, owner, model, family, open_weights, errors, price in JUDGES:
        data = _lines(pairs, lambda q, d, n=name, e=errors: _flip(n, q, d, grades[q][d], e))
        if owner is None:
            judge = judge_create(
                campaign=campaign,
                name=name,
                kind=JudgeKind.IMPORTED,
                model=model,
                params={"declared": {"calls": len(pairs), "cost": price * len(pairs)}},
                family=family,
                open_weights=open_weights,
                saw_human_qrels=False,
                created_by=users["admin"],
            )
            labels_import(judge=judge, data=data, source="track-labels")
        else:
            judge, _ = judge_submit(
                campaign=campaign,
                owner=owners[owner],
                name=name,
                model=model,
                family=family,
                open_weights=open_weights,
                saw_human_qrels=False,
                pool=pool.number,
                data=data,
                description="Simulated labels of pool v1, submitted to the demo's track.",
                ledger={
                    "calls": len(pairs),
                    "cost": price * len(pairs),
                    "seconds": 0.4 * len(pairs),
                },
            )
        members.append(judge)
    _, run = jury_request(
        campaign=campaign,
        name=JURY,
        members=members,
        method=JuryMethod.MAJORITY,
        pool=pool,
        requested_by=users["admin"],
    )
    compute_here(run.job)  # its labels before the meta-evaluation reads them
    meta_request(
        campaign=campaign, human=human, pool=pool, measure=MEASURE, requested_by=users["admin"]
    )
    return True
