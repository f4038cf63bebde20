"""The admin's page for importing a whole TREC collection (``/manage/import/``).

Two steps: the first submit stages the files server-side (``POOLJUDGE_STAGING_DIR``, one folder
per plan) and shows the plan (``workflows.collections.collection_plan``: counts, every problem
with its file and line, the inferred pooling with a checkbox per run) before anything is
stored; the second applies it with the runs the admin ticked, and removes the staged files.
Plans not applied are removed after ``POOLJUDGE_STAGING_SECONDS`` (at the next submit of the
page); a failed plan's files at once.
"""

from __future__ import annotations

import json
import re
import secrets
import shutil
import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.files.uploadedfile import UploadedFile
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from judging.core import uploads
from judging.core.errors import DomainError, InvalidInput
from judging.core.roles import account, is_admin
from judging.web.flash import flash
from judging.workflows.collections import (
    POOLED_RUNS,
    NamedFile,
    collection_imported,
    collection_plan,
    topic_ranges,
)

_TOKEN = re.compile(r"^[A-Za-z0-9_-]{16,64}$")
_SAFE = re.compile(r"[^A-Za-z0-9._-]")
SINGLE = ("topics", "qrels", "groups")
MULTIPLE = ("documents", "runs")


def _admin(request: HttpRequest) -> None:
    if not is_admin(request.user):
        raise PermissionDenied("importing collections is for admins")


def _staging() -> Path:
    return Path(settings.POOLJUDGE_UPLOADS.staging_dir)


def _expire_staged() -> None:
    """Remove plans older than ``POOLJUDGE_STAGING_SECONDS``."""
    root = _staging()
    if not root.is_dir():
        return
    oldest = time.time() - settings.POOLJUDGE_UPLOADS.staging_seconds
    for folder in root.iterdir():
        if folder.is_dir() and _TOKEN.match(folder.name) and folder.stat().st_mtime < oldest:
            shutil.rmtree(folder, ignore_errors=True)


def _stage(request: HttpRequest) -> tuple[str, dict[str, Any]]:
    """Save the uploaded files under a new plan folder; its manifest names them."""
    token = secrets.token_urlsafe(24)
    folder = _staging() / token
    folder.mkdir(parents=True)
    files: dict[str, list[dict[str, str]]] = {}
    n = 0
    for role in SINGLE + MULTIPLE:
        received = request.FILES.getlist(role)
        if role in SINGLE:
            received = received[:1]
        for upload in received:
            assert isinstance(upload, UploadedFile)
            n += 1
            name = Path(upload.name or role).name
            stored = folder / f"{n:04d}-{_SAFE.sub('_', name)[:100]}"
            with stored.open("wb") as out:
                for chunk in upload.chunks():
                    out.write(chunk)
            files.setdefault(role, []).append({"name": name, "path": stored.name})
    manifest = {
        "user": request.user.pk,
        "name": request.POST.get("name", "").strip(),
        "measures": request.POST.get("measures", "").split(),
        "pooled_runs": request.POST.get("pooled_runs", "infer"),
        "infer_topics": request.POST.get("infer_topics", "").strip(),
        "files": files,
    }
    (folder / "manifest.json").write_text(json.dumps(manifest))
    return token, manifest


def _arguments(token: str, manifest: dict[str, Any]) -> dict[str, Any]:
    folder = _staging() / token

    def named(entry: dict[str, str]) -> NamedFile:
        return NamedFile(entry["name"], folder / entry["path"])

    files = manifest["files"]
    return {
        "name": manifest["name"],
        "measures": manifest["measures"] or None,
        "pooled_runs": manifest["pooled_runs"],
        "infer_topics": topic_ranges(manifest["infer_topics"])
        if manifest["infer_topics"]
        else None,
        **{role: named(files[role][0]) if role in files else None for role in SINGLE},
        **{role: [named(e) for e in files.get(role, [])] for role in MULTIPLE},
    }


def _form(request: HttpRequest, *, status: int = 200, **context: Any) -> HttpResponse:
    context.setdefault("values", {"pooled_runs": "infer"})
    return render(
        request,
        "manage/import_collection.html",
        {"pooled_choices": POOLED_RUNS, **context},
        status=status,
    )


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def import_collection(request: HttpRequest) -> HttpResponse:
    _admin(request)
    if request.method != "POST":
        return _form(request)
    try:  # before the body is read (request.POST parses it)
        uploads.check_request_size(
            request.META.get("CONTENT_LENGTH"),
            limit=settings.POOLJUDGE_UPLOADS.max_collection_upload_bytes,
            what="the collection",
        )
    except DomainError as exc:
        return _form(request, error=exc.message, status=exc.status)
    if request.POST.get("token"):
        return _apply(request, request.POST["token"])
    _expire_staged()
    fields = ("name", "measures", "pooled_runs", "infer_topics")
    values = {k: request.POST.get(k, "") for k in fields}
    token, manifest = _stage(request)
    try:
        plan = collection_plan(**_arguments(token, manifest), created_by=account(request.user))
    except DomainError as exc:
        shutil.rmtree(_staging() / token, ignore_errors=True)
        problems = exc.problems if isinstance(exc, InvalidInput) else []
        return _form(
            request, values=values, error=exc.message, problems=problems, status=exc.status
        )
    return _form(request, values=values, plan=plan, token=token)


def _apply(request: HttpRequest, token: str) -> HttpResponse:
    folder = _staging() / token
    manifest_path = folder / "manifest.json"
    if not _TOKEN.match(token) or not manifest_path.is_file():
        flash(request, 40, "that plan is gone (applied, failed or expired): submit the files again")
        return redirect("manage-import")
    manifest = json.loads(manifest_path.read_text())
    if manifest["user"] != request.user.pk:
        raise PermissionDenied("that plan is another admin's")
    try:
        plan = collection_imported(
            **_arguments(token, manifest),
            pooled_tags=request.POST.getlist("pooled"),
            created_by=account(request.user),
        )
    except DomainError as exc:
        problems = exc.problems if isinstance(exc, InvalidInput) else []
        return _form(request, error=exc.message, problems=problems, status=exc.status)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    flash(
        request,
        25,
        f"campaign {plan.campaign!r} imported: {plan.topics} topics, {len(plan.runs)} runs "
        f"({sum(r.pooled for r in plan.runs)} pooled), {plan.judgments} judgments; the runs "
        "are being evaluated",
    )
    return redirect("leaderboard", plan.campaign_id)
