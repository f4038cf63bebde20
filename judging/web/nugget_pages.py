"""Nugget banks' pages: a campaign's versions (admins draft a new one there), one version's
topics (admins publish it there), and the editing screen of one topic of one version.

The editing screen shows the topic, the segments judged relevant in the version's qrels version
(the ones it was drafted from, each marked with the nuggets that name it), the nuggets, and the
topic's history of edits. A draft is edited with the keyboard (``static/pooljudge/nuggets.js``;
the key map is in the page's help panel) or the row's buttons: every edit is a POST that names
the topic's latest edit the page was shown with (``base``), so a stale page's edit is refused
and the page says so; the page then shows the topic as it is. A published version is read-only.
Blind: nothing on these pages names a run.

Annotators and admins read and edit drafts; researchers read published versions (a draft is not
found for them); admins draft and publish; anybody else is refused (403).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from judging.assessments.models import NuggetBank, NuggetBankState
from judging.assessments.nugget_edits import nugget_edit
from judging.assessments.nugget_selectors import (
    bank_counts,
    bank_segments,
    bank_topics,
    banks_visible,
    campaign_bank,
    may_edit,
    may_manage,
    topic_history,
    topic_of,
)
from judging.assessments.nuggets import bank_publish
from judging.autojudge.models import Judge, JudgeKind
from judging.autojudge.nugget_drafts import draft_requested
from judging.campaigns.models import Campaign
from judging.core.errors import DomainError, InvalidInput, NotFound
from judging.core.params import parse_int
from judging.core.roles import is_researcher
from judging.web.flash import flash, flash_error
from metrics.problems import Problem

SEGMENT_CHARS = 6000  # of a segment's text shown on the editing screen


def _campaign(request: HttpRequest, campaign_id: int) -> Campaign:
    if not (may_edit(request.user) or is_researcher(request.user)):
        raise PermissionDenied("nugget banks are for annotators, researchers and admins")
    campaign: Campaign = get_object_or_404(
        Campaign.objects.visible_to(request.user), pk=campaign_id
    )
    return campaign


def _bank(request: HttpRequest, campaign: Campaign, number: int) -> NuggetBank:
    try:
        return campaign_bank(request.user, campaign, number)
    except NotFound as exc:
        raise Http404(exc.message) from None


def topic_url(bank: NuggetBank, qid: str) -> str:
    """The editing screen of topic ``qid`` of ``bank`` (what a nugget creation item links to)."""
    return reverse("nugget-topic", args=[bank.campaign_id, bank.number, qid])


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def banks_page(request: HttpRequest, campaign_id: int) -> HttpResponse:
    """The campaign's versions; an admin drafts a new one (POST)."""
    campaign = _campaign(request, campaign_id)
    if request.method == "POST":
        return _draft(request, campaign)
    banks = list(banks_visible(request.user, campaign).select_related("based_on", "qrels"))
    counts = bank_counts(banks)
    rows = [
        {"bank": b, "topics": counts.get(b.pk, (0, 0))[0], "nuggets": counts.get(b.pk, (0, 0))[1]}
        for b in banks
    ]
    judges = Judge.objects.filter(campaign=campaign, kind=JudgeKind.OPENAI).order_by(
        "name", "version"
    )
    context: dict[str, Any] = {
        "campaign": campaign,
        "rows": rows,
        "can_manage": may_manage(request.user),
        "judges": judges if may_manage(request.user) else [],
        "qrels": campaign.qrels_versions.order_by("-number") if may_manage(request.user) else [],
    }
    return render(request, "nuggets/banks.html", context)


def _number(raw: str, name: str, minimum: int = 1) -> int | None:
    """A form's whole number, or None when the field is left empty."""
    return parse_int(raw, name, minimum=minimum) if raw.strip() else None


def _draft(request: HttpRequest, campaign: Campaign) -> HttpResponse:
    if not may_manage(request.user):
        raise PermissionDenied("only admins draft nugget banks")
    post = request.POST
    try:
        report = draft_requested(
            campaign=campaign,
            by=request.user,
            source=post.get("source", ""),
            qrels=_number(post.get("qrels", ""), "qrels"),
            based_on=_number(post.get("based_on", ""), "based_on"),
            judge=_number(post.get("judge", ""), "judge"),
            data=request.FILES.get("file"),
            file_name=getattr(request.FILES.get("file"), "name", None),
            note=post.get("note", "").strip(),
            most=_number(post.get("most", ""), "most"),
            vital=_number(post.get("vital", ""), "vital", minimum=0),
        )
    except DomainError as exc:
        flash_error(request, exc)
        if isinstance(exc, InvalidInput):
            for p in exc.problems[:10]:
                flash(request, messages.ERROR, str(p))
        return redirect("nugget-banks", campaign_id=campaign.pk)
    bank = report.bank
    flash(
        request,
        messages.SUCCESS,
        f"Nugget bank v{bank.number} drafted: {sum(report.drafted.values())} nuggets over "
        f"{len(report.drafted)} topic(s).",
    )
    for qid, why in sorted(report.skipped.items())[:20]:
        flash(request, messages.WARNING, f"Topic {qid}: no nugget ({why}).")
    return redirect("nugget-bank", campaign_id=campaign.pk, number=bank.number)


