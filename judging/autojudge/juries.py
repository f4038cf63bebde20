"""Juries (issue 35, point 3): a judge version whose labels combine other judges' labels item by
item with a method of :mod:`metrics.judges.juries` (majority, mean grade, Dawid-Skene, or the
members' grade where they agree and people's where they disagree). A jury is a judge like any
other: it runs over pool versions, its labels are stored (``AutoLabel``) and the meta-evaluation
ranks it beside its members.

What a jury version says (its identity, ``Judge.params``): ``members``, the sorted ids of its
judges (two or more of the campaign, none a jury); ``method`` (``JuryMethod``); ``human``, for
``defer`` only, the number of the human qrels version whose grades settle disagreements. Its
model reads ``jury:METHOD(N)``; it is the organisers' (no owner).

Its run (``judge_run``, as any judge's) labels the pairs it has not graded from the members'
graded labels of those pairs (a member's failed label is no label):

- a pair no member has graded yields nothing: the run ends with ``done`` below ``total`` by
  those, and the jury's next run asks for them again, once a member has graded them;
- a pair one member graded takes that grade (a single vote is a majority, and agrees with
  itself: the library's rules);
- Dawid-Skene is fitted on the members' labels of every pair asked at once, and of the pairs
  the jury graded before, so a later run that fills gaps learns from the same evidence plus the
  new; a stored label never changes;
- ``defer``: people's grade (from qrels v``human``) where the members disagree and people have
  judged the item, its answer beginning with :data:`PEOPLE`; otherwise the item gets a
  ``deferred`` label (no grade: asked again by the next run) and is queued first in its topic
  for people (:func:`queue_for_people`). People's judgments reach a jury only through a qrels
  version: once the deferred items are judged and published, the jury made again with the new
  version (the name's next version) settles them.

``params["deferred_judged"]`` counts the jury's labels that are people's grades (the
meta-evaluation's ledger and note read it). It is a tally, not identity: written after each run
with a queryset update (``Judge.save`` refuses to change a locked version's params), ignored
when :func:`jury_create` compares a jury with the latest version of its name, and recounted
from the stored labels by every run (one that failed half-way leaves it to the next).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.db.models import Count, Q

from judging.assessments.models import QrelsKind, QrelsVersion
from judging.assessments.queue import slots_first, slots_topup
from judging.autojudge.models import AutoLabel, Judge, JudgeKind, JudgeRun, JuryMethod, LabelStatus
from judging.autojudge.services import (
    DOCUMENT,
    Label,
    human_grades,
    invalid,
    judge_create,
    judge_run_request,
    labels,
    register_labeller,
)
from judging.campaigns.models import Campaign, Document
from judging.core.roles import Account
from judging.pools.models import PoolDocument, PoolState, PoolVersion
from metrics.judges import juries as library

Key = tuple[str, str]
TALLY = "deferred_judged"
PEOPLE = "people's grade"  # how the answer of a jury's label that is people's grade begins
CHUNK = 500


def members_by_id(ids: Sequence[int]) -> list[Judge]:
    """The judges ``ids`` names, in its order; an InvalidInput naming ``members`` for an id that
    names none."""
    found = Judge.objects.in_bulk(list(ids))
    missing = [i for i in ids if i not in found]
    if missing:
        raise invalid("members", f"no judge {missing[0]}")
    return [found[i] for i in ids]


def _identity(params: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in params.items() if k != TALLY}


def _any(values: list[bool | None]) -> bool | None:
    """True if any is True, False if all are False, else not known (None)."""
    return True if True in values else (False if all(v is False for v in values) else None)


def _all(values: list[bool | None]) -> bool | None:
    """False if any is False, True if all are True, else not known (None)."""
    return False if False in values else (True if all(v is True for v in values) else None)


def jury_create(
    *,
    campaign: Campaign,
    name: str,
    members: Sequence[Judge],
    method: str,
    human: QrelsVersion | None = None,
    created_by: Account | None = None,
) -> Judge:
    """A jury version of ``members`` combined by ``method`` (for ``defer``, with people's grades
    from ``human``): the latest version of ``name`` when it says the same (its tally aside),
    else the name's next version (``services.judge_create``). Any combination of the
    campaign's judges may sit (an admin makes juries); it is the organisers' judge. It saw
    people's judgments when it defers to them or a member did (not known when a member did not
    declare and none did); its weights are open when all its members' are."""
    if method not in JuryMethod.values:
        raise invalid("method", f"must be one of {', '.join(JuryMethod.values)}")
    ids = [m.pk for m in members]
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice:
        raise invalid("members", f"names judge {twice[0]} twice")
    if len(ids) < 2:
        raise invalid("members", "a jury combines at least two judges")
    for m in members:
        if m.campaign_id != campaign.pk:
            raise invalid("members", f"judge {m.pk} belongs to another campaign")
        if m.kind == JudgeKind.JURY:
            raise invalid("members", f"judge {m} is a jury: a jury combines judges, not juries")
    params: dict[str, Any] = {"members": sorted(ids), "method": method}
    if method == JuryMethod.DEFER:
        if human is None:
            raise invalid("human", "defer settles disagreements with a human qrels version")
        if human.campaign_id != campaign.pk:
            raise invalid("human", "belongs to another campaign")
        if human.kind != QrelsKind.HUMAN:
            raise invalid("human", f"qrels v{human.number} is {human.kind}, not people's")
        params["human"] = human.number
    elif human is not None:
        raise invalid("human", "only the defer method reads people's grades")
    model = f"jury:{method}({len(ids)})"
    versions = Judge.objects.filter(campaign=campaign, name=name)
    other = versions.exclude(kind=JudgeKind.JURY).first()
    if other is not None:
        raise invalid("name", f"{other} is a {other.kind} judge: a jury takes a name of its own")
    latest = versions.order_by("-version").first()
    same = latest is not None and (latest.owner_id, latest.model) == (None, model)
    if latest is not None and same and _identity(latest.params) == params:
        return latest
    people = f"; people's grades from qrels v{human.number}" if human is not None else ""
    return judge_create(
        campaign=campaign,
        name=name,
        kind=JudgeKind.JURY,
        model=model,
        params=params,
        description=f"{JuryMethod(method).label}, over {len(ids)} judges{people}",
        created_by=created_by,
        open_weights=_all([m.open_weights for m in members]),
        saw_human_qrels=True
        if method == JuryMethod.DEFER
        else _any([m.saw_human_qrels for m in members]),
    )


