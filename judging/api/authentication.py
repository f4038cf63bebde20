"""API tokens that expire (``POOLJUDGE_TOKEN_TTL_SECONDS`` after they were issued).

DRF's own tokens, one per user, with their ``created`` time as the start of their life: an
expired token answers 401 and is deleted; ``POST /api/v1/auth/token/`` then issues a new one.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.conf import settings
from django.utils import timezone
from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication
from rest_framework.authtoken.models import Token


def expires_at(token: Token) -> dt.datetime:
    created: dt.datetime = token.created
    return created + dt.timedelta(seconds=settings.POOLJUDGE_SECURITY.token_ttl_seconds)


def is_expired(token: Token) -> bool:
    return expires_at(token) <= timezone.now()


def token_for(user: Any) -> Token:
    """The user's token, a new one if they had none or it expired."""
    token, created = Token.objects.get_or_create(user=user)
    if not created and is_expired(token):
        token.delete()
        token = Token.objects.create(user=user)
    return token


class ExpiringTokenAuthentication(TokenAuthentication):
    def authenticate_credentials(self, key: str) -> tuple[Any, Token]:
        user, token = super().authenticate_credentials(key)
        if is_expired(token):
            token.delete()
            raise exceptions.AuthenticationFailed(
                f"the token expired at {expires_at(token).isoformat(timespec='seconds')}; "
                "ask for a new one: POST /api/v1/auth/token/ with your username and password"
            )
        return user, token


def revoke_on_password_change(
    sender: Any, instance: Any, raw: bool = False, update_fields: Any = None, **_: Any
) -> None:
    """``pre_save`` of the user model: a new password (a reset after a leak, too) revokes the
    user's API token, so that whoever held the old password loses the token it gave them."""
    if (
        raw
        or instance.pk is None
        or (update_fields is not None and "password" not in update_fields)
    ):
        return  # a fixture, a new user, or a save of other fields (last_login at each sign-in)
    old = sender.objects.filter(pk=instance.pk).values_list("password", flat=True).first()
    if old is not None and old != instance.password:
        Token.objects.filter(user_id=instance.pk).delete()