@login_required
@require_http_methods(["GET", "HEAD"])
def bank_page(request: HttpRequest, campaign_id: int, number: int) -> HttpResponse:
    """One version: its topics with their nuggets' counts, links to their editing screens."""
    campaign = _campaign(request, campaign_id)
    bank = _bank(request, campaign, number)
    topics = bank_topics(bank)
    rows = [
        {
            "topic": t,
            "url": topic_url(bank, t.qid),
            "vital": sum(n.importance == "vital" for n in t.nuggets),
        }
        for t in topics
    ]
    context = {
        "campaign": campaign,
        "bank": bank,
        "rows": rows,
        "draft": bank.state == NuggetBankState.DRAFT,
        "can_manage": may_manage(request.user),
        "empty": [t.qid for t in topics if not t.nuggets],
    }
    return render(request, "nuggets/bank.html", context)


@login_required
@require_POST
def bank_publish_page(request: HttpRequest, campaign_id: int, number: int) -> HttpResponse:
    """Publish the version (admins): frozen from now on."""
    campaign = _campaign(request, campaign_id)
    if not may_manage(request.user):
        raise PermissionDenied("only admins publish nugget banks")
    bank = _bank(request, campaign, number)
    try:
        done = bank_publish(bank=bank, by=request.user)
    except DomainError as exc:
        flash_error(request, exc)
        return redirect("nugget-bank", campaign_id=campaign.pk, number=number)
    flash(
        request,
        messages.SUCCESS,
        f"Nugget bank v{bank.number} published ({done.nuggets} nuggets, sha256 "
        f"{done.bank.content_hash[:12]}): it is frozen now.",
    )
    if done.empty_topics:
        shown = ", ".join(done.empty_topics[:20]) + (" ..." if len(done.empty_topics) > 20 else "")
        flash(request, messages.WARNING, f"Published without a nugget: topics {shown}.")
    return redirect("nugget-bank", campaign_id=campaign.pk, number=number)


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def topic_page(request: HttpRequest, campaign_id: int, number: int, qid: str) -> HttpResponse:
    """The editing screen of one topic of one version (POST: one edit, then back here)."""
    if request.method == "POST" and not may_edit(request.user):
        raise PermissionDenied("only annotators and admins edit nugget banks")
    campaign = _campaign(request, campaign_id)
    bank = _bank(request, campaign, number)
    try:
        topic = topic_of(bank, qid)
    except NotFound as exc:
        raise Http404(exc.message) from None
    if request.method == "POST":
        return _edit(request, bank, qid)
    (view,) = bank_topics(bank, qid=qid)
    qids = [t.qid for t in bank_topics(bank)]
    at = qids.index(qid)
    segments = [
        {"segment": s, "text": s.text[:SEGMENT_CHARS], "cut": len(s.text) > SEGMENT_CHARS}
        for s in bank_segments(bank, topic)
    ]
    context = {
        "campaign": campaign,
        "bank": bank,
        "topic": topic,
        "view": view,
        "nuggets": [{"n": x, "sources": " ".join(x.sources)} for x in view.nuggets],
        "editable": bank.state == NuggetBankState.DRAFT and may_edit(request.user),
        "segments": segments,
        "history": list(reversed(topic_history(bank, topic))),
        "previous": topic_url(bank, qids[at - 1]) if at > 0 else "",
        "next": topic_url(bank, qids[at + 1]) if at + 1 < len(qids) else "",
    }
    return render(request, "nuggets/topic.html", context)


def _edit(request: HttpRequest, bank: NuggetBank, qid: str) -> HttpResponse:
    """One edit from the page's form: the API's operations, plus ``up``/``down`` (a move by
    one) and ``split`` at the ``separator`` typed (the row's text cut there)."""
    post = request.POST
    here = topic_url(bank, qid)
    op = post.get("op", "")
    key = post.get("key") or None
    try:
        base = parse_int(post.get("base", ""), "base", minimum=0)
        args: dict[str, Any] = {"key": key}
        if op in ("up", "down"):
            position = parse_int(post.get("position", ""), "position", minimum=0)
            args["to"] = max(0, position + (-1 if op == "up" else 1))
            op = "move"
        elif op == "move":
            args["to"] = parse_int(post.get("to", ""), "to", minimum=0)
        elif op == "split":
            separator = post.get("separator", "")
            if not separator:
                raise InvalidInput(
                    "type the separator to split at",
                    [Problem.at("separator", "empty: the text is cut where it appears")],
                )
            args["parts"] = post.get("text", "").split(separator)
        elif op == "merge":
            args["keys"] = post.getlist("keys")
            args.pop("key")
        if op in ("add", "reword"):
            args["text"] = post.get("text", "")
        if op in ("add", "importance"):
            args["importance"] = post.get("importance") or None
        row = nugget_edit(bank=bank, topic=qid, op=op, base=base, by=request.user, **args)
    except DomainError as exc:
        flash_error(request, exc)
        if isinstance(exc, InvalidInput):
            for p in exc.problems[:5]:
                flash(request, messages.ERROR, str(p))
        return HttpResponseRedirect(here + (f"#{quote(key)}" if key else ""))
    focus = (row.after[0]["key"] if row.after else "") or key or ""
    return HttpResponseRedirect(here + (f"#{quote(focus)}" if focus else ""))
