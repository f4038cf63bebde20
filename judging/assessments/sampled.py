"""Sampled qrels versions (issue 32, point 3): publishing the judgments of a sampled pool with
its three states, and reading a version back as :class:`metrics.io.sampled.SampledQrels`.

A campaign whose latest built pool is sampled (the ``stratified`` strategy: every pooled
document stored with its stratum, inclusion probability and whether it was drawn) publishes a
sampled version: every pooled document with its stratum, its consensus grade when it was drawn
(or judged before the draw: stratum ``"0"``) and -1 otherwise; a document judged outside that
pool joins the certainty stratum ``"0"``. A document judged although it was not drawn (a top-up,
say) stays -1: its grade would make the sample's inclusion probabilities false. The version's
``design`` names the pool, the strategy and its parameters and, per stratum, the pooled and
judged counts; a drawn document not judged yet is -1 too, and counted (``awaiting``), so a
version published before the sample is done says so.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings

from judging.assessments.models import QrelsEntry, QrelsVersion
from judging.campaigns.models import Campaign
from judging.core import uploads
from judging.core.errors import InvalidInput
from judging.pools.models import PoolDocument, PoolVersion
from metrics.io.sampled import UNSAMPLED, SampledQrels, read_sampled_qrels
from metrics.problems import Problem

__all__ = [
    "EXPORT_FORMATS",
    "SAMPLING_STRATEGIES",
    "sampled_export",
    "sampled_pool",
    "sampled_qrels",
    "sampled_read",
    "sampled_rows",
    "sampled_version_parts",
]

SAMPLING_STRATEGIES = ("stratified",)
CERTAIN = "0"


def sampled_pool(campaign: Campaign) -> PoolVersion | None:
    """The campaign's latest built pool version when it is sampled, else None."""
    latest = PoolVersion.objects.built().filter(campaign=campaign).order_by("-number").first()
    return latest if latest is not None and latest.strategy in SAMPLING_STRATEGIES else None


def sampled_rows(
    pool: PoolVersion, grades: dict[tuple[str, str], int]
) -> tuple[list[tuple[str, str, int]], dict[tuple[str, str], str], dict[str, Any]]:
    """The rows, strata and design of a sampled version of ``pool`` over the consensus
    ``grades`` (see the module docstring)."""
    rows: list[tuple[str, str, int]] = []
    strata: dict[tuple[str, str], str] = {}
    counts: dict[str, dict[str, Any]] = {}
    awaiting = outside_sample = 0
    pooled = PoolDocument.objects.filter(version=pool).values_list(
        "topic__qid", "docid", "stratum", "sampled", "inclusion"
    )
    for qid, docid, stratum, drawn, pi in pooled.iterator(chunk_size=20_000):
        key = (qid, docid)
        grade = grades.get(key)
        known = drawn and grade is not None
        awaiting += drawn and grade is None
        outside_sample += not drawn and grade is not None
        rows.append((qid, docid, grade if known and grade is not None else -1))
        strata[key] = stratum or CERTAIN
        c = counts.setdefault(strata[key], {"pooled": 0, "judged": 0, "rate": pi})
        c["pooled"] += 1
        c["judged"] += bool(known)
    for key, grade in grades.items():  # judged outside this pool: known, a certainty
        if key not in strata:
            rows.append((*key, grade))
            strata[key] = CERTAIN
            c = counts.setdefault(CERTAIN, {"pooled": 0, "judged": 0, "rate": 1.0})
            c["pooled"] += 1
            c["judged"] += 1
    design = {
        "pool": pool.number,
        "strategy": pool.strategy,
        "params": pool.params,
        "strata": dict(sorted(counts.items())),
        "awaiting": awaiting,
        "judged_outside_sample": outside_sample,
    }
    return rows, strata, design