def jury_request(
    *,
    campaign: Campaign,
    name: str,
    members: Sequence[Judge],
    method: str,
    pool: PoolVersion,
    human: QrelsVersion | None = None,
    requested_by: Account | None = None,
) -> tuple[Judge, JudgeRun]:
    """:func:`jury_create`, then its run over ``pool`` queued (``services.judge_run_request``):
    both or neither. The same jury again is the same version, run again (a run labels only
    what the version has not graded)."""
    if pool.campaign_id != campaign.pk:
        raise invalid("pool", "belongs to another campaign")
    with transaction.atomic():
        jury = jury_create(
            campaign=campaign,
            name=name,
            members=members,
            method=method,
            human=human,
            created_by=requested_by,
        )
        run = judge_run_request(judge=jury, pool=pool, requested_by=requested_by)
    return jury, run


@dataclass(frozen=True)
class JuryTally:
    """A jury's stored labels: ``graded``, of which ``people`` are people's grades, and
    ``deferred`` items waiting for people."""

    graded: int
    people: int
    deferred: int


def jury_tally(jury: Judge) -> JuryTally:
    counts = AutoLabel.objects.filter(judge=jury, kind=DOCUMENT).aggregate(
        graded=Count("id", filter=Q(grade__isnull=False)),
        people=Count("id", filter=Q(grade__isnull=False, answer__startswith=PEOPLE)),
        deferred=Count("id", filter=Q(status=LabelStatus.DEFERRED)),
    )
    return JuryTally(counts["graded"] or 0, counts["people"] or 0, counts["deferred"] or 0)


def queue_for_people(campaign: Campaign, items: Sequence[Key]) -> None:
    """Queue ``(qid, docid)`` items first in their topics (``assessments.queue``): in the
    latest built pool version holding each (``slots_first``), or, in none, with no pool
    version (``slots_topup``). An item queued before keeps its slot, moved to the front."""
    topic_ids = dict(campaign.topics.values_list("qid", "pk"))
    left = {(topic_ids[q], d) for q, d in items if q in topic_ids}
    with transaction.atomic():
        built = PoolVersion.objects.filter(campaign=campaign, state=PoolState.BUILT)
        for version in built.order_by("-number"):
            if not left:
                return
            rows = PoolDocument.objects.filter(version=version, topic_id__in={t for t, _ in left})
            held = {pair for pair in rows.values_list("topic_id", "docid") if pair in left}
            if held:
                slots_first(version=version, items=held)
                left -= held
        docids = sorted({d for _, d in left})
        with_text: set[str] = set()
        for i in range(0, len(docids), CHUNK):
            found = Document.objects.filter(campaign=campaign, docid__in=docids[i : i + CHUNK])
            with_text |= set(found.exclude(text="").values_list("docid", flat=True))
        slots_topup(campaign=campaign, items=[(t, d, d in with_text) for t, d in left])


