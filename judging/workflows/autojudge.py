"""An automatic or hybrid qrels version is built from a judge's labels: it is evaluated and
analysed like any other version (every run, the pool-bias and reusability reports), and every
number computed against it names its kind."""

from __future__ import annotations

from django.db import transaction

from judging.assessments.models import QrelsVersion
from judging.autojudge.models import Judge
from judging.autojudge.services import automatic_qrels, hybrid_qrels
from judging.core.roles import Account
from judging.pools.models import PoolVersion
from judging.workflows.qrels import after_qrels


def automatic_qrels_built(
    *, judge: Judge, pool: PoolVersion, note: str = "", created_by: Account | None = None
) -> QrelsVersion:
    """``autojudge.services.automatic_qrels`` (same arguments and errors), then evaluate."""
    with transaction.atomic():
        version = automatic_qrels(judge=judge, pool=pool, note=note, created_by=created_by)
        after_qrels(version)
    return version


def hybrid_qrels_built(
    *,
    judge: Judge,
    pool: PoolVersion,
    human: QrelsVersion,
    note: str = "",
    created_by: Account | None = None,
) -> QrelsVersion:
    """``autojudge.services.hybrid_qrels`` (same arguments and errors), then evaluate."""
    with transaction.atomic():
        version = hybrid_qrels(
            judge=judge, pool=pool, human=human, note=note, created_by=created_by
        )
        after_qrels(version)
    return version
