"""The annotator's screens: my work, the judging page, going back and undoing.

Blind by construction: these views read only topics, documents and the annotator's own
judgments; nothing here touches runs, pools' run lists, ranks, scores or other annotators.
"""

from __future__ import annotations

import json
import math
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from judging.assessments import queue, units
from judging.assessments.models import JudgingSlot, Judgment, JudgmentChange, Lease, UnitKind
from judging.assessments.selectors import (
    annotator_place,
    annotator_position,
    annotator_progress,
    waiting_for_text,
)
from judging.assessments.spans import answers_of
from judging.autojudge import suggestions
from judging.campaigns.models import Campaign, Topic
from judging.campaigns.passages import PassageText, passage_text
from judging.core.errors import DomainError, InvalidInput
from judging.core.params import MAX_ID, parse_int
from judging.core.roles import UserLike, account, is_annotator
from judging.web.document_text import document_text
from judging.web.flash import flash, flash_error
from judging.web.highlight import paragraphs, topic_terms
from judging.workflows.judgments import judgment_recorded
from metrics.problems import Problem


def _annotator_campaign(request: HttpRequest, campaign_id: int) -> Campaign:
    if not is_annotator(request.user):
        raise PermissionDenied("only annotators judge")
    return get_object_or_404(Campaign.objects.visible_to(request.user), pk=campaign_id)


def _grade_buttons(
    campaign: Campaign, current: int | None = None, kind: str = units.DOCUMENT
) -> list[dict[str, Any]]:
    return [
        {"grade": g, "label": label, "key": str(g) if 0 <= g <= 9 else "", "current": g == current}
        for g, label in sorted(units.grade_labels(campaign, kind).items())
    ]


def _unit(campaign: Campaign, topic: Topic, kind: str, key: str) -> dict[str, Any] | None:
    """What an item that is not a document shows (``assessments.units``), with, for nugget
    creation, the address of the topic's screen in the draft bank (opened beside the judging
    page: its leases stay renewed meanwhile)."""
    unit = units.unit_shown(campaign.pk, topic.pk, kind, key)
    if unit is not None and kind == UnitKind.NUGGET_CREATION:
        unit["editor_url"] = reverse(
            "nugget-topic", args=[campaign.pk, unit["bank_number"], topic.qid]
        )
    return unit


def _kind(kind: str) -> dict[str, Any]:
    """The item's kind as the page names it."""
    return {"kind": kind, "kind_label": UnitKind(kind).label, "noun": units.noun(kind)}


def _item_context(
    campaign: Campaign, topic: Topic, docid: str, kind: str = units.DOCUMENT
) -> dict[str, Any]:
    """The item's topic and text: a document, or a passage in its document's context; for
    another kind, what its screen shows (``assessments.units``) and no document."""
    unit = _unit(campaign, topic, kind, docid)
    found = passage_text(campaign.pk, docid) if unit is None else None
    doc = found.document if found else None
    terms = topic_terms(campaign, topic)
    return {
        **_kind(kind),
        "unit": unit,
        "topic": topic,
        "docid": docid,
        "doc_title": doc.title if doc else "",
        "doc_text": document_text(doc.text if doc else "", terms, found.passage if found else None),
        "doc_title_marked": paragraphs(doc.title, terms)[0] if doc and doc.title else "",
        "terms": terms,
    }


def _shown_suggestion(campaign: Campaign, slot: JudgingSlot) -> dict[str, str] | None:
    """The automatic grade's label when the slot is in the shown arm; None otherwise (no
    suggestion, or the hidden arm: nothing of it on the page before the assessor commits)."""
    found = suggestions.suggestion_for(
        campaign, slot.topic_id, slot.docid, slot.pk, gold=slot.gold_id is not None, kind=slot.kind
    )
    if found is None or found["arm"] != suggestions.SHOWN:
        return None
    return {"label": found["label"]}


