"""The automatic judges' pages: the campaign's judges (and, for admins, the form that creates a
judge version and the one that imports an imported judge's label file), and one judge version
(what it says, its runs with progress bars, refreshing while one runs; for admins: run it over
a pool version, calibrate an embedding judge, build automatic and hybrid qrels versions).

Researchers and admins read them; annotators are refused (403), as for every result page. Each
button POSTs to one service or workflow and comes back with a flashed message, as the other
pages do; GET never writes. An endpoint is shown by its name only: its URL and key stay in the
settings (``autojudge.selectors`` blanks them out of anything a worker wrote back).
"""

from __future__ import annotations

import re
from typing import Any

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from judging.autojudge import selectors, services
from judging.autojudge.models import CREATED_KINDS, Judge, JudgeKind
from judging.autojudge.prompts import MAX_PROMPT_CHARS, UMBRELA, UMBRELA_GRADES, default_mapping
from judging.autojudge.submissions import endpoints_for
from judging.campaigns.models import Campaign
from judging.core import uploads
from judging.core.errors import DomainError, InvalidInput
from judging.core.params import MAX_ID, parse_int
from judging.core.roles import account, is_admin, is_researcher
from judging.web.flash import flash, flash_error
from judging.workflows.autojudge import automatic_qrels_built, hybrid_qrels_built
from metrics.problems import Problem

LIST_TEMPLATE = "autojudge/judges.html"
DETAIL_TEMPLATE = "autojudge/judge.html"
_PAIR = re.compile(r"^\s*(-?\d+)\s*[:=]\s*(-?\d+)\s*$")


def campaign_of(request: HttpRequest, campaign_id: int) -> Campaign:
    """The campaign of a judges' page, for researchers and admins (others: 403)."""
    if not is_researcher(request.user):
        raise PermissionDenied("automatic judges are results: for researchers and admins")
    campaign: Campaign = get_object_or_404(
        Campaign.objects.visible_to(request.user), pk=campaign_id
    )
    return campaign


def _admin(request: HttpRequest) -> None:
    if not is_admin(request.user):
        raise PermissionDenied("only admins change automatic judges")


def judge_of(request: HttpRequest, campaign: Campaign, judge_id: int) -> Judge:
    """A judge version of the campaign the user may see (else 404)."""
    judge: Judge = get_object_or_404(
        selectors.judges_visible(request.user).select_related("campaign"),
        pk=judge_id,
        campaign=campaign,
    )
    return judge


def mapping_text(mapping: dict[int, int]) -> str:
    """``{0: 0, 1: 1, 3: 2}`` as the form shows it: ``0=0, 1=1, 3=2``."""
    return ", ".join(f"{k}={v}" for k, v in sorted(mapping.items()))


def parse_mapping(text: str) -> dict[str, int]:
    """``0=0, 1=1, 2=2, 3=2`` (or ``:``, commas or new lines) as the judge's mapping."""
    out: dict[str, int] = {}
    for part in re.split(r"[,;\n]+", text.strip()):
        if not part.strip():
            continue
        match = _PAIR.match(part)
        if match is None:
            raise forms.ValidationError(
                f"{part.strip()[:40]!r} is not 'judge grade=campaign grade' (e.g. 3=2)"
            )
        out[match.group(1)] = int(match.group(2))
    return out


