"""Permission-free reads about judgments that several apps need."""

from __future__ import annotations

from judging.assessments.models import QrelsEntry
from judging.campaigns.models import Campaign


def judged_documents(campaign: Campaign) -> dict[str, set[str]]:
    """qid -> docids that have ever been judged in the campaign (any qrels version).

    A negative grade means "pooled but not judged" and does not count.
    """
    out: dict[str, set[str]] = {}
    rows = (
        QrelsEntry.objects.filter(version__campaign=campaign, grade__gte=0)
        .values_list("topic__qid", "docid")
        .distinct()
    )
    for qid, docid in rows.iterator(chunk_size=10_000):
        out.setdefault(qid, set()).add(docid)
    return out
