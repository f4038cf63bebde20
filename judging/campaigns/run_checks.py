"""What a run submission checks against its campaign, beyond the file's own lines.

Problems (the run is refused; ``run_submit`` lists every one at once): topics the campaign does
not have, under the ``reject`` policy. A file (or JSON body) the reader refuses is still
searched for its topics (:func:`topic_lines`), so an unknown topic is listed with the file's
other problems (:func:`with_topic_problems`) rather than only once those are fixed.

Warnings (the run is stored with them; :mod:`judging.campaigns.run_warnings`): the same content
as a run its submitter may see (:func:`same_content`, by :func:`content_checksum`), and docids
not among the campaign's documents when it has some (:func:`unknown_docids`).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from typing import Any

import numpy as np
import numpy.typing as npt
from django.conf import settings
from django.db.models import Q

from judging.campaigns.models import Campaign, Document, Passage, Run, UnknownTopicPolicy
from judging.campaigns.run_warnings import SAME_CONTENT, UNKNOWN_DOCIDS, RunWarning
from judging.campaigns.selectors import run_label
from judging.core.errors import InvalidInput
from judging.core.roles import Account
from metrics.io.limits import id_problem, show
from metrics.problems import Problem

EXAMPLES = 3  # docids named in the unknown-docids warning
_BATCH = 5000  # docids per query


# --- topics -----------------------------------------------------------------------------------


def first_lines(data: bytes, qids: set[str]) -> dict[str, int]:
    """Line number of the first line naming each of ``qids`` (error reports only)."""
    found: dict[str, int] = {}
    for number, line in enumerate(data.splitlines(), 1):
        head = line.split(None, 1)[:1]
        if head:
            q = head[0].decode("utf-8", "replace")
            if q in qids and q not in found:
                found[q] = number
                if len(found) == len(qids):
                    break
    return found


def topic_lines(data: bytes) -> tuple[Counter[str], dict[str, int]]:
    """Lines per topic and each topic's first line, from the first field of every data line
    (blank and ``#`` lines skipped), whatever is wrong with the line's other fields. A first
    field that cannot be a qid (bad UTF-8, a control character, too long) and a line over the
    line limit are left out: the reader reports them."""
    counts: Counter[str] = Counter()
    first: dict[str, int] = {}
    max_line = settings.POOLJUDGE_UPLOADS.max_line_bytes
    for number, line in enumerate(data.split(b"\n"), 1):
        head = line.split(None, 1)[:1]
        if not head or head[0].startswith(b"#") or len(line.rstrip(b"\r")) > max_line:
            continue
        if id_problem("qid", head[0], settings.POOLJUDGE_UPLOADS.max_qid_bytes) is not None:
            continue
        try:
            qid = head[0].decode("utf-8")
        except UnicodeDecodeError:
            continue
        counts[qid] += 1
        first.setdefault(qid, number)
    return counts, first


def json_topics(results: Any) -> Counter[str]:
    """Entries per topic of a JSON run ``{qid: {docid: score}}``, its well-formed topics only."""
    counts: Counter[str] = Counter()
    if isinstance(results, Mapping):
        for qid, ranked in results.items():
            if isinstance(qid, str) and qid and isinstance(ranked, Mapping):
                counts[qid] = len(ranked)
    return counts


def unknown_topic_problems(
    campaign: Campaign,
    counts: Mapping[str, int],
    first: Mapping[str, int] | None,
    known: Collection[str],
) -> list[Problem]:
    """One problem for each topic of ``counts`` not among the campaign's (``known``), in line
    order: at its first line in a file (``first``), at ``results.<qid>`` in JSON (``first``
    None)."""
    unknown = [q for q in counts if q not in known]
    at = first or {}
    unknown.sort(key=lambda q: at.get(q, 0))
    return [
        Problem(
            at.get(q, 0),
            f"topic {q!r} is not in campaign {campaign.name!r} ({counts[q]} line(s)"
            + (f", first at line {at[q]})" if q in at else ")"),
            None if first is not None else f"results.{q}",
        )
        for q in unknown
    ]


def with_topic_problems(
    refused: InvalidInput,
    campaign: Campaign,
    counts: Mapping[str, int],
    first: Mapping[str, int] | None,
    what: str,
) -> InvalidInput:
    """``refused`` (the reader's problems with ``what``) with the campaign's topic problems
    added, in line order, capped and counted as the reader caps and counts: under ``reject``
    every unknown topic; under ``ignore`` none, unless no topic at all is the campaign's."""
    known = set(campaign.topics.values_list("qid", flat=True))
    extra: list[Problem] = []
    if campaign.unknown_topic_policy == UnknownTopicPolicy.REJECT:
        extra = unknown_topic_problems(campaign, counts, first, known)
    elif counts and known.isdisjoint(counts):
        shown = ", ".join(list(counts)[:20])
        extra = [Problem(0, f"every line names a topic the campaign does not have ({shown})")]
    if not extra:
        return refused
    total = refused.total + len(extra)
    merged = sorted([*refused.problems, *extra], key=lambda p: p.line)
    return InvalidInput(
        f"{what} has {total} problem(s); nothing was stored",
        merged[: settings.POOLJUDGE_UPLOADS.max_problems],
        total=total,
        source=refused.source,
    )


# --- warnings ---------------------------------------------------------------------------------


def content_checksum(topics: Iterable[tuple[str, bytes, bytes]]) -> str:
    """SHA-256 of a run as stored: for each topic in qid order, its qid, its docids (joined by
    newlines, in trec_eval order) and its scores (little-endian doubles). The same for the same
    rankings and scores whatever the file's tag column, layout or format (file or JSON)."""
    digest = hashlib.sha256()
    for qid, docids, scores in sorted(topics):
        for part in (qid.encode(), docids, scores):
            digest.update(len(part).to_bytes(8, "little"))
            digest.update(part)
    return digest.hexdigest()


def same_content(
    *, campaign: Campaign, owner: Account, checksum: str, file_checksum: str, entries: int
) -> RunWarning | None:
    """The warning for a run with the content (``content_checksum``) of a run of the campaign
    that its submitter may see by name: their own; any, for an admin. Another researcher's run
    is not named to them, nor is it said that one exists. Runs stored before the content
    checksum was kept are matched by their file's checksum."""
    same = (
        Run.objects.visible_to(owner)
        .filter(campaign=campaign)
        .filter(Q(content_checksum=checksum) | Q(content_checksum="", checksum=file_checksum))
        .order_by("pk")
        .first()
    )
    if same is None:
        return None
    label = run_label(same, owner)
    message = f"same content as run {label!r} (id {same.pk}): the same documents and scores"
    return RunWarning(SAME_CONTENT, message, entries)


def unknown_docids(campaign: Campaign, docids: npt.NDArray[np.bytes_]) -> RunWarning | None:
    """The warning for entries (``docids``, one per entry) whose docid is not among the
    campaign's documents or passages, with how many docids and the first few in byte order;
    None when all are there or the campaign has no documents (then nothing can be told)."""
    stored = Document.objects.filter(campaign=campaign).values_list("docid", flat=True)
    if not docids.size or not stored.exists():
        return None
    distinct, entries = np.unique(docids, return_counts=True)
    names: list[bytes] = distinct.tolist()
    passages = Passage.objects.filter(campaign=campaign).values_list("passage_id", flat=True)
    if stored[: len(names) + 1].count() <= len(names) and not passages.exists():
        known = {d.encode() for d in stored}  # a small collection: read it whole
    else:
        known = set()
        for i in range(0, len(names), _BATCH):
            batch = [d.decode("utf-8") for d in names[i : i + _BATCH]]
            known.update(d.encode() for d in stored.filter(docid__in=batch))
            known.update(d.encode() for d in passages.filter(passage_id__in=batch))
    missing = np.fromiter((n not in known for n in names), dtype=bool, count=len(names))
    if not missing.any():
        return None
    count = int(missing.sum())
    shown = ", ".join(show(d) for d in distinct[missing][:EXAMPLES].tolist())
    message = (
        f"a docid not among the campaign's documents ({count:,} docid{'s' if count != 1 else ''}"
        f", e.g. {shown})"
    )
    return RunWarning(UNKNOWN_DOCIDS, message, int(entries[missing].sum()))
