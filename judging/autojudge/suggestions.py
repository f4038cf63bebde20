"""Automatic grades suggested to assessors, with an anchoring control (issue 17, point 5).

When a campaign's suggestions are on, an assessor judging a (topic, document) that the chosen
judge version graded sees the automatic grade as a hint ("Suggested: Relevant") in the *shown*
arm; in the *hidden* arm the grade stays out of the page until the assessor has committed their
own, then it is revealed ("The automatic judge said: ..."). Which arm a slot is in is decided by
a hash of (campaign, slot), never by the assessor, so the two arms are a randomised split of the
items (``arm_of``): agreement between people and the judge is then comparable across the arms,
and the difference (shown - hidden) estimates how much seeing the grade pulls assessors towards
it (the anchoring effect, ``metrics.judges.robustness.anchoring``).

What the assessor is told never names the judge, its model, or anything about runs: a grade and
its label only. The arm and the grade are computed on the server when a judgment is recorded
(``suggestion_for_lease`` in the views, passed to ``assessments.queue.judgment_record``), never
taken from the client.

The judging hot path pays nothing while no campaign has suggestions on: the ids of campaigns
whose suggestions are on are kept in the cache (``_enabled_campaigns``), dropped whenever a
setting is saved (at once, and again after the commit, so that no process caches the old value
from before it); a campaign in that set costs one statement per item (its setting joined with
the judge's label), read from the database, so turning suggestions off takes effect at once.
With a cache that processes do not share (the local-memory default, or while the shared cache
cannot be reached: ``judging.core.cache`` then keeps the set in the process's memory, and judging
goes on), a campaign turned on may take up to ``CACHE_SECONDS`` to get suggestions in another
process.
"""

from __future__ import annotations

import hashlib
import math
from typing import Any

from django.db import transaction
from django.db.models import OuterRef, Subquery

from judging.assessments import units
from judging.assessments.models import Judgment, JudgmentChange, Lease, UnitKind
from judging.autojudge.models import AutoLabel, Judge, Suggestions
from judging.campaigns.models import Campaign, Topic
from judging.core.cache import cache_delete, cache_get, cache_set
from judging.core.errors import InvalidInput, NotAllowed
from judging.core.roles import UserLike, is_admin
from metrics.judges.robustness import anchoring
from metrics.problems import Problem

SHOWN, HIDDEN = "shown", "hidden"
ARMS = (SHOWN, HIDDEN)
CACHE_KEY = "pooljudge:suggestions:enabled-campaigns"
CACHE_SECONDS = 30


def _invalid(field: str, message: str) -> InvalidInput:
    return InvalidInput(f"{field}: {message}", [Problem.at(field, message)])


# --- the arms -------------------------------------------------------------------------------


def arm_of(campaign_id: int, slot_id: int, hidden_share: float) -> str:
    """``"hidden"`` or ``"shown"`` for a judging slot: ``u < hidden_share`` with ``u`` uniform in
    [0, 1) from the first 8 bytes of SHA-256 of ``"pooljudge-suggestions:<campaign>:<slot>"``.

    Deterministic (a page, its reload and the recorded judgment agree), independent of who
    judges, and a fresh split per campaign. The slot, not the (topic, document): the second slot
    of an overlap item is an arm draw of its own."""
    digest = hashlib.sha256(f"pooljudge-suggestions:{campaign_id}:{slot_id}".encode()).digest()
    u = int.from_bytes(digest[:8], "big") / 2**64
    return HIDDEN if u < hidden_share else SHOWN


# --- settings -------------------------------------------------------------------------------


def _forget_cached() -> None:
    cache_delete(CACHE_KEY)
    transaction.on_commit(lambda: cache_delete(CACHE_KEY))


def _enabled_campaigns() -> frozenset[int]:
    """Ids of the campaigns whose suggestions are on (cached; see the module docstring)."""
    found = cache_get(CACHE_KEY)
    if found is None:
        found = frozenset(
            Suggestions.objects.filter(enabled=True).values_list("campaign_id", flat=True)
        )
        cache_set(CACHE_KEY, found, CACHE_SECONDS)
    return frozenset(found)


