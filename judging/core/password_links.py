"""Set-password links: an invitation to a new account, or a new password for an existing one.

A link is ``/accounts/set-password/<uid>/<token>/``: the account's id in base 64 and a token from
Django's ``PasswordResetTokenGenerator`` with a salt of its own, so a password-reset token of
Django's is not a link here nor the other way round. The token is an HMAC (with ``SECRET_KEY``)
of the time it was issued and of the account's password hash, last sign-in and active flag, so:

- it is signed: a token changed or made up, or one account's token with another's id, is refused;
- it is used once: setting the password changes the hash it was made from (so does any new
  password, and a sign-in), and every earlier link of the account stops working;
- it expires ``POOLJUDGE_PASSWORD_LINK_SECONDS`` after it was issued (7 days by default);
- it stops working when the account is deactivated.

Nothing is stored: an admin issues as many links as they like, and only the newest-state ones
work. The refusals say which of these it was, as far as a server without a record can tell: a
used link and a forged one look alike.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth.password_validation import validate_password
from django.contrib.auth.tokens import PasswordResetTokenGenerator
from django.core.exceptions import ValidationError
from django.db import transaction
from django.urls import reverse
from django.utils import timezone
from django.utils.crypto import constant_time_compare
from django.utils.encoding import force_bytes
from django.utils.http import base36_to_int, urlsafe_base64_decode, urlsafe_base64_encode

from judging.core.errors import Conflict, DomainError, InvalidInput
from judging.core.roles import Account
from metrics.problems import Problem

ASK = "Ask an admin for a new link."


class LinkRefused(DomainError):
    """A set-password link that does not (or no longer) work; the message says why."""

    status = 400
    code = "invalid_link"


def now() -> dt.datetime:
    """The tokens' clock (naive local time, as Django's generator counts)."""
    return dt.datetime.now()


class _Tokens(PasswordResetTokenGenerator):
    key_salt = "judging.core.password_links"

    def _make_hash_value(self, user: Any, timestamp: int) -> str:
        return f"{super()._make_hash_value(user, timestamp)}{user.is_active}"

    def _now(self) -> dt.datetime:
        return now()

    def issued(self, user: Any, token: str) -> int | None:
        """The token's issue time (seconds since 2001) if it is this user's, else None."""
        ts_b36, _, _ = token.partition("-")
        try:
            ts = base36_to_int(ts_b36)
        except ValueError:
            return None
        for secret in [self.secret, *self.secret_fallbacks]:
            if constant_time_compare(self._make_token_with_timestamp(user, ts, secret), token):
                return ts
        return None

    def age(self, ts: int) -> int:
        return int(self._num_seconds(self._now())) - ts


_tokens = _Tokens()


@dataclass(frozen=True)
class PasswordLink:
    username: str
    uid: str
    token: str
    expires_at: dt.datetime

    def path(self) -> str:
        return reverse("set-password", kwargs={"uid": self.uid, "token": self.token})


def _days(seconds: int) -> str:
    if seconds % 86400 == 0:
        return f"{seconds // 86400} day{'s' if seconds != 86400 else ''}"
    if seconds % 3600 == 0:
        return f"{seconds // 3600} hour{'s' if seconds != 3600 else ''}"
    return f"{seconds} seconds"


def password_link_issue(*, account: Account) -> PasswordLink:
    """A new link for ``account`` (which must be active) to set its password."""
    if not account.is_active:
        raise Conflict(f"{account.get_username()!r} is deactivated: activate the account first")
    ttl: int = settings.POOLJUDGE_SECURITY.password_link_seconds
    return PasswordLink(
        username=account.get_username(),
        uid=urlsafe_base64_encode(force_bytes(account.pk)),
        token=_tokens.make_token(account),
        expires_at=timezone.now() + dt.timedelta(seconds=ttl),
    )


def _account(uid: str, *, lock: bool = False) -> Account | None:
    try:
        pk = int(urlsafe_base64_decode(uid).decode())
    except (ValueError, UnicodeDecodeError):
        return None
    users = Account.objects.select_for_update() if lock else Account.objects
    return users.filter(pk=pk).first()


def password_link_check(*, uid: str, token: str, lock: bool = False) -> Account:
    """The account the link sets the password of; ``LinkRefused`` saying why it does not work."""
    user = _account(uid, lock=lock)
    if user is None:
        raise LinkRefused(
            "This link is not valid: it was not issued by this site, or it was copied "
            f"incompletely. {ASK}"
        )
    ts = _tokens.issued(user, token)
    if ts is None:
        raise LinkRefused(
            "This link is not valid: it was used already (a link sets a password once; a newer "
            "password or a sign-in since it was issued ends it too), the account was "
            f"deactivated, or it was not issued by this site. {ASK}"
        )
    ttl: int = settings.POOLJUDGE_SECURITY.password_link_seconds
    if _tokens.age(ts) > ttl:
        raise LinkRefused(f"This link expired: a link works for {_days(ttl)}. {ASK}")
    if not user.is_active:
        raise LinkRefused(f"This account is deactivated. {ASK}")
    return user


def password_link_use(*, uid: str, token: str, password: str) -> Account:
    """Set the password through the link (once): checked again with the account's row locked,
    so two submits at once set it once; the password must pass the validators."""
    with transaction.atomic():
        user = password_link_check(uid=uid, token=token, lock=True)
        try:
            validate_password(password, user=user)
        except ValidationError as exc:
            problems = [Problem.at("password", str(m)) for m in exc.messages]
            raise InvalidInput("the password was not set", problems) from None
        user.set_password(password)
        user.save(update_fields=["password"])
    return user
