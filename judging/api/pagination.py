"""Paging of every API list: ``?limit=`` and ``?offset=`` checked, the page size capped.

``limit`` is a whole number from 1 to ``POOLJUDGE_MAX_PAGE_SIZE``, ``offset`` a whole number from
0; anything else (``limit=1e20``, ``limit=-1``, ``offset=abc``, a limit over the maximum) is a 400
naming the parameter, not silently replaced: a client asking for more than one page may hold
gets told so instead of believing it got everything. Without ``limit`` a page has ``PAGE_SIZE``
items.

A page of large items (documents with their text) is written as it is read
(:meth:`BoundedLimitOffsetPagination.streamed_page`): the same answer, never whole in memory.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

from django.conf import settings
from django.db.models import Model, QuerySet
from django.http import StreamingHttpResponse
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.request import Request
from rest_framework.utils.encoders import JSONEncoder

from judging.core.params import MAX_ID, query_int


class BoundedLimitOffsetPagination(LimitOffsetPagination):
    def get_limit(self, request: Request) -> int | None:
        return self._limit(request, settings.POOLJUDGE_API.max_page_size, self.default_limit)

    def _limit(self, request: Request, maximum: int, default: int | None) -> int | None:
        limit = query_int(request.query_params, self.limit_query_param, minimum=1, maximum=maximum)
        return default if limit is None else limit

    def streamed_page(
        self,
        queryset: QuerySet[Any],
        request: Request,
        *,
        item: Callable[[Model], Any],
        max_limit: int,
    ) -> StreamingHttpResponse:
        """One page of ``queryset`` as ``get_paginated_response`` answers it (``count``,
        ``next``, ``previous``, ``results``), each item (``item(obj)``) written as it is read
        from the database. ``limit`` is at most ``max_limit`` (a 400 above it), and by default
        the smaller of it and the usual page size."""
        self.request = request
        default = min(self.default_limit or max_limit, max_limit)
        limit = self._limit(request, max_limit, default) or default
        self.limit, self.offset = limit, self.get_offset(request)
        self.count = self.get_count(queryset)
        links = {"next": self.get_next_link(), "previous": self.get_previous_link()}
        rows = queryset[self.offset : self.offset + limit]

        def dump(value: Any) -> str:
            return json.dumps(value, cls=JSONEncoder, ensure_ascii=False)

        def body() -> Iterator[str]:
            yield f'{{"count":{self.count},"next":{dump(links["next"])},'
            yield f'"previous":{dump(links["previous"])},"results":['
            for n, obj in enumerate(rows.iterator(chunk_size=min(limit, 100))):
                yield ("," if n else "") + dump(item(obj))
            yield "]}"

        return StreamingHttpResponse(body(), content_type="application/json")

    def get_offset(self, request: Request) -> int:
        offset = query_int(request.query_params, self.offset_query_param, minimum=0, maximum=MAX_ID)
        return offset or 0

    def get_schema_operation_parameters(self, view: Any) -> list[dict[str, Any]]:
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            if parameter["name"] == self.limit_query_param:
                parameter["schema"].update(
                    minimum=1,
                    maximum=settings.POOLJUDGE_API.max_page_size,
                    default=self.default_limit,
                )
            elif parameter["name"] == self.offset_query_param:
                parameter["schema"].update(minimum=0, default=0)
        return parameters