def sampled_read(
    *, campaign: Campaign, data: uploads.Source, source: str = "qrels"
) -> tuple[list[tuple[str, str, int]], dict[tuple[str, str], str], dict[str, Any]] | None:
    """An uploaded qrels file in ``sample_eval.pl``'s five columns, validated whole (grades on
    the campaign's scale, or -1: pooled, not sampled): its rows, strata and design (``pool``
    None: imported); None when the file is not in that format (four columns: ``qrels_read``)."""
    what = "the qrels file"
    upload = uploads.read(
        data, what=what, limit=settings.POOLJUDGE_UPLOADS.max_upload_bytes, source=source
    )
    first = next((ln.split() for ln in upload.data.splitlines() if ln.split()), [])
    if len(first) != 5:
        return None
    with uploads.reading(what):
        sample = read_sampled_qrels(
            upload.data,
            source=upload.name,
            format="sample_eval",
            max_problems=settings.POOLJUDGE_UPLOADS.max_problems,
        )
    scale = set(campaign.grade_values())
    bad = [
        (q, d, g)
        for q, docs in sample.topics.items()
        for d, (_, g) in docs.items()
        if g != UNSAMPLED and scale and g not in scale
    ]
    if bad:
        raise InvalidInput(
            f"{len(bad)} grade(s) are not on the campaign's scale; nothing was stored",
            [
                Problem.at(f"{q} {d}", f"grade {g} is not one of {sorted(scale)}")
                for q, d, g in bad[:20]
            ],
            total=len(bad),
            source=source,
        )
    return sampled_version_parts(sample, "imported")


def sampled_version_parts(
    sample: SampledQrels, strategy: str
) -> tuple[list[tuple[str, str, int]], dict[tuple[str, str], str], dict[str, Any]]:
    """The rows, strata and design (``pool`` None, per stratum the pooled and judged counts) of
    a version stored from ``sample``, read from a file."""
    rows = [(q, d, g) for q, docs in sample.topics.items() for d, (_, g) in docs.items()]
    strata = {(q, d): s for q, docs in sample.topics.items() for d, (s, _) in docs.items()}
    counts = {
        s: {"pooled": n, "judged": k, "rate": k / n if n else None}
        for s, (n, k) in sample.totals().items()
    }
    design = {
        "pool": None,
        "strategy": strategy,
        "params": {},
        "strata": counts,
        "awaiting": 0,
        "judged_outside_sample": 0,
    }
    return rows, strata, design


EXPORT_FORMATS = {
    "sample_eval": "sample_eval.pl's five columns, qid 0 docid stratum grade (-1: not sampled)",
    "trec": "trec_eval's four columns, qid 0 docid grade (-1: not sampled; one stratum only)",
    "prels": "Million Query prels, qid docid grade method pi (-999: not sampled)",
}


def sampled_export(version: QrelsVersion, fmt: str) -> list[str]:
    """A sampled version's lines in ``fmt`` (:data:`EXPORT_FORMATS`), topics and documents
    sorted; ``prels``' inclusion probability is each topic stratum's judged share, as
    ``sample_eval.pl`` reads the five columns. trec_eval's form is refused for a version of
    more than one stratum: the strata's rates would be lost and infAP would read one sample."""
    import io

    from metrics.evaluation.sampled import prels_of
    from metrics.io.prels import write_prels
    from metrics.io.sampled import write_sampled_qrels

    sample = sampled_qrels(version)
    if fmt == "prels":
        text = io.StringIO()
        write_prels(prels_of(sample), text)
        return text.getvalue().splitlines(keepends=True)
    try:
        raw = io.BytesIO()
        write_sampled_qrels(sample, raw, format="trec" if fmt == "trec" else "sample_eval")
    except ValueError as exc:  # several strata in trec_eval's one-sample form
        raise InvalidInput(
            f"qrels version {version.number} cannot be exported as {fmt!r}: {exc}",
            [Problem.at("format", str(exc))],
        ) from None
    return raw.getvalue().decode("utf-8").splitlines(keepends=True)


def sampled_qrels(version: QrelsVersion) -> SampledQrels:
    """A sampled version as :class:`SampledQrels` (each row's stratum and grade)."""
    topics: dict[str, dict[str, tuple[str, int]]] = {}
    rows = QrelsEntry.objects.filter(version=version).values_list(
        "topic__qid", "docid", "stratum", "grade"
    )
    for qid, docid, stratum, grade in rows.iterator(chunk_size=20_000):
        topics.setdefault(qid, {})[docid] = (stratum, max(grade, -1))
    return SampledQrels({q: topics[q] for q in sorted(topics)})
