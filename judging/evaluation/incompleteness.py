"""Where a qrels version is incomplete, per question (issue 33, point 6).

A retrieval team's Recall@k and MRR read as if every retrieved item were judged and every
relevant item retrievable. Per question, against one qrels version and a cut-off k, this says:

- how many of each run's top-k items are unjudged (what the measure counted as non-relevant
  without anyone looking), and of the union of all runs' top k;
- the relevant items that no run retrieved within k: "invisible" to every setup, so no reranker
  on these candidates can recover them (and Recall@k's ceiling for every run is below 1);
- the questions with no relevant item at all ("zero-answer"): the measures leave them out, and
  the page says whether they were judged (none relevant) or never judged.

The invisible items are counted over every run of the campaign (or of one group of runs: a
team's runs on one chunking, say), whoever asks (a fact of the campaign, not of the reader's
runs); the run columns show the runs as the reader may see them
(``campaigns.selectors.run_label``).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from judging.assessments.models import QrelsVersion
from judging.assessments.services import qrels_rows
from judging.campaigns.models import Campaign, RankedList, Run, Topic
from judging.campaigns.selectors import run_label
from judging.core.errors import InvalidInput
from judging.core.roles import UserLike
from metrics.problems import Problem

__all__ = ["IncompletenessAnswer", "QuestionRow", "incompleteness", "visible_groups"]

SHOWN_IDS = 10  # invisible item ids listed per question (the count is whole)
MAX_K = 1000  # the deepest cut-off asked for


@dataclass(frozen=True)
class QuestionRow:
    """One question (topic) against the version at k."""

    qid: str
    title: str
    tags: list[str]
    judged: int  # items the version judges for it
    relevant: int  # of them, at or above the campaign's relevance threshold
    zero_answer: str  # "" or why it has no relevant item: "judged, none relevant" / "not judged"
    unjudged: dict[str, int]  # run label -> unjudged items in its top k (runs the reader sees)
    retrieved: int  # distinct items in the union of all runs' top k
    unjudged_union: int  # of them, not judged
    invisible: int  # relevant items no run retrieved within k
    invisible_ids: list[str] = field(default_factory=list)  # the first SHOWN_IDS of them


@dataclass(frozen=True)
class IncompletenessAnswer:
    qrels_version: int
    qrels_label: str
    qrels_hash: str
    k: int
    threshold: int
    runs: list[str]  # the run columns, in the campaign's run order
    all_runs: int  # runs the union and the invisible items are computed over
    group: str  # "" or the group of runs they are
    questions: list[QuestionRow]
    zero_answer: int
    with_unjudged: int  # questions with an unjudged item in some run's top k
    with_invisible: int
    unjudged_union: int
    relevant: int
    invisible: int
    rule: str  # the counts' definitions, in words


def _rule(version: QrelsVersion, k: int, threshold: int, runs: int, group: str) -> str:
    over = f"the {runs} runs of group {group!r}" if group else f"all {runs} runs of the campaign"
    return (
        f"Relevant: grade >= {threshold} in qrels {version.label}. Unjudged: not in that "
        f"version. Invisible: relevant, and in no run's top {k} (over {over}). Zero-answer "
        "questions have no relevant item; the measures leave them out."
    )


def visible_groups(campaign: Campaign, user: UserLike) -> list[str]:
    """The groups of the runs the reader may see by name (admins: every run's)."""
    runs = Run.objects.visible_to(user).filter(campaign=campaign).exclude(group="")
    return sorted(set(runs.values_list("group", flat=True)))


def _top_k(runs: list[Run], k: int) -> dict[int, dict[str, list[str]]]:
    """Run id -> qid -> its top k item ids."""
    out: dict[int, dict[str, list[str]]] = defaultdict(dict)
    lists = RankedList.objects.filter(run__in=runs).values_list("run_id", "topic__qid", "docids")
    for run_id, qid, docids in lists.iterator(chunk_size=500):
        out[run_id][qid] = docids.split("\n", k)[:k] if docids else []
    return out


def incompleteness(
    *, campaign: Campaign, version: QrelsVersion, k: int, user: UserLike, group: str = ""
) -> IncompletenessAnswer:
    """Every question of the campaign against ``version`` at ``k``, over the campaign's runs or
    those of ``group`` (module docstring)."""
    threshold = campaign.relevance_threshold
    grades: dict[str, dict[str, int]] = defaultdict(dict)
    for qid, item, grade in qrels_rows(version):
        grades[qid][item] = grade
    chosen = Run.objects.filter(campaign=campaign)
    if group:
        seen = visible_groups(campaign, user)
        if group not in seen:  # never says whether a group the reader sees no run of exists
            known = ", ".join(seen) or "none"
            raise InvalidInput(
                "no such group", [Problem.at("group", f"not a group of your runs ({known})")]
            )
        chosen = chosen.filter(group=group)
    runs = list(chosen.order_by("tag"))
    shown = {r.pk: run_label(r, user) for r in runs}
    tops = _top_k(runs, k)
    rows: list[QuestionRow] = []
    for topic in Topic.objects.filter(campaign=campaign).order_by("qid"):
        judged = grades.get(topic.qid, {})
        relevant = {d for d, g in judged.items() if g >= threshold}
        union: set[str] = set()
        unjudged: dict[str, int] = {}
        for run in runs:
            top = tops.get(run.pk, {}).get(topic.qid, [])
            union.update(top)
            unjudged[shown[run.pk]] = sum(1 for d in top if d not in judged)
        invisible = sorted(relevant - union)
        why = ""
        if not relevant:
            why = "judged, none relevant" if judged else "not judged"
        rows.append(
            QuestionRow(
                qid=topic.qid,
                title=topic.title,
                tags=list(topic.tags or []),
                judged=len(judged),
                relevant=len(relevant),
                zero_answer=why,
                unjudged=unjudged,
                retrieved=len(union),
                unjudged_union=sum(1 for d in union if d not in judged),
                invisible=len(invisible),
                invisible_ids=invisible[:SHOWN_IDS],
            )
        )
    return IncompletenessAnswer(
        qrels_version=version.number,
        qrels_label=version.label,
        qrels_hash=version.content_hash,
        k=k,
        threshold=threshold,
        runs=[shown[r.pk] for r in runs],
        all_runs=len(runs),
        group=group,
        questions=rows,
        zero_answer=sum(1 for r in rows if r.zero_answer),
        with_unjudged=sum(1 for r in rows if r.unjudged_union),
        with_invisible=sum(1 for r in rows if r.invisible),
        unjudged_union=sum(r.unjudged_union for r in rows),
        relevant=sum(r.relevant for r in rows),
        invisible=sum(r.invisible for r in rows),
        rule=_rule(version, k, threshold, len(runs), group),
    )
