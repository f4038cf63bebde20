"""Role checks for API views. Object visibility is enforced by scoped querysets as well."""

from __future__ import annotations

from typing import Any

from rest_framework.permissions import SAFE_METHODS, BasePermission
from rest_framework.request import Request

from judging.core.roles import is_admin, is_annotator, is_researcher


class IsAdmin(BasePermission):
    message = "only admins may do this"

    def has_permission(self, request: Request, view: Any) -> bool:
        return is_admin(request.user)


class IsResearcher(BasePermission):
    message = "only researchers and admins may do this"

    def has_permission(self, request: Request, view: Any) -> bool:
        return is_researcher(request.user)


class IsAnnotator(BasePermission):
    message = "only annotators judge"

    def has_permission(self, request: Request, view: Any) -> bool:
        return is_annotator(request.user)


class IsMember(BasePermission):
    """Any role at all (admin, researcher or annotator)."""

    message = "your account has no role in Pooljudge"

    def has_permission(self, request: Request, view: Any) -> bool:
        user = request.user
        return is_admin(user) or is_researcher(user) or is_annotator(user)


class ReadMemberWriteAdmin(BasePermission):
    message = "only admins may change this"

    def has_permission(self, request: Request, view: Any) -> bool:
        if request.method in SAFE_METHODS:
            return IsMember().has_permission(request, view)
        return is_admin(request.user)
