"""Accounts: the admin's users page (``/manage/users/``) and the set-password link's page.

The users page lists every account with its roles; an admin creates an account (a link is issued
for its owner to set a password: the admin never chooses one), changes roles, deactivates or
reactivates, and issues a new link. A link is shown once, on the page that issued it, never in a
message stored in a cookie. Everybody else: anonymous to the login page, others 403.

The link's page is public: whoever holds a valid link sets that account's password, once.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.password_validation import password_validators_help_texts
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from judging.core.accounts import (
    account_active_set,
    account_create,
    account_roles_set,
    accounts_list,
)
from judging.core.errors import DomainError, InvalidInput
from judging.core.password_links import (
    PasswordLink,
    password_link_check,
    password_link_issue,
    password_link_use,
)
from judging.core.roles import ROLES, Account, account, is_admin
from judging.web.flash import flash, flash_error


def _admin(request: HttpRequest) -> Account:
    if not is_admin(request.user):
        raise PermissionDenied("managing accounts is for admins")
    return account(request.user)


def _page(
    request: HttpRequest,
    *,
    issued: PasswordLink | None = None,
    error: DomainError | None = None,
    values: dict[str, Any] | None = None,
) -> HttpResponse:
    return render(
        request,
        "manage/users.html",
        {
            "accounts": accounts_list(),
            "roles": ROLES,
            "issued": issued,
            "issued_url": request.build_absolute_uri(issued.path()) if issued else "",
            "error": error,
            "problems": error.problems if isinstance(error, InvalidInput) else [],
            "values": values or {"username": "", "email": "", "roles": []},
        },
        status=error.status if error else 200,
    )


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def users_page(request: HttpRequest) -> HttpResponse:
    _admin(request)
    if request.method != "POST":
        return _page(request)
    username = request.POST.get("username", "")
    email = request.POST.get("email", "")
    roles = request.POST.getlist("role")
    values = {"username": username, "email": email, "roles": roles}
    try:
        user = account_create(username=username, email=email, roles=roles)
        link = password_link_issue(account=user)
    except DomainError as exc:
        return _page(request, error=exc, values=values)
    return _page(request, issued=link)


@login_required
@require_POST
def user_roles(request: HttpRequest, user_id: int) -> HttpResponse:
    by = _admin(request)
    user = get_object_or_404(Account, pk=user_id)
    try:
        account_roles_set(account=user, roles=request.POST.getlist("role"), by=by)
    except DomainError as exc:
        flash_error(request, exc)
    else:
        roles = ", ".join(r for r in ROLES if r in request.POST.getlist("role"))
        flash(request, messages.SUCCESS, f"{user.get_username()}: {roles}.")
    return redirect("manage-users")


@login_required
@require_POST
def user_active(request: HttpRequest, user_id: int) -> HttpResponse:
    by = _admin(request)
    user = get_object_or_404(Account, pk=user_id)
    active = request.POST.get("active") == "1"
    try:
        account_active_set(account=user, active=active, by=by)
    except DomainError as exc:
        flash_error(request, exc)
    else:
        state = "active again" if active else "deactivated: it cannot sign in"
        flash(request, messages.SUCCESS, f"{user.get_username()} is {state}.")
    return redirect("manage-users")


@login_required
@require_POST
def user_link(request: HttpRequest, user_id: int) -> HttpResponse:
    _admin(request)
    user = get_object_or_404(Account, pk=user_id)
    try:
        link = password_link_issue(account=user)
    except DomainError as exc:
        flash_error(request, exc)
        return redirect("manage-users")
    return _page(request, issued=link)


@require_http_methods(["GET", "HEAD", "POST"])
def set_password(request: HttpRequest, uid: str, token: str) -> HttpResponse:
    """The link's page: two password fields; on success, to the login page."""
    try:
        user = password_link_check(uid=uid, token=token)
    except DomainError as exc:
        return render(request, "registration/set_password.html", {"refused": exc}, status=400)
    problems: list[str] = []
    if request.method == "POST":
        password = request.POST.get("password1", "")
        if password != request.POST.get("password2", ""):
            problems = ["The two passwords do not match."]
        else:
            try:
                password_link_use(uid=uid, token=token, password=password)
            except InvalidInput as exc:
                problems = [p.message for p in exc.problems]
            except DomainError as exc:
                return render(
                    request, "registration/set_password.html", {"refused": exc}, status=400
                )
            else:
                flash(
                    request,
                    messages.SUCCESS,
                    f"Your password is set, {user.get_username()}: sign in with it.",
                )
                return redirect("login")
    return render(
        request,
        "registration/set_password.html",
        {
            "username": user.get_username(),
            "problems": problems,
            "help_texts": password_validators_help_texts(),
        },
        status=400 if problems else 200,
    )
