"""The texts a judge reads: each topic's query and each document's title and text. Both the
labellers and the calibration in ``services`` read them, so they live below both (no cycle)."""

from __future__ import annotations

from collections.abc import Iterable

from judging.autojudge.models import Judge
from judging.campaigns.models import Document, Topic


def topic_texts(judge: Judge, qids: Iterable[str]) -> dict[str, str]:
    """The query a judge reads for each topic: its title, else its description (UMBRELA judges
    the query as users typed it)."""
    rows = Topic.objects.filter(campaign_id=judge.campaign_id, qid__in=set(qids)).values_list(
        "qid", "title", "description"
    )
    return {q: (t or d or q) for q, t, d in rows}


def document_texts(judge: Judge, docids: Iterable[str]) -> dict[str, str]:
    """Title and text of each document (empty when the campaign has no text for it)."""
    wanted = set(docids)
    out: dict[str, str] = {}
    rows = Document.objects.filter(campaign_id=judge.campaign_id, docid__in=wanted).values_list(
        "docid", "title", "text"
    )
    for docid, title, text in rows.iterator(chunk_size=1000):
        out[docid] = f"{title}\n{text}".strip() if title else text
    return out
