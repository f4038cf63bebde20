"""An automatic or hybrid qrels version is built from a judge's labels: it is evaluated and
analysed like any other version (every run, the pool-bias and reusability reports), and every
number computed against it names its kind."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from judging.assessments.models import QrelsVersion
from judging.autojudge.services import automatic_qrels, hybrid_qrels
from judging.workflows._signature import takes_arguments_of
from judging.workflows.qrels import after_qrels


@takes_arguments_of(automatic_qrels)
def automatic_qrels_built(**build: Any) -> QrelsVersion:
    """``autojudge.services.automatic_qrels`` (same arguments and errors), then evaluate."""
    with transaction.atomic():
        version = automatic_qrels(**build)
        after_qrels(version)
    return version


@takes_arguments_of(hybrid_qrels)
def hybrid_qrels_built(**build: Any) -> QrelsVersion:
    """``autojudge.services.hybrid_qrels`` (same arguments and errors), then evaluate."""
    with transaction.atomic():
        version = hybrid_qrels(**build)
        after_qrels(version)
    return version