class JudgeForm(forms.Form):
    """A judge version to create. Which fields count depends on the kind: endpoint, prompt
    and prices for openai-compatible; the mapping for openai-compatible and imported (UMBRELA
    files); an imported judge may bring its label file along."""

    kind = forms.ChoiceField(choices=CREATED_KINDS)
    name = forms.CharField(max_length=100)
    model = forms.CharField(max_length=200)
    description = forms.CharField(required=False, max_length=5000)
    endpoint = forms.ChoiceField(required=False, choices=[])
    prompt = forms.CharField(
        required=False,
        max_length=MAX_PROMPT_CHARS,
        strip=False,
        widget=forms.Textarea(attrs={"rows": 12}),
    )
    mapping = forms.CharField(required=False, max_length=500)
    price_prompt_per_1k = forms.FloatField(required=False, min_value=0, max_value=1e6)
    price_completion_per_1k = forms.FloatField(required=False, min_value=0, max_value=1e6)
    file = forms.FileField(required=False)
    format = forms.ChoiceField(choices=[(f, f) for f in services.LABEL_FORMATS], required=False)
    requests = forms.FileField(required=False)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        names = services.endpoint_names()
        field = self.fields["endpoint"]
        assert isinstance(field, forms.ChoiceField)
        field.choices = [("", "none configured" if not names else "choose")] + [
            (n, n) for n in names
        ]

    def clean_mapping(self) -> dict[str, int]:
        return parse_mapping(self.cleaned_data.get("mapping") or "")

    def params(self, scale: list[int]) -> dict[str, Any]:
        """The judge's parameters: only what its kind uses, and only what differs from the
        defaults (UMBRELA's mapping, no prices), so the page and the API make the same
        version of the same judge."""
        v = self.cleaned_data
        kind = v["kind"]
        out: dict[str, Any] = {}
        if kind == JudgeKind.OPENAI:
            if v.get("endpoint"):
                out["endpoint"] = v["endpoint"]
            for key in ("price_prompt_per_1k", "price_completion_per_1k"):
                if v.get(key):
                    out[key] = float(v[key])
        if kind in (JudgeKind.OPENAI, JudgeKind.IMPORTED) and v.get("mapping"):
            default = {str(k): g for k, g in _default_mapping(scale).items()}
            if v["mapping"] != default:
                out["mapping"] = v["mapping"]
        return out

    def prompt_for(self) -> str:
        """The prompt an openai-compatible judge gets ('' = UMBRELA's, the service's default);
        other kinds have none."""
        v = self.cleaned_data
        if v["kind"] != JudgeKind.OPENAI:
            return ""
        prompt = v.get("prompt") or ""
        return "" if prompt.strip() == UMBRELA.strip() else prompt


def _default_mapping(scale: list[int]) -> dict[int, int]:
    try:
        return default_mapping(scale)
    except ValueError:  # a scale the default cannot map: the admin writes one
        return {}


def _form_problems(form: forms.Form) -> InvalidInput:
    problems = [
        Problem.at(field if field != "__all__" else "form", str(message))
        for field, errors in form.errors.items()
        for message in errors
    ]
    first = problems[0]
    return InvalidInput(str(first), problems)


def _list_context(request: HttpRequest, campaign: Campaign, form: JudgeForm) -> dict[str, Any]:
    judges = selectors.judge_list(campaign=campaign, user=request.user)
    return {
        "campaign": campaign,
        "judges": judges,
        "imported": [j for j in judges if j["kind"] == JudgeKind.IMPORTED],
        "form": form,
        "kinds": CREATED_KINDS,
        "formats": services.LABEL_FORMATS,
        "endpoints": services.endpoint_names(),
        "can_manage": is_admin(request.user),
        "umbrela_grades": UMBRELA_GRADES,
        "pools": list(selectors.built_pools(campaign)),
        "my_endpoints": endpoints_for(account(request.user)),
    }


