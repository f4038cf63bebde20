"""The audit of an automatic judge's labels of answer items (``autojudge.answer_audit``): admins
only, as its rankings name every run."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from judging.assessments.models import NuggetBank, NuggetBankState, UnitKind
from judging.autojudge.answer_audit import answer_audit
from judging.core.errors import DomainError
from judging.core.params import MAX_ID, parse_int
from judging.core.roles import is_admin
from judging.web.judge_pages import campaign_of, judge_of

KINDS = (UnitKind.NUGGET_ASSIGNMENT, UnitKind.CITATION_SUPPORT)


@login_required
def answer_audit_page(request: HttpRequest, campaign_id: int, judge_id: int) -> HttpResponse:
    """``?kind=nugget_assignment&bank=N`` (default: the latest published bank) or
    ``?kind=citation_support``."""
    if not is_admin(request.user):
        raise PermissionDenied("only admins read the audit of answer labels (it names every run)")
    campaign = campaign_of(request, campaign_id)
    judge = judge_of(request, campaign, judge_id)
    banks = NuggetBank.objects.filter(campaign=campaign, state=NuggetBankState.PUBLISHED)
    kind = request.GET.get("kind") or (
        UnitKind.NUGGET_ASSIGNMENT if banks.exists() else UnitKind.CITATION_SUPPORT
    )
    audit, error = None, ""
    bank: int | None = None
    try:
        if kind not in KINDS:
            raise DomainError(f"kind must be one of {', '.join(KINDS)}, not {kind[:40]!r}")
        raw = request.GET.get("bank", "")
        bank = parse_int(raw, "bank", minimum=1, maximum=MAX_ID) if raw else None
        if kind == UnitKind.NUGGET_ASSIGNMENT and bank is None:
            latest = banks.order_by("-number").first()
            bank = latest.number if latest else None
        audit = answer_audit(judge=judge, kind=kind, bank=bank)
    except DomainError as exc:
        error = exc.message
    return render(
        request,
        "autojudge/answer_audit.html",
        {
            "campaign": campaign,
            "judge": judge,
            "kind": kind,
            "kinds": KINDS,
            "bank": bank,
            "banks": banks.order_by("-number"),
            "audit": audit,
            "error": error,
        },
    )
