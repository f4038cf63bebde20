"""Judges as submissions (issue 35, point 1): a participant of a judges' track submits a
judge's labels for a pool version, or registers a judge on a chat endpoint the organisers
configured for them, as runs are submitted.

A submission is a ``Judge`` with an ``owner``: other participants never read it (its labels,
its page), and the meta-evaluation shows its row anonymised to them. What it declares (model,
family, open weights, prompt, whether it saw any of people's judgments) is stored with it and
shown beside its figures; a judge that saw people's judgments is flagged there, since its
agreement with them is not independent.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import transaction

from judging.autojudge.models import Judge, JudgeKind, JudgeRun
from judging.autojudge.services import (
    invalid,
    judge_create,
    judge_run_request,
    labels_read,
    pool_pairs,
    store_labels,
)
from judging.campaigns.models import Campaign
from judging.core import uploads
from judging.core.errors import Conflict, InvalidInput
from judging.core.roles import Account, is_admin
from judging.pools.models import PoolState, PoolVersion
from metrics.problems import Problem

SUBMISSION_KINDS = (JudgeKind.IMPORTED, JudgeKind.OPENAI)
LEDGER_FIELDS = ("calls", "prompt_tokens", "completion_tokens", "cost", "seconds")


def endpoints_for(user: Account) -> list[str]:
    """The configured chat endpoints ``user`` may name in a submission: every one for an
    admin; for a researcher, those whose ``participants`` list their username."""
    found = []
    for name, entry in settings.POOLJUDGE_AUTOJUDGE.llm_endpoints.items():
        allowed = {u.strip() for u in str(entry.get("participants", "")).split(",") if u.strip()}
        if is_admin(user) or user.get_username() in allowed:
            found.append(name)
    return sorted(found)


def _pool(campaign: Campaign, number: int | None) -> PoolVersion:
    built = PoolVersion.objects.filter(campaign=campaign, state=PoolState.BUILT)
    pool = (
        built.order_by("-number").first() if number is None else built.filter(number=number).first()
    )
    if pool is None:
        which = "no pool version is built" if number is None else f"pool v{number} is not built"
        raise invalid("pool", f"{which}: a submission labels a built pool version")
    return pool


def _ledger(declared: dict[str, Any] | None) -> dict[str, float]:
    """What an imported judge declares it cost (its own calls, tokens, cost, seconds)."""
    out: dict[str, float] = {}
    for key, value in (declared or {}).items():
        if key not in LEDGER_FIELDS:
            raise invalid(f"ledger.{key}", f"unknown; the ledger has {', '.join(LEDGER_FIELDS)}")
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0:
            raise invalid(f"ledger.{key}", "must be a number >= 0")
        out[key] = float(value)
    return out


def _outside_pool(labels: list[Any], pool: PoolVersion) -> None:
    """Refuse labels of pairs the pool version does not hold, naming the first few."""
    inside = set(pool_pairs(pool))
    outside = [x for x in labels if (x.qid, x.docid) not in inside]
    if outside:
        shown = settings.POOLJUDGE_UPLOADS.max_problems
        raise InvalidInput(
            f"{len(outside)} label(s) are for pairs outside pool v{pool.number}; nothing was "
            "stored",
            [Problem.at(f"{x.qid} {x.docid}", "not in the pool version") for x in outside[:shown]],
            total=len(outside),
        )


def judge_submit(
    *,
    campaign: Campaign,
    owner: Account,
    name: str,
    model: str,
    saw_human_qrels: bool,
    kind: str = JudgeKind.IMPORTED,
    pool: int | None = None,
    family: str = "",
    open_weights: bool | None = None,
    prompt: str = "",
    description: str = "",
    data: uploads.Source | None = None,
    format: str = "trec",
    requests: uploads.Source | None = None,
    mapping: dict[str, int] | None = None,
    endpoint: str = "",
    ledger: dict[str, Any] | None = None,
) -> tuple[Judge, JudgeRun | None]:
    """Submit a judge for pool version ``pool`` (default the latest built one).

    ``imported``: the labels file (TREC qrels or UMBRELA JSONL) is read whole and every label
    must be for a pair of the pool version; the judge and its labels are stored together or
    not at all. ``openai-compatible``: ``endpoint`` names a configured endpoint the owner may
    use (:func:`endpoints_for`); the judge is created and its run over the pool queued.
    The same name again makes the owner's next version (the same judge on an endpoint again
    is run again: only what it has not labelled is asked). Returns the judge and the queued run
    (None for imported labels)."""
    if kind not in SUBMISSION_KINDS:
        raise invalid("kind", f"must be one of {', '.join(SUBMISSION_KINDS)}")
    chosen = _pool(campaign, pool)
    params: dict[str, Any] = {}
    if mapping:
        params["mapping"] = {str(k): int(v) for k, v in mapping.items()}
    declared = _ledger(ledger)
    if kind == JudgeKind.IMPORTED:
        if data is None:
            raise invalid("file", "an imported judge's submission needs its label file")
        if endpoint:
            raise invalid("endpoint", "only an openai-compatible judge names an endpoint")
        if declared:
            params["declared"] = declared
        rows = labels_read(
            campaign=campaign, mapping=params.get("mapping"), data=data, format=format,
            requests=requests, source=getattr(data, "name", None) or "labels",
        )  # fmt: skip
        if not any(x.grade is not None for x in rows):
            raise invalid("file", "holds no graded label")
        _outside_pool(rows, chosen)
    else:
        if data is not None:
            raise invalid("file", "an openai-compatible judge is called, it takes no file")
        if declared:
            raise invalid("ledger", "the service counts an openai-compatible judge's cost")
        if endpoint not in endpoints_for(owner):
            known = ", ".join(endpoints_for(owner)) or "none is open to you"
            raise invalid("endpoint", f"names no endpoint you may use ({known})")
        params["endpoint"] = endpoint
        rows = []
    with transaction.atomic():
        judge = judge_create(
            campaign=campaign,
            name=name,
            kind=kind,
            model=model,
            prompt=prompt,
            params=params,
            description=description,
            created_by=owner,
            owner=owner,
            pool=chosen,
            family=family,
            open_weights=open_weights,
            saw_human_qrels=saw_human_qrels,
        )
        if judge.locked_at is not None and rows:
            raise Conflict(
                f"judge {judge} says the same and has its labels: submit a changed judge, or "
                "under another name"
            )
        if judge.locked_at is not None:  # the same judge on the endpoint: run it again
            return judge, judge_run_request(judge=judge, pool=chosen, requested_by=owner)
        Judge.objects.filter(pk=judge.pk).update(
            pool=chosen,
            family=family.strip()[:100],
            open_weights=open_weights,
            saw_human_qrels=saw_human_qrels,
            description=description,
        )
        judge.refresh_from_db()
        if rows:
            store_labels(judge, rows)
            return judge, None
    return judge, judge_run_request(judge=judge, pool=chosen, requested_by=owner)


def submissions_of(campaign: Campaign, user: Account) -> list[Judge]:
    """The submissions ``user`` may list: their own; an admin, every participant's."""
    found = Judge.objects.filter(campaign=campaign, owner__isnull=False)
    if not is_admin(user):
        found = found.filter(owner=user)
    return list(found.select_related("owner", "pool").order_by("name", "version"))