def _initial(campaign: Campaign) -> dict[str, Any]:
    return {
        "kind": JudgeKind.OPENAI,
        "prompt": UMBRELA,
        "mapping": mapping_text(_default_mapping(campaign.grade_values())),
        "format": "trec",
    }


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def judges_page(request: HttpRequest, campaign_id: int) -> HttpResponse:
    """GET: the campaign's judges (and the admin's forms). POST (admins): create a judge
    version, with an imported judge's label file if one is given (both or nothing); a
    refusal shows the form again with what was typed and the problem, status 400/409."""
    campaign = campaign_of(request, campaign_id)
    if request.method != "POST":
        form = JudgeForm(initial=_initial(campaign))
        return render(request, LIST_TEMPLATE, _list_context(request, campaign, form))
    _admin(request)
    form = JudgeForm(request.POST, request.FILES)
    try:
        uploads.check_request_size(
            request.META.get("CONTENT_LENGTH"),
            limit=settings.POOLJUDGE_UPLOADS.max_upload_bytes,
            what="the label file",
        )
        if not form.is_valid():
            raise _form_problems(form)
        judge, stored = _create(request, campaign, form)
    except DomainError as exc:
        context = _list_context(request, campaign, form)
        context["error"] = exc.as_dict()
        return render(request, LIST_TEMPLATE, context, status=exc.status)
    text = f"Judge {judge} ({judge.get_kind_display()}, model {judge.model}) is ready."
    if stored is not None:
        text += f" {stored:,} label(s) imported."
    flash(request, messages.SUCCESS, text)
    return redirect("judge-detail", campaign_id=campaign.pk, judge_id=judge.pk)


def _create(request: HttpRequest, campaign: Campaign, form: JudgeForm) -> tuple[Judge, int | None]:
    v = form.cleaned_data
    upload = v.get("file")
    if upload is not None and v["kind"] != JudgeKind.IMPORTED:
        raise InvalidInput(
            "file: only an imported judge takes a label file",
            [Problem.at("file", "a label file is for an imported judge")],
        )
    with transaction.atomic():  # a refused file leaves no judge behind
        judge = services.judge_create(
            campaign=campaign,
            name=v["name"],
            kind=v["kind"],
            model=v["model"],
            prompt=form.prompt_for(),
            params=form.params(campaign.grade_values()),
            description=v.get("description") or "",
            created_by=account(request.user),
        )
        stored = None
        if upload is not None:
            stored = services.labels_import(
                judge=judge,
                data=upload,
                format=v.get("format") or "trec",
                requests=v.get("requests"),
                source=upload.name or "labels",
            )
    return judge, stored


@login_required
@require_POST
def judge_import(request: HttpRequest, campaign_id: int) -> HttpResponse:
    """Import a label file for an imported judge (field ``judge``), then show the judge."""
    campaign = campaign_of(request, campaign_id)
    _admin(request)
    back = redirect("judge-list", campaign_id=campaign.pk)
    try:
        judge_id = parse_int(request.POST.get("judge") or "", "judge", minimum=0, maximum=MAX_ID)
    except InvalidInput:
        flash(request, messages.ERROR, "judge: choose the imported judge the file is for")
        return back
    judge = judge_of(request, campaign, judge_id)
    here = redirect("judge-detail", campaign_id=campaign.pk, judge_id=judge.pk)
    upload = request.FILES.get("file")
    fmt = request.POST.get("format") or "trec"
    try:
        uploads.check_request_size(
            request.META.get("CONTENT_LENGTH"),
            limit=settings.POOLJUDGE_UPLOADS.max_upload_bytes,
            what="the label file",
        )
        if upload is None:
            raise InvalidInput("file: choose the label file", [Problem.at("file", "missing")])
        stored = services.labels_import(
            judge=judge,
            data=upload,
            format=fmt,
            requests=request.FILES.get("requests"),
            source=upload.name or "labels",
        )
    except DomainError as exc:
        flash(request, messages.ERROR, f"Nothing was stored: {_refusal(exc)}")
        return here
    flash(request, messages.SUCCESS, f"{stored:,} label(s) of {judge} imported.")
    return here


