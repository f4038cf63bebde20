"""Adjudication, one item at a time (admins): the topic, the document with its terms marked,
each assessor's grade and time, the history of decisions, and a form with no grade chosen.

One URL, ``/manage/<campaign>/adjudicate/?topic=<qid>&docid=<docid>`` (ids as query
parameters: document ids may hold slashes): GET shows the item (without an item: the first
undecided disagreement), POST records a final grade and goes on to the next undecided one, back
to the item, or back to the agreement page (``then``: ``next``, ``item`` or anything else).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from judging.assessments.adjudication import adjudication_item, next_undecided
from judging.assessments.models import Judgment, UnitKind
from judging.assessments.services import adjudicate as adjudicate_service
from judging.campaigns.models import Campaign
from judging.campaigns.passages import passage_text
from judging.core.errors import DomainError, InvalidInput
from judging.core.params import parse_int
from judging.web.access import admin_required
from judging.web.flash import flash, flash_error
from judging.web.highlight import paragraphs, topic_terms
from metrics.problems import Problem


def item_url(campaign: Campaign, qid: str, docid: str, *, relevance_only: bool = False) -> str:
    """The adjudication page of one item."""
    query = {"topic": qid, "docid": docid} | ({"relevance": "1"} if relevance_only else {})
    return f"{reverse('manage-adjudicate', args=[campaign.pk])}?{urlencode(query)}"


def spent(seconds: float) -> str:
    """Time spent on a judgment, to the second: "47 s", "2 min 05 s", "1 h 02 min"."""
    total = round(seconds)
    if total < 60:
        return f"{total} s"
    minutes, secs = divmod(total, 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def _agreement_url(campaign: Campaign, relevance_only: bool) -> str:
    url = reverse("manage-agreement", args=[campaign.pk])
    return f"{url}?relevance=1" if relevance_only else url


@admin_required
@require_http_methods(["GET", "HEAD", "POST"])
def adjudicate(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    if request.method == "POST":
        return _decide(request, campaign)
    relevance_only = request.GET.get("relevance") == "1"
    qid, docid = request.GET.get("topic", ""), request.GET.get("docid", "")
    if not qid and not docid:
        first, _ = next_undecided(campaign, relevance_only=relevance_only)
        if first is None:
            flash(request, messages.INFO, "No disagreement is left undecided.")
            return redirect(_agreement_url(campaign, relevance_only))
        return redirect(item_url(campaign, *first, relevance_only=relevance_only))
    topic = None if "\x00" in qid + docid else campaign.topics.filter(qid=qid).first()
    if (
        topic is None
        or not Judgment.objects.filter(
            topic=topic, kind=UnitKind.DOCUMENT, docid=docid, gold__isnull=True
        ).exists()
    ):
        raise Http404(f"No judgment of document {docid!r} for topic {qid!r} in this campaign.")
    item = adjudication_item(campaign, topic, docid, relevance_only=relevance_only)
    nxt = (item["next"]["topic"], item["next"]["docid"]) if item["next"] else None
    for j in item["judgments"]:
        j["spent"] = spent(j["active_seconds"])
    found = passage_text(campaign.pk, docid)  # a document, or a passage: its text only
    doc = found.document if found else None
    text = doc.text[slice(*found.passage)] if doc and found and found.passage else ""
    text = text or (doc.text if doc else "")
    terms = topic_terms(campaign, topic)
    labels = campaign.grade_labels()
    context: dict[str, Any] = {
        "campaign": campaign,
        "topic": topic,
        "docid": docid,
        "item": item,
        "doc_paragraphs": paragraphs(text, terms),
        "doc_title_marked": paragraphs(doc.title, terms)[0] if doc and doc.title else "",
        "grades": [
            {"grade": g, "label": label, "key": str(g) if 0 <= g <= 9 else ""}
            for g, label in sorted(labels.items())
        ],
        "final_label": labels.get(item["adjudicated"], ""),
        "relevance_only": relevance_only,
        "next_url": (
            item_url(campaign, *nxt, relevance_only=relevance_only) if nxt is not None else ""
        ),
        "agreement_url": _agreement_url(campaign, relevance_only),
    }
    return render(request, "manage/adjudicate.html", context)


def _grade(request: HttpRequest) -> int:
    raw = request.POST.get("grade", "").strip()
    if not raw:
        raise InvalidInput(
            "choose a grade first", [Problem.at("grade", "no grade was chosen (none is preset)")]
        )
    try:
        return parse_int(raw, "grade")
    except InvalidInput:
        raise InvalidInput(
            "the grade must be a whole number", [Problem.at("grade", f"{raw[:20]!r}")]
        ) from None


def _decide(request: HttpRequest, campaign: Campaign) -> HttpResponse:
    qid, docid = request.POST.get("topic", ""), request.POST.get("docid", "")
    then = request.POST.get("then", "")
    relevance_only = request.POST.get("relevance") == "1"
    here = item_url(campaign, qid, docid, relevance_only=relevance_only)
    try:
        decision = adjudicate_service(
            campaign=campaign,
            qid=qid,
            docid=docid,
            grade=_grade(request),
            note=request.POST.get("note", "").strip(),
            decided_by=request.user,
        )
    except DomainError as exc:
        flash_error(request, exc)
        if then in ("next", "item"):
            return HttpResponseRedirect(here)
        return redirect(_agreement_url(campaign, relevance_only))
    label = campaign.grade_labels().get(decision.grade, "")
    flash(
        request,
        messages.SUCCESS,
        f"Final grade {decision.grade} ({label}) set for {docid} on topic {qid}.",
    )
    if then == "item":
        return HttpResponseRedirect(here)
    if then == "next":
        nxt, _ = next_undecided(campaign, after=(qid, docid), relevance_only=relevance_only)
        if nxt is not None:
            return HttpResponseRedirect(item_url(campaign, *nxt, relevance_only=relevance_only))
        flash(request, messages.INFO, "That was the last undecided disagreement.")
    return redirect(_agreement_url(campaign, relevance_only))
