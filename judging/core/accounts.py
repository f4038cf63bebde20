"""Accounts and their roles: create one, change its roles, deactivate it; the list admins see.

``manage.py create_user`` and the admin's users page (``/manage/users/``) both come here. A role is
one of ``roles.ROLES``: admin (staff and superuser), researcher, annotator (Django groups); an
account holds one or more. A new account gets a password checked by ``AUTH_PASSWORD_VALIDATORS``,
or none: then ``password_links`` issues the link where its owner sets one. Names are unique
whatever their case (``Rita`` and ``rita`` would share the sign-in throttle's counts and confuse
people). Everything is checked before anything is stored.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass

from django.contrib.auth.password_validation import validate_password
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import IntegrityError, transaction

from judging.core.errors import Conflict, InvalidInput
from judging.core.roles import ADMIN, ROLES, Account, roles_of, roles_set
from metrics.problems import Problem

USERNAME_MAX = 150  # the column's size


@dataclass(frozen=True)
class AccountRow:
    """One account as the users page lists it."""

    id: int
    username: str
    email: str
    roles: tuple[str, ...]
    is_active: bool
    has_password: bool
    last_login: dt.datetime | None
    date_joined: dt.datetime


def accounts_list() -> list[AccountRow]:
    """Every account, by name, with its roles."""
    users = Account.objects.order_by("username").prefetch_related("groups")
    return [
        AccountRow(
            id=u.pk,
            username=u.get_username(),
            email=u.email,
            roles=tuple(_roles(u)),
            is_active=u.is_active,
            has_password=u.has_usable_password(),
            last_login=u.last_login,
            date_joined=u.date_joined,
        )
        for u in users
    ]


def _roles(user: Account) -> list[str]:
    names = {g.name for g in user.groups.all()}  # prefetched
    return [r for r in ROLES if (r == ADMIN and user.is_staff) or r in names]


def _role_problems(roles: Iterable[str]) -> list[Problem]:
    roles = list(roles)
    problems = [
        Problem.at("roles", f"unknown role {r!r}; expected one of {', '.join(ROLES)}")
        for r in roles
        if r not in ROLES
    ]
    if not roles:
        problems.append(Problem.at("roles", f"choose at least one role: {', '.join(ROLES)}"))
    return problems


def _messages(exc: ValidationError) -> list[str]:
    return [str(m) for m in exc.messages]


def account_create(
    *, username: str, roles: Iterable[str], email: str = "", password: str | None = None
) -> Account:
    """A new active account holding ``roles``. ``password`` None: no usable password yet (the
    owner sets it through a password link); otherwise it must pass the password validators."""
    username, email, roles = username.strip(), email.strip(), list(dict.fromkeys(roles))
    problems: list[Problem] = []
    if not username:
        problems.append(Problem.at("username", "a username is needed"))
    elif len(username) > USERNAME_MAX:
        problems.append(Problem.at("username", f"at most {USERNAME_MAX} characters"))
    else:
        try:
            UnicodeUsernameValidator()(username)
        except ValidationError as exc:
            problems += [Problem.at("username", m) for m in _messages(exc)]
    if email:
        try:
            validate_email(email)
        except ValidationError as exc:
            problems += [Problem.at("email", m) for m in _messages(exc)]
    problems += _role_problems(roles)
    if password is not None:
        if not password:
            problems.append(Problem.at("password", "a password is needed"))
        else:
            try:  # the similarity validator compares it with the name and the address
                validate_password(password, user=Account(username=username, email=email))
            except ValidationError as exc:
                problems += [Problem.at("password", m) for m in _messages(exc)]
    if problems:
        raise InvalidInput("the account was not created", problems)
    taken = Conflict(f"an account named {username!r} already exists")
    try:
        with transaction.atomic():
            if Account.objects.filter(username__iexact=username).exists():
                raise taken
            user = Account.objects.create_user(username=username, email=email, password=password)
            roles_set(user, set(roles))
    except IntegrityError:  # the same name created at the same moment
        raise taken from None
    return user


def account_roles_set(*, account: Account, roles: Iterable[str], by: Account) -> Account:
    """Give ``account`` exactly ``roles``. Nobody removes their own admin role (another admin
    can), so the service always keeps an admin who can undo a change."""
    roles = list(dict.fromkeys(roles))
    problems = _role_problems(roles)
    if problems:
        raise InvalidInput(f"the roles of {account.get_username()!r} were not changed", problems)
    if account.pk == by.pk and ADMIN in roles_of(account) and ADMIN not in roles:
        raise Conflict("you cannot remove your own admin role; another admin can")
    with transaction.atomic():
        roles_set(account, set(roles))
    return account


def account_active_set(*, account: Account, active: bool, by: Account) -> Account:
    """Deactivate (or reactivate) ``account``. A deactivated account cannot sign in, its sessions
    and API token stop working at their next request, and its password links are refused; its
    runs and judgments stay. Nobody deactivates their own account."""
    if account.pk == by.pk and not active:
        raise Conflict("you cannot deactivate your own account; another admin can")
    account.is_active = active
    account.save(update_fields=["is_active"])
    return account