@login_required
@require_POST
def judge_submit_page(request: HttpRequest, campaign_id: int) -> HttpResponse:
    """A participant's judge submission from the judges' page (``autojudge.submissions``): its
    label file, or an endpoint opened to them; then its page, or the refusal flashed."""
    from judging.autojudge.submissions import judge_submit

    campaign = campaign_of(request, campaign_id)
    post = request.POST
    back = redirect(reverse("judge-list", args=[campaign.pk]) + "#submit")
    answer = {"yes": True, "no": False}
    try:
        uploads.check_request_size(
            request.META.get("CONTENT_LENGTH"),
            limit=settings.POOLJUDGE_UPLOADS.max_upload_bytes,
            what="the label file",
        )
        if post.get("saw_human_qrels") not in answer:
            raise services.invalid("saw_human_qrels", "say whether it saw people's judgments")
        pool = post.get("pool") or ""
        upload = request.FILES.get("file")
        ledger = {k: post[k] for k in ("calls", "cost", "seconds") if post.get(k)}
        judge, _ = judge_submit(
            campaign=campaign,
            owner=account(request.user),
            name=(post.get("name") or "").strip(),
            kind=JudgeKind.OPENAI if post.get("endpoint") else JudgeKind.IMPORTED,
            model=(post.get("model") or "").strip()[:200],
            saw_human_qrels=answer[post["saw_human_qrels"]],
            pool=parse_int(pool, "pool", minimum=1, maximum=MAX_ID) if pool else None,
            family=(post.get("family") or "")[:100],
            open_weights=answer.get(post.get("open_weights") or ""),
            prompt=(post.get("prompt") or "")[:MAX_PROMPT_CHARS],
            description=(post.get("description") or "")[:5000],
            data=upload,
            format=post.get("format") or "trec",
            requests=request.FILES.get("requests"),
            endpoint=post.get("endpoint") or "",
            ledger={k: _ledger_number(k, v) for k, v in ledger.items()},
        )
    except DomainError as exc:
        flash(request, messages.ERROR, f"Nothing was submitted: {_refusal(exc)}")
        return back
    flash(request, messages.SUCCESS, f"{judge} submitted: other participants never see it.")
    return redirect("judge-detail", campaign_id=campaign.pk, judge_id=judge.pk)


