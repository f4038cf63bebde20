"""Queuing the items that answer runs need judged (``assessments.units``): nugget creation,
nugget assignment and citation support, in the one judging queue."""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from judging.api.permissions import IsAdmin
from judging.api.serializers import ErrorSerializer
from judging.assessments import units
from judging.assessments.models import UnitKind
from judging.campaigns.models import Campaign


class AnswerItemsInSerializer(serializers.Serializer[Any]):
    kind = serializers.ChoiceField(
        choices=[k for k in UnitKind.values if k != UnitKind.DOCUMENT],
        help_text="nugget_assignment: each (answer, nugget of a published bank); "
        "citation_support: each cited (sentence, segment); nugget_creation: each topic of a "
        "draft bank, reviewed on the bank's screen",
    )
    bank = serializers.IntegerField(
        required=False,
        allow_null=True,
        default=None,
        min_value=1,
        help_text="The nugget bank version (its number): published for assignment, a draft "
        "for creation; not used for citation support",
    )
    runs = serializers.ListField(
        child=serializers.IntegerField(min_value=1),
        required=False,
        allow_null=True,
        default=None,
        max_length=10_000,
        help_text="Only these runs' answers (ids); default every answer run of the campaign",
    )
    citations = serializers.ChoiceField(
        choices=["first", "all"],
        default="first",
        help_text="Citation support: the first citation of each sentence (TREC 2024 RAG's "
        "protocol) or every citation (an extension)",
    )


class QueuedSerializer(serializers.Serializer[Any]):
    kind = serializers.CharField()
    items = serializers.IntegerField(help_text="Items of the kind the answers need")
    slots = serializers.IntegerField(help_text="Slots created now (0: all were queued before)")
    bank = serializers.IntegerField(allow_null=True, help_text="The bank version's number")


class AnswerItemsView(APIView):
    permission_classes = [IsAdmin]

    @extend_schema(
        request=AnswerItemsInSerializer,
        responses={
            201: QueuedSerializer,
            400: OpenApiResponse(ErrorSerializer, description="a bad kind, bank or run"),
        },
        description="Queue the items a campaign's answer runs need judged (admins): they join "
        "the one judging queue, interleaved with each topic's open items, blind to runs; the "
        "same answer (or sentence) in several runs is one item. Idempotent: items already "
        "queued keep their slots.",
    )
    def post(self, request: Request, campaign_id: int) -> Response:
        campaign = get_object_or_404(Campaign, pk=campaign_id)
        body = AnswerItemsInSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        queued = units.answer_items_queue(campaign=campaign, **body.validated_data)
        return Response(
            QueuedSerializer(
                {
                    "kind": queued.kind,
                    "items": queued.items,
                    "slots": queued.slots,
                    "bank": queued.bank,
                }
            ).data,
            status=status.HTTP_201_CREATED,
        )
