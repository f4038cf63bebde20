"""Admin pages for pooled documents without text: which ones wait, per pool version; importing
just those from a collection file; their docids as a file to extract them elsewhere."""

from __future__ import annotations

from typing import cast

from django.conf import settings
from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST, require_safe

from judging.campaigns import formats
from judging.campaigns.models import Campaign
from judging.core import uploads
from judging.core.downloads import lines_download
from judging.core.errors import DomainError, InvalidInput
from judging.pools import selectors as pool_selectors
from judging.pools.models import PoolVersion
from judging.web.access import admin_required
from judging.web.flash import flash, flash_error
from judging.workflows.documents import missing_documents_imported

# Problems named in the page's message after a refused file (the API lists them all).
SHOWN_PROBLEMS = 5


def _version(campaign_id: int, number: int) -> PoolVersion:
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    return get_object_or_404(PoolVersion.objects.built(), campaign=campaign, number=number)


@admin_required
@require_safe
def missing_text(request: HttpRequest, campaign_id: int, number: int) -> HttpResponse:
    """The pool version's documents without text, a page at a time (the API's page size)."""
    version = _version(campaign_id, number)
    pages = Paginator(
        pool_selectors.missing_text_documents(version),
        cast(int, settings.REST_FRAMEWORK["PAGE_SIZE"]),
    )
    page = pages.get_page(request.GET.get("page"))
    counts = next(
        c for c in pool_selectors.missing_text_counts(version.campaign) if c["number"] == number
    )
    return render(
        request,
        "manage/missing_text.html",
        {
            "campaign": version.campaign,
            "version": version,
            "counts": counts,
            "page": page,
            "rows": pool_selectors.missing_text_topics(version, list(page.object_list)),
            "formats": formats.DOCUMENT_FORMATS,
            "max_bytes": settings.POOLJUDGE_UPLOADS.max_document_upload_bytes,
        },
    )


@admin_required
@require_safe
def missing_text_download(request: HttpRequest, campaign_id: int, number: int) -> HttpResponseBase:
    """Every docid the version waits for the text of, one a line."""
    version = _version(campaign_id, number)
    return lines_download(
        pool_selectors.missing_text_docids(version.campaign, version=version),
        pool_selectors.missing_text_filename(version),
    )


def _refusal(exc: DomainError) -> str:
    """The error and its first problems, each with its file and line."""
    text = exc.message
    if isinstance(exc, InvalidInput) and exc.problems:
        shown = []
        for p in exc.problems[:SHOWN_PROBLEMS]:
            where = p.location or exc.source or ""
            if p.line:
                where = f"{where} line {p.line}".strip()
            shown.append(f"{where}: {p.message}" if where else p.message)
        text += " — " + "; ".join(shown)
        if exc.total > len(shown):
            text += f"; and {exc.total - len(shown)} more"
    return text


@admin_required
@require_POST
def missing_text_import(request: HttpRequest, campaign_id: int, number: int) -> HttpResponse:
    """Store, from the uploaded collection files, only the documents the version waits for."""
    version = _version(campaign_id, number)
    back = redirect("manage-missing-text", campaign_id=campaign_id, number=number)
    try:
        uploads.check_request_size(
            request.META.get("CONTENT_LENGTH"),
            limit=settings.POOLJUDGE_UPLOADS.max_document_upload_bytes,
            what="the documents file",
        )
        files = request.FILES.getlist("file")
        fmt = request.POST.get("format") or None
        if not files:
            raise InvalidInput("choose a collection file first", [])
        if fmt is not None and fmt not in formats.DOCUMENT_FORMATS:
            raise InvalidInput(f"unknown format {fmt[:20]!r}", [])
        summary = missing_documents_imported(
            campaign=version.campaign,
            sources=[(f, f.name or "upload") for f in files],
            fmt=fmt,
            version=version,
        )
    except DomainError as exc:
        flash(request, messages.ERROR, f"Nothing was stored: {_refusal(exc)}")
        return back
    except ValueError as exc:  # a malformed multipart body
        flash_error(request, exc)
        return back
    level = messages.SUCCESS if summary.stored else messages.WARNING
    flash(request, level, summary.sentence()[0].upper() + summary.sentence()[1:])
    return back
