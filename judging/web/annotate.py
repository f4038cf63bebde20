"""The annotator's screens: my work, the judging page, going back and undoing.

Blind by construction: these views read only topics, documents and the annotator's own
judgments; nothing here touches runs, pools' run lists, ranks, scores or other annotators.
"""

from __future__ import annotations

import math
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from judging.assessments import queue
from judging.assessments.models import Judgment
from judging.assessments.selectors import annotator_progress, waiting_for_text
from judging.campaigns.models import Campaign, Document, Topic
from judging.core.errors import DomainError, InvalidInput
from judging.core.roles import UserLike, account, is_annotator
from judging.web.flash import flash_error
from judging.web.highlight import paragraphs, topic_terms
from metrics.problems import Problem


def _annotator_campaign(request: HttpRequest, campaign_id: int) -> Campaign:
    if not is_annotator(request.user):
        raise PermissionDenied("only annotators judge")
    return get_object_or_404(Campaign.objects.visible_to(request.user), pk=campaign_id)


def _grade_buttons(campaign: Campaign, current: int | None = None) -> list[dict[str, Any]]:
    return [
        {"grade": g, "label": label, "key": str(g) if 0 <= g <= 9 else "", "current": g == current}
        for g, label in sorted(campaign.grade_labels().items())
    ]


def _item_context(campaign: Campaign, topic: Topic, docid: str) -> dict[str, Any]:
    doc = Document.objects.filter(campaign=campaign, docid=docid).first()
    terms = topic_terms(campaign, topic)
    return {
        "topic": topic,
        "docid": docid,
        "doc_title": doc.title if doc else "",
        "doc_paragraphs": paragraphs(doc.text if doc else "", terms),
        "doc_title_marked": paragraphs(doc.title, terms)[0] if doc and doc.title else "",
        "terms": terms,
    }


def _progress_for(campaign: Campaign, user: UserLike, qid: str) -> dict[str, Any] | None:
    # one topic's counts only: this runs on every key press
    return next(iter(annotator_progress(campaign, user, qid=qid)), None)


def _last_judgment(campaign: Campaign, user: UserLike) -> Judgment | None:
    return (
        Judgment.objects.filter(campaign=campaign, annotator_id=user.pk)
        .order_by("-updated_at", "-pk")
        .first()
    )


@login_required
def judge(request: HttpRequest, campaign_id: int) -> HttpResponse:
    """The document the annotator holds a lease on. A GET only reads: without an active lease
    the page asks for the next document with a POST (sent at once by the page's script)."""
    campaign = _annotator_campaign(request, campaign_id)
    lease = queue.lease_current(campaign=campaign, annotator=request.user)
    last = _last_judgment(campaign, request.user)
    if lease is None:
        return render(request, "annotate/next.html", {"campaign": campaign, "last": last})
    topic = lease.slot.topic
    context = {
        "campaign": campaign,
        "lease": lease,
        "grades": _grade_buttons(campaign),
        "progress": _progress_for(campaign, request.user, topic.qid),
        "last": last,
        "renew_every": max(10, campaign.lease_seconds // 3),
        **_item_context(campaign, topic, lease.slot.docid),
    }
    return render(request, "annotate/judge.html", context)


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
    if queue.lease_next(campaign=campaign, annotator=account(request.user)) is None:
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
    if not (raw.isascii() and raw.lstrip("-").isdigit()) or len(raw) > 20:
        shown = repr(raw[:20]) if raw else "nothing"
        raise InvalidInput(
            f"the {what} must be a whole number, not {shown}; nothing was recorded",
            [Problem.at(name, f"must be a whole number, not {shown}")],
        )
    return int(raw)


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
    except InvalidInput as exc:  # the same document again, with the message
        flash_error(request, exc)
        return redirect("annotate-judge", campaign_id=campaign.pk)
    try:
        queue.judgment_record(
            lease_id=lease_id,
            annotator=account(request.user),
            grade=grade,
            active_seconds=seconds,
        )
    except DomainError as exc:
        flash_error(request, exc, messages.WARNING)
    return _to_next(request, campaign)


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
    campaign = _annotator_campaign(request, campaign_id)
    if queue.judgment_undo(campaign=campaign, annotator=account(request.user)) is not None:
        return redirect("annotate-judge", campaign_id=campaign.pk)  # the undone item, leased
    return _to_next(request, campaign)


@login_required
@require_POST
def renew(request: HttpRequest, campaign_id: int) -> JsonResponse:
    _annotator_campaign(request, campaign_id)
    try:
        lease = queue.lease_renew(
            lease_id=_form_int(request, "lease", "lease"), annotator=account(request.user)
        )
    except DomainError as exc:
        return JsonResponse({"ok": False, "detail": exc.message}, status=exc.status)
    return JsonResponse({"ok": True, "expires_at": lease.expires_at.isoformat()})


@login_required
def judged(request: HttpRequest, campaign_id: int, judgment_id: int) -> HttpResponse:
    """Back: one of my earlier judgments, shown with its grade; a key changes it."""
    campaign = _annotator_campaign(request, campaign_id)
    judgment = get_object_or_404(
        Judgment.objects.select_related("topic"),
        pk=judgment_id,
        campaign=campaign,
        annotator=account(request.user),
    )
    if request.method == "POST":
        try:
            queue.judgment_change(
                judgment_id=judgment.pk,
                annotator=account(request.user),
                grade=_form_int(request, "grade", "grade"),
            )
        except DomainError as exc:
            flash_error(request, exc, messages.WARNING)
            return redirect("annotate-judged", campaign_id=campaign.pk, judgment_id=judgment.pk)
        return redirect("annotate-judge", campaign_id=campaign.pk)
    mine = Judgment.objects.filter(campaign=campaign, annotator_id=request.user.pk)
    earlier = mine.filter(created_at__lt=judgment.created_at).order_by("-created_at").first()
    later = mine.filter(created_at__gt=judgment.created_at).order_by("created_at").first()
    context = {
        "campaign": campaign,
        "judgment": judgment,
        "earlier": earlier,
        "later": later,
        "grades": _grade_buttons(campaign, judgment.grade),
        "progress": _progress_for(campaign, request.user, judgment.topic.qid),
        **_item_context(campaign, judgment.topic, judgment.docid),
    }
    return render(request, "annotate/judged.html", context)