class JuryLabeller:
    """Labels pairs for a jury from its members' labels (the module docstring)."""

    def __init__(self, judge: Judge) -> None:
        self.judge = judge
        self.method = str(judge.params.get("method", ""))
        if self.method not in JuryMethod.values:
            raise RuntimeError(f"jury {judge} has no method ({self.method!r})")
        ids = list(judge.params.get("members") or [])
        self.members = list(Judge.objects.filter(pk__in=ids, campaign_id=judge.campaign_id))
        if len(self.members) != len(ids) or len(ids) < 2:
            gone = sorted(set(ids) - {m.pk for m in self.members})
            raise RuntimeError(f"jury {judge}: its member judge(s) {gone} no longer exist")
        self.scale = judge.campaign.grade_values()
        self.human: QrelsVersion | None = None
        if self.method == JuryMethod.DEFER:
            number = judge.params.get("human")
            self.human = QrelsVersion.objects.filter(
                campaign_id=judge.campaign_id, number=number
            ).first()
            if self.human is None:
                raise RuntimeError(f"jury {judge}: qrels v{number} no longer exists")

    def votes(self, pairs: set[Key]) -> dict[str, dict[Key, int]]:
        """Member (``name vN``) -> its graded labels of ``pairs``."""
        return {str(m): {k: g for k, g in labels(m).items() if k in pairs} for m in self.members}

    def label(self, pairs: Sequence[tuple[str, str]]) -> Iterator[Label]:
        asked = set(pairs)
        fitted = asked | set(labels(self.judge)) if self.method == JuryMethod.DAWID_SKENE else asked
        votes = self.votes(fitted)
        given: dict[Key, list[int]] = {}
        for member in sorted(votes):
            for key, grade in votes[member].items():
                given.setdefault(key, []).append(grade)
        if self.method == JuryMethod.DEFER:
            yield from self._defer(pairs, votes, given)
            return
        scores: dict[Key, float] = {}
        if self.method == JuryMethod.MAJORITY:
            grades = library.majority(votes, self.scale).labels
        elif self.method == JuryMethod.MEAN:
            grades = library.mean_grade(votes, self.scale).labels
            scores = {k: sum(v) / len(v) for k, v in given.items()}
        else:
            ds = library.dawid_skene(votes, self.scale)
            grades = ds.labels
            scores = {k: sum(g * p for g, p in post.items()) for k, post in ds.posteriors.items()}
        for key in pairs:
            if key in grades:
                yield Label(
                    *key,
                    grades[key],
                    score=scores.get(key),
                    answer=f"{self.method}: members' grades {_listed(given[key])}",
                )

    def _defer(
        self, pairs: Sequence[Key], votes: dict[str, dict[Key, int]], given: dict[Key, list[int]]
    ) -> Iterator[Label]:
        assert self.human is not None
        number = self.human.number
        people = {k: g for k, g in human_grades(self.human).items() if k in given}
        jury = library.defer_to_people(votes, people, self.scale)
        pending = set(jury.pending)
        settled: set[Key] = set()
        for key in pairs:
            grades = _listed(given.get(key, []))
            if key in jury.labels and len(set(given[key])) == 1:
                yield Label(*key, jury.labels[key], answer=f"agreed: members' grades {grades}")
            elif key in jury.labels:
                settled.add(key)
                answer = f"{PEOPLE} (qrels v{number}); members' grades {grades}"
                yield Label(*key, jury.labels[key], answer=answer)
            elif key in pending:
                answer = f"deferred to people: members' grades {grades}; not in qrels v{number}"
                yield Label(*key, None, status=LabelStatus.DEFERRED, answer=answer)
        queue_for_people(self.judge.campaign, [k for k in pairs if k in pending])
        self._tally(settled)

    def _tally(self, settled: set[Key]) -> None:
        """``params["deferred_judged"]``: the jury's stored labels that are people's grades and
        those of this call (its last batch is stored after the labeller returns)."""
        stored = AutoLabel.objects.filter(
            judge=self.judge, kind=DOCUMENT, grade__isnull=False, answer__startswith=PEOPLE
        ).values_list("topic__qid", "docid")
        total = len(set(stored) | settled)
        with transaction.atomic():
            row = Judge.objects.select_for_update().filter(pk=self.judge.pk)
            params = dict(row.values_list("params", flat=True).first() or {})
            row.update(params={**params, TALLY: total})


def _listed(grades: list[int]) -> str:
    return ", ".join(str(g) for g in sorted(grades))


def register() -> None:
    register_labeller(JudgeKind.JURY, JuryLabeller)
