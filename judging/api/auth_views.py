"""``/api/v1/auth/token/``: a token for a username and password (throttled), and its revocation."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.authtoken.models import Token
from rest_framework.authtoken.serializers import AuthTokenSerializer
from rest_framework.parsers import FormParser, JSONParser, MultiPartParser
from rest_framework.permissions import AllowAny, BasePermission, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from judging.api.authentication import expires_at, token_for
from judging.core import login_throttle
from judging.core.errors import RateLimited
from judging.core.roles import account

TokenSerializer = inline_serializer(
    name="Token",
    fields={"token": serializers.CharField(), "expires_at": serializers.DateTimeField()},
)


class TokenView(APIView):
    parser_classes = [JSONParser, FormParser, MultiPartParser]
    serializer_class = AuthTokenSerializer

    def get_permissions(self) -> list[BasePermission]:
        if self.request.method == "POST":
            return [AllowAny()]
        return [IsAuthenticated()]

    @extend_schema(
        request=AuthTokenSerializer,
        responses={200: TokenSerializer, 429: OpenApiResponse(description="too many failures")},
        description="Your API token (the same one until it expires, then a new one). After "
        "too many failed attempts for the username from this address, from this address, or "
        "for the username from anywhere (unless this address signed in to it before): 429 "
        "with Retry-After.",
    )
    def post(self, request: Request) -> Response:
        data: Any = request.data
        username = str(data.get("username") or "") if hasattr(data, "get") else ""
        wait = login_throttle.retry_after(request, username)
        if wait:
            raise RateLimited(login_throttle.message(wait), retry_after=wait)
        ser = AuthTokenSerializer(data=data, context={"request": request})
        ser.is_valid(raise_exception=True)
        user = ser.validated_data["user"]
        login_throttle.record_success(request, user.get_username())
        token = token_for(user)
        return Response({"token": token.key, "expires_at": expires_at(token)})

    @extend_schema(
        request=None,
        responses={204: None},
        description="Revoke your own API token (every client using it gets 401 afterwards).",
    )
    def delete(self, request: Request) -> Response:
        Token.objects.filter(user=account(request.user)).delete()
        return Response(status=status.HTTP_204_NO_CONTENT)