def _position(
    campaign: Campaign, user: UserLike, slot: JudgingSlot, lease: Lease | None = None
) -> dict[str, int | None]:
    return annotator_position(
        campaign, user, slot.topic, lease_pk=lease.pk if lease is not None else None
    )


def _last_judgment(campaign: Campaign, user: UserLike) -> Judgment | None:
    return (
        Judgment.objects.filter(campaign=campaign, annotator_id=user.pk)
        .order_by("-updated_at", "-pk")
        .first()
    )


@never_cache
@login_required
def judge(request: HttpRequest, campaign_id: int) -> HttpResponse:
    """The document the annotator holds a lease on. A GET only reads: without an active lease
    the page asks for the next document with a POST (sent at once by the page's script).

    Never cached (``no-store``): Back then Forward must show what the server holds now, not the
    page as it was first loaded, whose document may have been judged since."""
    campaign = _annotator_campaign(request, campaign_id)
    lease = queue.lease_current(campaign=campaign, annotator=request.user)
    last = _last_judgment(campaign, request.user)
    if lease is None:
        return render(request, "annotate/next.html", {"campaign": campaign, "last": last})
    topic = lease.slot.topic
    position, progress = annotator_place(campaign, request.user, topic, lease_pk=lease.pk)
    context = {
        "campaign": campaign,
        "lease": lease,
        "grades": _grade_buttons(campaign, kind=lease.slot.kind),
        "progress": progress,
        "position": position,
        "last": last,
        "renew_every": max(10, campaign.lease_seconds // 3),
        "max_answers": settings.POOLJUDGE_JUDGING.max_answer_spans,
        "prefetch": queue.prefetch(),
        "suggestion": _shown_suggestion(campaign, lease.slot),
        **_item_context(campaign, topic, lease.slot.docid, lease.slot.kind),
    }
    return render(request, "annotate/judge.html", context)


# --- the judging page's calls (JSON, same origin, session and CSRF header) ------------------


def _item_json(campaign: Campaign, user: UserLike, lease: Lease) -> dict[str, Any]:
    """A leased item as the judging page shows it. The document's title and paragraphs are HTML
    escaped and highlighted here, on the server (``judging.web.highlight``), so that the page
    inserts them as they are and the escaping proof stays in one place; the topic's fields are
    plain text (the page sets them as text). ``offsets``: each paragraph's ``[start, end]`` in
    the document's text; ``passage``: the passage's (null: a whole document), whose paragraphs
    are cut at its ends (``web.document_text``); ``length``: the text's, in characters.

    ``kind``: what is judged; ``unit``: for a kind other than a document, what its screen
    shows (plain text fields, set as text by the page; ``assessments.units``), with no
    document; ``grades``: the kind's grade keys."""
    slot = lease.slot
    topic = slot.topic
    unit = _unit(campaign, topic, slot.kind, slot.docid)
    found: PassageText | None = queue.item_text(slot)
    doc = found.document if found else None
    terms = topic_terms(campaign, topic)
    shown = document_text(doc.text if doc else "", terms, found.passage if found else None)
    return {
        "lease": lease.pk,
        "expires_at": lease.expires_at.isoformat(),
        "topic": {
            "qid": topic.qid,
            "title": topic.title,
            "description": topic.description,
            "narrative": topic.narrative,
        },
        **_kind(slot.kind),
        "unit": unit,
        "grades": _grade_buttons(campaign, kind=slot.kind),
        "docid": slot.docid,
        "title_html": str(paragraphs(doc.title, terms)[0]) if doc and doc.title else "",
        "paragraphs_html": [str(p.html) for p in shown.pieces],
        "offsets": [[p.start, p.end] for p in shown.pieces],
        "passage": list(shown.passage) if shown.passage else None,
        "length": len(doc.text) if doc else 0,
        "position": _position(campaign, user, slot, lease),
        "suggestion": _shown_suggestion(campaign, slot),
    }


def _json_body(request: HttpRequest) -> dict[str, Any]:
    if not request.body:
        return {}
    try:
        body = json.loads(request.body)
    except (ValueError, UnicodeDecodeError):
        raise InvalidInput(
            "the request body is not JSON", [Problem.at("body", "must be a JSON object")]
        ) from None
    if not isinstance(body, dict):
        raise InvalidInput(
            "the request body must be a JSON object", [Problem.at("body", "not an object")]
        )
    return body


def _json_id(body: dict[str, Any], name: str) -> int | None:
    value = body.get(name)
    if value is None:
        return None
    if isinstance(value, int):  # a JSON number (a string of digits is not one)
        try:
            return parse_int(value, name, minimum=1, maximum=MAX_ID)
        except InvalidInput:
            pass
    raise InvalidInput(
        f"{name} must be a lease id (a positive whole number), not {str(value)[:20]!r}",
        [Problem.at(name, "must be a positive whole number")],
    )


def _json_ids(body: dict[str, Any], name: str) -> list[int]:
    values = body.get(name) or []
    if not isinstance(values, list) or len(values) > 100:
        raise InvalidInput(
            f"{name} must be a list of at most 100 lease ids",
            [Problem.at(name, "must be a list of lease ids")],
        )
    return [v for v in (_json_id({name: v}, name) for v in values) if v is not None]


def _json_error(exc: DomainError) -> JsonResponse:
    return JsonResponse({"ok": False, **exc.as_dict()}, status=exc.status)


@login_required
@require_POST
def ahead(request: HttpRequest, campaign_id: int) -> JsonResponse:
    """The items after those the page holds, leased ahead: ``{"ahead": item or null, "more":
    [items]}``.

    Body: ``{"current": lease id or null, "holding": [lease ids], "pending": [lease ids],
    "count": n}``: the lease the page shows, those it keeps ready to show next, those it has
    judged or skipped whose call is not answered yet, and how many it asks for (default 1, at
    most ``POOLJUDGE_PREFETCH``: one call refills what several quick keys used up)."""
    campaign = _annotator_campaign(request, campaign_id)
    user = account(request.user)
    try:
        body = _json_body(request)
        current = _json_id(body, "current")
        holding = [*([current] if current else []), *_json_ids(body, "holding")]
        pending = _json_ids(body, "pending")
        count = _json_id(body, "count") or 1
        leases: list[Lease] = []
        for _ in range(min(count, max(queue.prefetch(), 1))):
            lease = queue.lease_ahead(
                campaign=campaign, annotator=user, holding=holding, pending=pending
            )
            if lease is None:
                break
            leases.append(lease)
            holding.append(lease.pk)
    except DomainError as exc:
        return _json_error(exc)
    items = [_item_json(campaign, user, lease) for lease in leases]
    return JsonResponse({"ok": True, "ahead": items[0] if items else None, "more": items[1:]})


@login_required
def done(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = _annotator_campaign(request, campaign_id)
    return render(
        request,
        "annotate/done.html",
        {
            "campaign": campaign,
            "last": _last_judgment(campaign, request.user),
            "topics": annotator_progress(campaign, request.user),
            "waiting_text": waiting_for_text(campaign, request.user),
        },
    )


def _to_next(request: HttpRequest, campaign: Campaign) -> HttpResponse:
    """After a write (a POST): lease the next document, or say that nothing is left."""
    return _to_lease(campaign, queue.lease_next(campaign=campaign, annotator=account(request.user)))


def _to_lease(campaign: Campaign, lease: Lease | None) -> HttpResponse:
    """The judging page for the lease just taken, or the end page when there is none."""
    if lease is None:
        return redirect("annotate-done", campaign_id=campaign.pk)
    return redirect("annotate-judge", campaign_id=campaign.pk)


@login_required
@require_POST
def next_item(request: HttpRequest, campaign_id: int) -> HttpResponse:
    return _to_next(request, _annotator_campaign(request, campaign_id))


def _form_int(request: HttpRequest, name: str, what: str) -> int:
    """A whole number posted by the judging form; a missing or malformed one is an
    ``InvalidInput`` naming the field (the page shows it, nothing is recorded or skipped)."""
    raw = request.POST.get(name, "").strip()
    try:
        return parse_int(raw, name)
    except InvalidInput:
        shown = repr(raw[:20]) if raw else "nothing"
        raise InvalidInput(
            f"the {what} must be a whole number, not {shown}; nothing was recorded",
            [Problem.at(name, f"must be a whole number, not {shown}")],
        ) from None


def _form_answers(request: HttpRequest) -> Any:
    """The answer spans posted by the judging page (JSON in the hidden field ``answers``; empty
    or absent: None), checked by the service."""
    raw = request.POST.get("answers", "").strip()
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        raise InvalidInput(
            "the answer spans are not JSON; nothing was recorded",
            [Problem.at("answers", "must be a JSON list of [start, end] pairs")],
        ) from None


def _form_seconds(request: HttpRequest) -> float:
    raw = request.POST.get("active_seconds", "").strip()
    try:
        seconds = float(raw) if raw else 0.0
    except ValueError:
        seconds = math.nan
    if not math.isfinite(seconds):
        raise InvalidInput(
            f"active_seconds must be a number, not {raw[:20]!r}; nothing was recorded",
            [Problem.at("active_seconds", "must be a finite number")],
        )
    return seconds


@login_required
@require_POST
def submit(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = _annotator_campaign(request, campaign_id)
    try:
        lease_id = _form_int(request, "lease", "lease")
        grade = _form_int(request, "grade", "grade")
        seconds = _form_seconds(request)
        answers = _form_answers(request)
    except InvalidInput as exc:  # the same document again, with the message
        flash_error(request, exc)
        return redirect("annotate-judge", campaign_id=campaign.pk)
    try:
        recorded = judgment_recorded(
            lease_id=lease_id,
            annotator=account(request.user),
            grade=grade,
            active_seconds=seconds,
            answers=answers,
            then_lease_in=campaign,
        )
    except DomainError as exc:
        flash_error(request, exc, messages.WARNING)
        return _to_next(request, campaign)
    if recorded.reveal:  # the hidden arm: committed, so the automatic grade may be told now
        messages.add_message(
            request,
            messages.INFO,
            f"{recorded.reveal} (document {recorded.judgment.docid}).",
            extra_tags="suggestion-reveal",
        )
    return _to_lease(campaign, recorded.next_lease)


@login_required
@require_POST
def skip(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = _annotator_campaign(request, campaign_id)
    try:
        lease_id = _form_int(request, "lease", "lease")
    except InvalidInput as exc:
        flash_error(request, exc)
        return redirect("annotate-judge", campaign_id=campaign.pk)
    try:
        queue.lease_release(lease_id=lease_id, annotator=account(request.user))
    except DomainError as exc:
        flash_error(request, exc, messages.WARNING)
    return _to_next(request, campaign)


@login_required
@require_POST
def undo(request: HttpRequest, campaign_id: int) -> HttpResponse:
    """Undo the latest action. A form post redirects to the next page with a message; the
    judging page's call (``Accept: application/json``) gets ``{"current": item or null,
    "message": ...}``: the undone item, leased back, or the current one."""
    campaign = _annotator_campaign(request, campaign_id)
    user = account(request.user)
    undos = JudgmentChange.objects.filter(
        annotator=user, topic__campaign=campaign, undoes__isnull=False
    )
    before = undos.count()
    lease = queue.judgment_undo(campaign=campaign, annotator=user)
    if lease is not None:
        message = f"Undone: {units.noun(lease.slot.kind)} {lease.slot.docid} is back to judge."
    elif undos.count() > before:
        message = "Undone: your last change of grade was reverted."
    else:
        message = "Nothing to undo."
    if "application/json" in request.headers.get("Accept", ""):
        current = lease or queue.lease_current(campaign=campaign, annotator=user)
        return JsonResponse(
            {
                "ok": True,
                "message": message,
                "current": _item_json(campaign, user, current) if current else None,
            }
        )
    flash(request, messages.SUCCESS, message)
    if lease is not None:
        return redirect("annotate-judge", campaign_id=campaign.pk)  # the undone item, leased
    return _to_next(request, campaign)


@login_required
@require_POST
def renew(request: HttpRequest, campaign_id: int) -> JsonResponse:
    """Keep every item the annotator holds while the page is open: the one being read (the
    ``lease`` posted, whose end is reported as a conflict), the one leased ahead and those
    whose judgment is on its way."""
    campaign = _annotator_campaign(request, campaign_id)
    user = account(request.user)
    try:
        lease_id = _form_int(request, "lease", "lease")
        renewed = queue.lease_renew_held(campaign=campaign, annotator=user)
        if lease_id not in renewed:
            queue.lease_renew(lease_id=lease_id, annotator=user)  # 404 or 409: says why
            renewed.append(lease_id)
    except DomainError as exc:
        return JsonResponse({"ok": False, "detail": exc.message}, status=exc.status)
    expires = Lease.objects.get(pk=lease_id).expires_at
    return JsonResponse({"ok": True, "expires_at": expires.isoformat(), "renewed": renewed})


@never_cache
@login_required
def judged(request: HttpRequest, campaign_id: int, judgment_id: int) -> HttpResponse:
    """Back: one of my earlier judgments, shown with its grade (never cached: the grade shown
    is the one stored now); a key changes it."""
    campaign = _annotator_campaign(request, campaign_id)
    judgment = get_object_or_404(
        Judgment.objects.select_related("topic"),
        pk=judgment_id,
        campaign=campaign,
        annotator=account(request.user),
    )
    if request.method == "POST":
        old_answers = answers_of(judgment.spans)
        try:
            changed = queue.judgment_change(
                judgment_id=judgment.pk,
                annotator=account(request.user),
                grade=_form_int(request, "grade", "grade"),
                answers=_form_answers(request),
            )
        except DomainError as exc:
            flash_error(request, exc, messages.WARNING)
            return redirect("annotate-judged", campaign_id=campaign.pk, judgment_id=judgment.pk)
        labels = units.grade_labels(campaign, judgment.kind)
        old_grade, new_grade = judgment.grade, changed.grade
        new_answers = answers_of(changed.spans)
        if old_grade == new_grade and old_answers != new_answers:
            spans = f"{len(new_answers) or 'no'} answer span{'' if len(new_answers) == 1 else 's'}"
            flash(
                request,
                messages.SUCCESS,
                f"Changed: {judgment.docid} stays {labels[new_grade]}, with {spans}.",
            )
        elif old_grade == new_grade:
            flash(request, messages.SUCCESS, f"Kept: {judgment.docid} stays {labels[new_grade]}.")
        else:
            flash(
                request,
                messages.SUCCESS,
                f"Changed: {judgment.docid} from {labels.get(old_grade, old_grade)} "
                f"to {labels.get(new_grade, new_grade)}.",
            )
        return redirect("annotate-judge", campaign_id=campaign.pk)
    mine = Judgment.objects.filter(campaign=campaign, annotator_id=request.user.pk)
    earlier = mine.filter(created_at__lt=judgment.created_at).order_by("-created_at").first()
    later = mine.filter(created_at__gt=judgment.created_at).order_by("created_at").first()
    position, progress = annotator_place(
        campaign, request.user, judgment.topic, judged_before=judgment.created_at
    )
    context = {
        "campaign": campaign,
        "judgment": judgment,
        "earlier": earlier,
        "later": later,
        "grades": _grade_buttons(campaign, judgment.grade, judgment.kind),
        "progress": progress,
        "position": position,
        "answers_json": json.dumps([list(a) for a in answers_of(judgment.spans)]),
        "max_answers": settings.POOLJUDGE_JUDGING.max_answer_spans,
        **_item_context(campaign, judgment.topic, judgment.docid, judgment.kind),
    }
    return render(request, "annotate/judged.html", context)