def _share(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _invalid("hidden_share", f"must be a number from 0 to 1, not {str(value)[:20]!r}")
    share = float(value)
    if not math.isfinite(share) or not 0.0 <= share <= 1.0:
        raise _invalid("hidden_share", f"must be from 0 to 1, not {share:g}")
    return share


def suggestions_configure(
    *,
    campaign: Campaign,
    judge: Judge | int,
    hidden_share: Any,
    enabled: bool = True,
    by: UserLike,
) -> Suggestions:
    """Show ``judge``'s grades to the campaign's assessors, keeping a ``hidden_share`` of the
    slots hidden until committed (0: all shown; 1: all hidden, a pure audit). Admins only; the
    judge must be one of the campaign's. Replaces the campaign's earlier setting; judgments
    recorded before keep the arm and grade they were recorded with."""
    if not is_admin(by):
        raise NotAllowed("only admins set up suggestions")
    share = _share(hidden_share)
    if not isinstance(enabled, bool):
        raise _invalid("enabled", "must be true or false")
    judge_id = judge.pk if isinstance(judge, Judge) else judge
    if isinstance(judge_id, bool) or not isinstance(judge_id, int):
        raise _invalid("judge", "must be a judge's id")
    found = Judge.objects.filter(pk=judge_id, campaign=campaign).first()
    if found is None:
        raise _invalid("judge", f"no judge {judge_id} in campaign {campaign.pk}")
    with transaction.atomic():
        setting, _ = Suggestions.objects.update_or_create(
            campaign=campaign,
            defaults={"judge": found, "hidden_share": share, "enabled": enabled},
        )
        _forget_cached()
    return setting


def suggestions_off(campaign: Campaign) -> bool:
    """Stop suggesting (the judge and share are kept for turning it on again). Returns whether
    suggestions were on."""
    with transaction.atomic():
        changed = Suggestions.objects.filter(campaign=campaign, enabled=True).update(enabled=False)
        _forget_cached()
    return bool(changed)


def suggestion_setting(campaign: Campaign) -> dict[str, Any] | None:
    """The campaign's setting as admins and researchers read it (names the judge), or None."""
    setting = Suggestions.objects.filter(campaign=campaign).select_related("judge").first()
    if setting is None:
        return None
    return {
        "enabled": setting.enabled,
        "judge": setting.judge.describe(),
        "hidden_share": setting.hidden_share,
        "updated_at": setting.updated_at.isoformat(),
    }


# --- what an assessor is suggested ------------------------------------------------------------


def _suggestion(
    campaign: Campaign,
    slot_id: int,
    hidden_share: float,
    grade: int | None,
    gold: bool,
    kind: str = UnitKind.DOCUMENT,
) -> dict[str, Any] | None:
    if grade is None:
        return None
    labels = units.grade_labels(campaign, kind)
    # a gold item measures the assessor, so its grade must not lean on the judge's: always the
    # hidden arm (revealed after the commit, like any hidden-arm item, so that it does not stand
    # out as the one document without a suggestion)
    return {
        "grade": grade,
        "label": labels.get(grade, str(grade)),
        "arm": HIDDEN if gold else arm_of(campaign.pk, slot_id, hidden_share),
    }


def suggestion_for(
    campaign: Campaign,
    topic: Topic | int,
    docid: str,
    slot_id: int,
    *,
    gold: bool = False,
    kind: str = UnitKind.DOCUMENT,
) -> dict[str, Any] | None:
    """``{"grade", "label", "arm"}`` for the slot, or None when the campaign's suggestions are
    off or its judge has no grade for the (topic, document). Nothing else: never the judge, its
    model or anything about runs (the assessor reads this). ``gold``: the slot serves a gold
    item, always in the hidden arm. ``kind``: the item's (a nugget assignment or a citation is
    suggested the judge's label of that item, on its kind's scale)."""
    if campaign.pk not in _enabled_campaigns() or kind == UnitKind.NUGGET_CREATION:
        return None
    topic_id = topic.pk if isinstance(topic, Topic) else topic
    label = AutoLabel.objects.filter(
        judge_id=OuterRef("judge_id"),
        topic_id=topic_id,
        kind=kind,
        docid=docid,
        grade__isnull=False,
    ).values("grade")[:1]
    row = (
        Suggestions.objects.filter(campaign_id=campaign.pk, enabled=True)
        .annotate(grade=Subquery(label))
        .values_list("hidden_share", "grade")
        .first()
    )
    if row is None:
        return None
    return _suggestion(campaign, slot_id, row[0], row[1], gold, kind)


def suggestion_for_lease(*, lease_id: int, annotator: UserLike) -> dict[str, Any] | None:
    """``suggestion_for`` the slot of one of the annotator's leases (None for a lease that is
    not theirs: recording refuses it anyway), in one statement: what the views pass to
    ``judgment_record``."""
    enabled = _enabled_campaigns()
    if not enabled:
        return None
    label = AutoLabel.objects.filter(
        judge_id=OuterRef("slot__campaign__suggestions__judge_id"),
        topic_id=OuterRef("slot__topic_id"),
        kind=OuterRef("slot__kind"),
        docid=OuterRef("slot__docid"),
        grade__isnull=False,
    ).values("grade")[:1]
    row = (
        Lease.objects.filter(
            pk=lease_id,
            annotator_id=annotator.pk,
            slot__campaign_id__in=enabled,
            slot__campaign__suggestions__enabled=True,
        )
        .annotate(grade=Subquery(label))
        .values_list(
            "slot_id",
            "slot__campaign_id",
            "slot__campaign__scale",
            "slot__campaign__suggestions__hidden_share",
            "grade",
            "slot__gold_id",
            "slot__kind",
        )
        .first()
    )
    if row is None:
        return None
    slot_id, campaign_id, scale, share, grade, gold_id, kind = row
    campaign = Campaign(pk=campaign_id, scale=scale)
    return _suggestion(campaign, slot_id, share, grade, gold_id is not None, kind)


def recorded(suggestion: dict[str, Any] | None) -> dict[str, Any]:
    """The keyword arguments of ``judgment_record`` for a suggestion (or none)."""
    if suggestion is None:
        return {"suggestion_arm": "", "suggested_grade": None}
    return {"suggestion_arm": suggestion["arm"], "suggested_grade": suggestion["grade"]}


def reveal_text(suggestion: dict[str, Any] | None) -> str:
    """What the page says once a hidden-arm judgment is committed ("" otherwise)."""
    if suggestion is None or suggestion["arm"] != HIDDEN:
        return ""
    return f"The automatic judge said: {suggestion['label']}"


# --- the anchoring report -------------------------------------------------------------------

# The kappa bootstrap draws resamples x items codes at once: bounded so that a page of a large
# campaign stays within tens of megabytes (its interval is narrow there anyway).
MAX_RESAMPLES, MIN_RESAMPLES, MAX_DRAWS = 2000, 100, 4_000_000


def bootstrap_resamples(n_items: int) -> int:
    """Resamples for the kappa interval of an arm of ``n_items``: 2000, fewer past 2000 items
    (``MAX_DRAWS`` codes per arm), never fewer than 100."""
    return max(MIN_RESAMPLES, min(MAX_RESAMPLES, MAX_DRAWS // max(n_items, 1)))


def report_judge(campaign: Campaign, judge_id: int | None) -> Judge | None:
    """The judge a report is asked to compare with (None: the recorded suggestions); one not
    of the campaign is an ``InvalidInput`` naming ``judge``."""
    if judge_id is None:
        return None
    found = Judge.objects.filter(pk=judge_id, campaign=campaign).first()
    if found is None:
        raise _invalid("judge", f"no judge {judge_id} in campaign {campaign.pk}")
    return found


def anchoring_report(
    campaign: Campaign, judge: Judge | None = None, kind: str = UnitKind.DOCUMENT
) -> dict[str, Any]:
    """Human-automatic agreement in the shown and the hidden arm, and the difference with its
    95% interval (``metrics.judges.robustness.anchoring``), from the recorded judgments.

    Human grade: ``Judgment.grade`` (the current one); arm: ``Judgment.suggestion_arm``;
    automatic grade: ``Judgment.suggested_grade``, what the assessor was (or would have been)
    shown, or, with ``judge``, that judge version's label of the pair (judgments of pairs it did
    not grade left out). Every judgment is one observation (two assessors of an overlap item are
    two). Gold items are left out (quality control only), as are judgments recorded with no
    suggestion. ``changed_after_commit`` counts, per arm, the judgments whose grade was changed
    after it was first committed, or undone and given again: in the hidden arm that is after
    the reveal, so those grades may have moved towards the judge's. ``kind``: the items compared
    (documents, or an answer run's nugget assignments or citations, on their own scale).
    """
    scale = units.grade_values(campaign, kind)
    base = Judgment.objects.filter(campaign=campaign, kind=kind)
    counts = {
        "gold": base.filter(gold__isnull=False).exclude(suggestion_arm="").count(),
        "without_suggestion": base.filter(gold__isnull=True, suggestion_arm="").count(),
    }
    data = list(
        base.filter(gold__isnull=True)
        .exclude(suggestion_arm="")
        .values_list(
            "topic_id",
            "topic__qid",
            "docid",
            "annotator_id",
            "grade",
            "suggestion_arm",
            "suggested_grade",
        )
    )
    auto: dict[tuple[int, str], int] = {}
    if judge is not None:
        if judge.campaign_id != campaign.pk:
            raise _invalid("judge", f"judge {judge.pk} is not one of campaign {campaign.pk}'s")
        wanted = {(t, d) for t, _, d, *_ in data}
        auto = {
            (t, d): g
            for t, d, g in AutoLabel.objects.filter(
                judge=judge,
                kind=kind,
                grade__isnull=False,
                topic_id__in={t for t, _ in wanted},
            ).values_list("topic_id", "docid", "grade")
            if (t, d) in wanted and g is not None
        }
    # items whose history is more than their first grade: changed, or undone and judged again
    revised = set(
        JudgmentChange.objects.filter(topic__campaign=campaign, kind=kind)
        .exclude(old_grade__isnull=True, new_grade__isnull=False)
        .values_list("topic_id", "docid", "annotator_id")
    )
    arms: dict[str, dict[tuple[str, str], tuple[int, int]]] = {SHOWN: {}, HIDDEN: {}}
    changed = dict.fromkeys(ARMS, 0)
    not_graded = 0
    for topic_id, qid, docid, annotator_id, grade, arm, suggested in data:
        automatic = suggested if judge is None else auto.get((topic_id, docid))
        if automatic is None or arm not in arms:
            not_graded += 1
            continue
        # one observation per judgment: an annotator judges a (topic, document) once
        arms[arm][(qid, f"{docid}\t{annotator_id}")] = (grade, automatic)
        changed[arm] += (topic_id, docid, annotator_id) in revised
    setting = suggestion_setting(campaign)
    largest = max(len(arms[SHOWN]), len(arms[HIDDEN]), 1)
    result = anchoring(arms[SHOWN], arms[HIDDEN], scale, n_resamples=bootstrap_resamples(largest))
    return {
        "campaign": campaign.pk,
        "setting": setting,
        "automatic": (
            "the suggested grade recorded with each judgment"
            if judge is None
            else f"the labels of judge {judge.name} v{judge.version}"
        ),
        "judge": judge.describe() if judge is not None else None,
        "kind": kind,
        "scale": scale,
        "excluded": {**counts, "not_graded_by_judge": not_graded},
        "changed_after_commit": changed,
        **result,
    }