def _ledger_number(field: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise services.invalid(f"ledger.{field}", "must be a number") from None
    return value


def _refusal(exc: DomainError) -> str:
    """The error's message with its first problems (line or field), as one line."""
    body = exc.as_dict()
    problems = body.get("problems") or []
    shown = [
        (f"line {p['line']}: " if p.get("line") else "")
        + (f"{p['location']}: " if p.get("location") and p["location"] not in p["message"] else "")
        + p["message"]
        for p in problems[:5]
    ]
    text = str(body["detail"])
    if shown and shown != [text]:
        text += " (" + "; ".join(shown) + (" …" if len(problems) > 5 else "") + ")"
    return text


@login_required
@require_safe
def judge_page(request: HttpRequest, campaign_id: int, judge_id: int) -> HttpResponse:
    campaign = campaign_of(request, campaign_id)
    judge = judge_of(request, campaign, judge_id)
    detail = selectors.judge_detail(judge)
    calibrations = selectors.judge_calibrations(judge)
    calibrating = any(c["live"] for c in calibrations)
    pools = list(selectors.built_pools(campaign))
    return render(
        request,
        DETAIL_TEMPLATE,
        {
            "campaign": campaign,
            "judge": detail,
            "pools": pools,
            "human_versions": list(selectors.human_qrels(campaign)),
            "can_manage": is_admin(request.user),
            "formats": services.LABEL_FORMATS,
            "calibrations": calibrations,
            "calibrating": calibrating,
            "refresh": detail["live"] or calibrating,
            "mapping": mapping_text(
                {int(k): int(v) for k, v in detail["params"].get("mapping", {}).items()}
            )
            if detail["params"].get("mapping")
            else "",
        },
    )


def _number(request: HttpRequest, field: str, *, required: bool) -> int | None:
    raw = (request.POST.get(field) or "").strip()
    if not raw:
        if required:
            raise InvalidInput(f"{field}: choose one", [Problem.at(field, "missing")])
        return None
    try:
        return parse_int(raw, field, minimum=1, maximum=10**18 - 1)  # at most 18 digits
    except InvalidInput:
        raise InvalidInput(
            f"{field}: must be a version number, not {raw[:20]!r}",
            [Problem.at(field, "not a version number")],
        ) from None


def _action(request: HttpRequest, campaign_id: int, judge_id: int) -> tuple[Campaign, Judge]:
    campaign = campaign_of(request, campaign_id)
    _admin(request)
    return campaign, judge_of(request, campaign, judge_id)


@login_required
@require_POST
def judge_run(request: HttpRequest, campaign_id: int, judge_id: int) -> HttpResponse:
    """Run the judge over the chosen pool version (a task; the page follows its progress)."""
    campaign, judge = _action(request, campaign_id, judge_id)
    try:
        pool = selectors.pool_by_number(campaign, _number(request, "pool", required=False))
        run = services.judge_run_request(judge=judge, pool=pool, requested_by=account(request.user))
    except DomainError as exc:
        flash_error(request, exc)
    else:
        flash(
            request,
            messages.INFO,
            f"{judge} is {run.state} over pool version {pool.number}.",
        )
    return redirect("judge-detail", campaign_id=campaign.pk, judge_id=judge.pk)


@login_required
@require_POST
def judge_calibrate(request: HttpRequest, campaign_id: int, judge_id: int) -> HttpResponse:
    """Queue the calibration of an embedding judge on a human qrels version over a pool
    version (a task: the model takes tens of seconds); the judge's page follows it and links
    the new version once it is made."""
    campaign, judge = _action(request, campaign_id, judge_id)
    try:
        number = _number(request, "human", required=True)
        assert number is not None
        human = selectors.qrels_by_number(campaign, number, "human")
        pool = selectors.pool_by_number(campaign, _number(request, "pool", required=False))
        sample = _number(request, "sample", required=False)
        calibration = services.calibration_request(
            judge=judge, human=human, pool=pool, sample=sample, requested_by=account(request.user)
        )
    except DomainError as exc:
        flash_error(request, exc)
    else:
        # without a broker the task has already run inline: say what it did
        calibration.refresh_from_db()
        shown = selectors.calibration_view(calibration)
        asked = f"{judge} on qrels version {human.number} over pool version {pool.number}"
        if shown["state"] == "done":
            flash(
                request,
                messages.SUCCESS,
                f"Calibration #{calibration.pk} of {asked} is done: {shown['calibrated_label']}.",
            )
        elif shown["state"] == "failed":
            flash(
                request,
                messages.ERROR,
                f"Calibration #{calibration.pk} of {asked} failed: {shown['error']}",
            )
        else:
            flash(
                request,
                messages.INFO,
                f"Calibration #{calibration.pk} of {asked} {shown['state']}: this page shows "
                "the new version when it is made.",
            )
    return redirect("judge-detail", campaign_id=campaign.pk, judge_id=judge.pk)


@login_required
@require_POST
def judge_qrels(request: HttpRequest, campaign_id: int, judge_id: int) -> HttpResponse:
    """Build an automatic or a hybrid qrels version from the judge's labels."""
    campaign, judge = _action(request, campaign_id, judge_id)
    kind = request.POST.get("kind") or ""
    try:
        if kind not in ("automatic", "hybrid"):
            raise InvalidInput(
                f"kind: must be automatic or hybrid, not {kind[:20]!r}",
                [Problem.at("kind", "automatic or hybrid")],
            )
        pool = selectors.pool_by_number(campaign, _number(request, "pool", required=False))
        who = account(request.user)
        note = (request.POST.get("note") or "")[:1000]
        if kind == "automatic":
            version = automatic_qrels_built(judge=judge, pool=pool, note=note, created_by=who)
        else:
            number = _number(request, "human", required=True)
            assert number is not None
            human = selectors.qrels_by_number(campaign, number, "human")
            version = hybrid_qrels_built(
                judge=judge, pool=pool, human=human, note=note, created_by=who
            )
    except DomainError as exc:
        flash_error(request, exc)
    else:
        flash(
            request,
            messages.SUCCESS,
            f"Qrels version {version.number} ({version.kind_label}) stored: "
            f"{version.num_judgments:,} grades; every run is evaluated against it.",
        )
    return redirect("judge-detail", campaign_id=campaign.pk, judge_id=judge.pk)
