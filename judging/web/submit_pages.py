"""The "Submit a run" page: a TREC run file or pasted lines, through the API's own workflow.

The page calls ``workflows.runs.run_submitted`` exactly as ``POST /api/v1/campaigns/{id}/runs/``
does, and shows a refusal in the API's one error shape (``DomainError.as_dict``): the same
message, the same problems with their lines, the same count of those not listed. What the user
typed (tag, description, group, the pasted lines) is kept on the page after a refusal. A
stored run opens its page, which shows what it was stored with a warning for (the same content
as another run, docids not among the campaign's documents), as the API's ``warnings`` say it.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, RequestDataTooBig
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.csrf import csrf_exempt, csrf_protect

from judging.campaigns.models import Campaign, RunPooling
from judging.core import uploads
from judging.core.errors import DomainError, InvalidInput, TooLarge
from judging.core.roles import account, is_admin, is_researcher
from judging.pools.selectors import new_runs_pooled
from judging.web.flash import flash
from judging.workflows.runs import run_submitted
from metrics.problems import Problem

PASTE_SOURCE = "the pasted run"
POOLED_CHOICES = {"": None, "yes": True, "no": False}


def new_runs_note(campaign: Campaign) -> dict[str, Any]:
    """Whether a run submitted now is pooled, why, and the campaign's setting, in words."""
    pooled, reason = new_runs_pooled(campaign)
    return {
        "pooled": pooled,
        "reason": reason,
        "setting": campaign.run_pooling,
        "setting_label": RunPooling(campaign.run_pooling).label,
        "text": "pooled" if pooled else "not pooled until an admin includes them",
    }


def _form_values(request: HttpRequest) -> dict[str, str]:
    return {
        name: request.POST.get(name, "")
        for name in ("tag", "description", "group", "paste", "pooled")
    }


def _pooled(value: str) -> bool | None:
    """The admin's choice (yes, no, or the campaign's setting); anyone else may not choose
    (the workflow checks who asks)."""
    if value not in POOLED_CHOICES:
        raise InvalidInput(
            "pooled: choose yes, no or the campaign's setting",
            [Problem.at("pooled", f"{value!r} is not one of yes, no or empty")],
        )
    return POOLED_CHOICES[value]


def _submission(request: HttpRequest, values: dict[str, str]) -> dict[str, Any]:
    """The workflow's arguments from the form: exactly one of a file or pasted lines."""
    upload = request.FILES.get("file")
    pasted = values["paste"]
    if (upload is not None) == bool(pasted.strip()):
        raise InvalidInput(
            "send exactly one of a run file or pasted run lines",
            [Problem.at("file", "choose a run file or paste the run's lines, not both")],
        )
    args: dict[str, Any] = {
        "tag": values["tag"].strip() or None,  # none: the file's tag column
        "group": values["group"].strip(),
        "description": values["description"],
        "pooled": _pooled(values["pooled"]),
    }
    if upload is not None:
        args["data"] = upload  # named by the upload (the workflow's default)
    else:
        args["data"] = pasted.encode("utf-8")
        args["source"] = PASTE_SOURCE
    return args


@csrf_exempt  # checked in _submit, once the body is read: one too large to read gets its 413
@login_required
def submit_run(request: HttpRequest, campaign_id: int) -> HttpResponse:
    """GET: the form. POST: submit the run; on success go to its page, else show why (400 with
    the problems, 403 pooled by a non-admin, 409 tag already used, 413 too large)."""
    if not is_researcher(request.user):
        raise PermissionDenied("only researchers and admins may submit runs")
    campaign = get_object_or_404(Campaign.objects.visible_to(request.user), pk=campaign_id)
    context: dict[str, Any] = {
        "campaign": campaign,
        "new_runs": new_runs_note(campaign),
        "can_set_pooled": is_admin(request.user),
        "max_upload": settings.POOLJUDGE_UPLOADS.max_upload_bytes,
        "paste_limit": settings.DATA_UPLOAD_MAX_MEMORY_SIZE,
        "values": {},
    }
    if request.method != "POST":
        return render(request, "results/submit.html", context)
    try:
        _read_body(request)
    except TooLarge as exc:
        return _refused(request, context, exc)
    return _submit(request, campaign, context)


def _read_body(request: HttpRequest) -> None:
    """Parse the form now, so that a body too large for it is a 413 that says what to do
    (Django's CSRF middleware would otherwise meet it first and answer a bare 400)."""
    uploads.check_request_size(
        request.META.get("CONTENT_LENGTH"),
        limit=settings.POOLJUDGE_UPLOADS.max_upload_bytes,
        what="the run",
    )
    try:
        request.POST  # noqa: B018 (parsed here and kept on the request)
        request.FILES  # noqa: B018
    except RequestDataTooBig:
        raise TooLarge(
            "the pasted run is larger than the "
            f"{settings.DATA_UPLOAD_MAX_MEMORY_SIZE:,} bytes a form field may hold; "
            "upload it as a file instead (plain or gzip, up to "
            f"{settings.POOLJUDGE_UPLOADS.max_upload_bytes:,} bytes)"
        ) from None


def _refused(request: HttpRequest, context: dict[str, Any], exc: DomainError) -> HttpResponse:
    """The form again, with the API's error body for ``exc`` and its status."""
    context["error"] = error = exc.as_dict()
    context["more_problems"] = error.get("problem_count", 0) - error.get("problems_shown", 0)
    return render(request, "results/submit.html", context, status=exc.status)


@csrf_protect
def _submit(request: HttpRequest, campaign: Campaign, context: dict[str, Any]) -> HttpResponse:
    values = _form_values(request)
    context["values"] = values
    try:
        run = run_submitted(
            campaign=campaign,
            owner=account(request.user),
            by=request.user,
            **_submission(request, values),
        )
    except DomainError as exc:
        return _refused(request, context, exc)
    warned = len(run.submission_warnings)
    flash(
        request,
        messages.SUCCESS,
        f"Run {run.name!r} submitted: {run.num_entries:,} entries over "
        f"{len(run.topic_counts)} topics"
        + (f"; {warned} warning{'s' if warned != 1 else ''} below." if warned else "."),
    )
    return redirect("run-page", run_id=run.pk)
