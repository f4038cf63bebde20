"""Paging of every API list: ``?limit=`` and ``?offset=`` checked, the page size capped.

``limit`` is a whole number from 1 to ``POOLJUDGE_MAX_PAGE_SIZE``, ``offset`` a whole number from
0; anything else (``limit=1e20``, ``limit=-1``, ``offset=abc``, a limit over the maximum) is a 400
naming the parameter, not silently replaced: a client asking for more than one page may hold
gets told so instead of believing it got everything. Without ``limit`` a page has ``PAGE_SIZE``
items.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.request import Request

from judging.api.params import MAX_ID, query_int


class BoundedLimitOffsetPagination(LimitOffsetPagination):
    def get_limit(self, request: Request) -> int | None:
        limit = query_int(
            request.query_params,
            self.limit_query_param,
            minimum=1,
            maximum=settings.POOLJUDGE_MAX_PAGE_SIZE,
        )
        return self.default_limit if limit is None else limit

    def get_offset(self, request: Request) -> int:
        offset = query_int(request.query_params, self.offset_query_param, minimum=0, maximum=MAX_ID)
        return offset or 0

    def get_schema_operation_parameters(self, view: Any) -> list[dict[str, Any]]:
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            if parameter["name"] == self.limit_query_param:
                parameter["schema"].update(
                    minimum=1, maximum=settings.POOLJUDGE_MAX_PAGE_SIZE, default=self.default_limit
                )
            elif parameter["name"] == self.offset_query_param:
                parameter["schema"].update(minimum=0, default=0)
        return parameters
