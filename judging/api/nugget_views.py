"""Nugget banks over the API (``assessments.nuggets``, ``assessments.nugget_edits``,
``autojudge.nugget_drafts``): a campaign's versions (list; an admin drafts a new one), one
version with its nuggets by topic, the edits of a draft (one operation a POST; a topic's history
by GET), and publishing.

Who: admins create and publish; annotators and admins edit drafts; researchers read published
versions (a draft is not found for them); everyone else is refused.
"""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, JSONParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from judging.api.permissions import IsMember
from judging.api.serializers import ErrorSerializer
from judging.assessments.models import NuggetBank
from judging.assessments.nugget_edits import OPS, nugget_edit
from judging.assessments.nugget_selectors import (
    EditView,
    TopicView,
    bank_counts,
    bank_topics,
    banks_visible,
    campaign_bank,
    may_edit,
    may_manage,
    topic_history,
    topic_of,
)
from judging.assessments.nuggets import SOURCES, bank_publish
from judging.autojudge.nugget_drafts import draft_requested
from judging.campaigns.models import Campaign
from judging.core.errors import InvalidInput, NotAllowed
from metrics.problems import Problem


class NuggetSerializer(serializers.Serializer[Any]):
    key = serializers.CharField(help_text="Names the nugget across versions (n1, n2, ...).")
    position = serializers.IntegerField(help_text="0-based, in the topic's order.")
    text = serializers.CharField()
    importance = serializers.ChoiceField(choices=["vital", "okay"])
    sources = serializers.ListField(
        child=serializers.CharField(), help_text="The segment ids it was drafted from."
    )


class TopicNuggetsSerializer(serializers.Serializer[Any]):
    qid = serializers.CharField()
    title = serializers.CharField()
    last_edit = serializers.IntegerField(
        help_text="The id of the topic's latest edit (0: none): an edit names it as `base`."
    )
    nuggets = NuggetSerializer(many=True)


class NuggetBankSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    campaign = serializers.IntegerField()
    number = serializers.IntegerField()
    state = serializers.CharField(help_text="draft (being edited) or published (frozen).")
    source = serializers.CharField(  # type: ignore[assignment]
        help_text="How the draft began: " + ", ".join(SOURCES) + "."
    )
    based_on = serializers.IntegerField(allow_null=True, help_text="The version it copies.")
    qrels = serializers.IntegerField(
        allow_null=True, help_text="The qrels version whose relevant segments it is drafted from."
    )
    note = serializers.CharField()
    content_hash = serializers.CharField(help_text="sha256 of its content; set when published.")
    created_by = serializers.CharField()
    created_at = serializers.DateTimeField()
    published_at = serializers.DateTimeField(allow_null=True)
    topics = serializers.IntegerField(help_text="Topics with at least one nugget.")
    nuggets = serializers.IntegerField()


class NuggetBankDetailSerializer(NuggetBankSerializer):
    by_topic = TopicNuggetsSerializer(many=True, help_text="Every topic of the campaign.")


class SkippedSerializer(serializers.Serializer[Any]):
    topic = serializers.CharField()
    reason = serializers.CharField()


class DraftedSerializer(NuggetBankSerializer):
    skipped = SkippedSerializer(many=True, help_text="Topics the draft has no nugget for, why.")


class PublishedSerializer(NuggetBankSerializer):
    empty_topics = serializers.ListField(
        child=serializers.CharField(), help_text="Topics published without a nugget."
    )


class EditSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    op = serializers.CharField()
    before = NuggetSerializer(many=True)
    after = NuggetSerializer(many=True)
    editor = serializers.CharField()
    edited_at = serializers.DateTimeField()


class EditDoneSerializer(serializers.Serializer[Any]):
    edit = EditSerializer()
    topic = TopicNuggetsSerializer()


class DraftRequestSerializer(serializers.Serializer[Any]):
    source = serializers.CharField(  # type: ignore[assignment]
        help_text="imported (a `file`), extracted (sentences of the relevant segments, by the "
        "embedding judge's model), judge (an openai-compatible `judge` writes them) or copied "
        "(`based_on`'s nuggets, keys kept).",
    )
    file = serializers.FileField(
        required=False,
        help_text="imported: nuggetizer's JSON lines ({qid, nuggets: [{text, importance}]}) or "
        "qid<TAB>importance<TAB>text lines.",
    )
    based_on = serializers.IntegerField(required=False, help_text="copied: its version number.")
    judge = serializers.IntegerField(required=False, help_text="judge: the judge version's id.")
    qrels = serializers.IntegerField(
        required=False, help_text="The qrels version number (default: the latest human one)."
    )
    most = serializers.IntegerField(required=False, help_text="extracted, judge: nuggets a topic.")
    vital = serializers.IntegerField(required=False, help_text="extracted: how many are vital.")
    note = serializers.CharField(required=False, allow_blank=True, default="", max_length=10_000)


class EditRequestSerializer(serializers.Serializer[Any]):
    topic = serializers.CharField(help_text="The topic's qid.")
    op = serializers.ChoiceField(choices=list(OPS))
    base = serializers.IntegerField(
        min_value=0,
        help_text="The topic's `last_edit` as you read it: a stale base is a 409, never an "
        "overwrite.",
    )
    key = serializers.CharField(required=False, help_text="reword, importance, delete, split, move")
    keys = serializers.ListField(
        child=serializers.CharField(), required=False, help_text="merge: two keys or more"
    )
    text = serializers.CharField(
        required=False, trim_whitespace=False, help_text="add, reword (merge: optional)"
    )
    importance = serializers.ChoiceField(
        choices=["vital", "okay"], required=False, help_text="add, importance (merge: optional)"
    )
    parts = serializers.ListField(
        child=serializers.CharField(allow_blank=True), required=False, help_text="split"
    )
    to = serializers.IntegerField(required=False, min_value=0, help_text="move: the new position")
    position = serializers.IntegerField(
        required=False, min_value=0, help_text="add: where (default: last)"
    )
    sources = serializers.ListField(
        child=serializers.CharField(), required=False, help_text="add: segment ids"
    )


def _bank_data(bank: NuggetBank, counts: dict[int, tuple[int, int]]) -> dict[str, Any]:
    topics, nuggets = counts.get(bank.pk, (0, 0))
    return {
        "id": bank.pk,
        "campaign": bank.campaign_id,
        "number": bank.number,
        "state": bank.state,
        "source": bank.source,
        "based_on": bank.based_on.number if bank.based_on else None,
        "qrels": bank.qrels.number if bank.qrels else None,
        "note": bank.note,
        "content_hash": bank.content_hash,
        "created_by": bank.created_by.get_username() if bank.created_by else "",
        "created_at": bank.created_at,
        "published_at": bank.published_at,
        "topics": topics,
        "nuggets": nuggets,
    }


def _one(bank: NuggetBank) -> dict[str, Any]:
    return _bank_data(bank, bank_counts([bank]))


def _topic_data(t: TopicView) -> dict[str, Any]:
    return {
        "qid": t.qid,
        "title": t.title,
        "last_edit": t.last_edit,
        "nuggets": [
            {
                "key": n.key,
                "position": n.position,
                "text": n.text,
                "importance": n.importance,
                "sources": list(n.sources),
            }
            for n in t.nuggets
        ],
    }


def _edit_data(e: EditView) -> dict[str, Any]:
    return {
        "id": e.id,
        "op": e.op,
        "before": list(e.before),
        "after": list(e.after),
        "editor": e.editor,
        "edited_at": e.edited_at,
    }


def _campaign(request: Request, campaign_id: int) -> Campaign:
    return get_object_or_404(Campaign.objects.visible_to(request.user), pk=campaign_id)


def _bank(request: Request, campaign_id: int, number: int) -> NuggetBank:
    """Version ``number`` of the campaign's banks, if the caller may read it (else 404)."""
    return campaign_bank(request.user, _campaign(request, campaign_id), number)


class NuggetBanksView(APIView):
    """A campaign's nugget bank versions; an admin drafts a new one."""

    permission_classes = [IsMember]
    parser_classes = [JSONParser, MultiPartParser, FormParser]

    @extend_schema(
        responses={200: NuggetBankSerializer(many=True)},
        description="The campaign's nugget bank versions the caller may read, newest first: "
        "all of them for admins and annotators, the published ones for researchers.",
    )
    def get(self, request: Request, campaign_id: int) -> Response:
        campaign = _campaign(request, campaign_id)
        banks = list(banks_visible(request.user, campaign).select_related("based_on", "qrels"))
        counts = bank_counts(banks)
        return Response(
            NuggetBankSerializer([_bank_data(b, counts) for b in banks], many=True).data
        )

    @extend_schema(
        request={
            "application/json": DraftRequestSerializer,
            "multipart/form-data": DraftRequestSerializer,
        },
        responses={
            201: DraftedSerializer,
            400: ErrorSerializer,
            403: ErrorSerializer,
            409: OpenApiResponse(ErrorSerializer, description="the embedding extra is missing"),
        },
        description="A new draft, numbered next: imported from a nugget file (validated whole, "
        "every problem with its line), extracted from the relevant segments of a qrels version "
        "(sentence extraction by the embedding judge's model), written by an openai-compatible "
        "judge (a topic whose reply cannot be read is listed in `skipped`, with the reason), or "
        "copied from another version (keys kept). Nothing is stored when no topic gets a "
        "nugget. Admins only.",
    )
    def post(self, request: Request, campaign_id: int) -> Response:
        campaign = _campaign(request, campaign_id)
        if not may_manage(request.user):
            raise NotAllowed("only admins draft nugget banks")
        data = DraftRequestSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        upload = v.get("file")
        report = draft_requested(
            campaign=campaign,
            by=request.user,
            source=v["source"],
            qrels=v.get("qrels"),
            based_on=v.get("based_on"),
            judge=v.get("judge"),
            data=upload,
            file_name=getattr(upload, "name", None),
            note=v["note"],
            most=v.get("most"),
            vital=v.get("vital"),
        )
        body = _one(report.bank) | {
            "skipped": [{"topic": q, "reason": why} for q, why in sorted(report.skipped.items())]
        }
        return Response(DraftedSerializer(body).data, status=status.HTTP_201_CREATED)


class NuggetBankView(APIView):
    """One version with its nuggets, topic by topic."""

    permission_classes = [IsMember]

    @extend_schema(
        responses={200: NuggetBankDetailSerializer, 404: ErrorSerializer},
        description="The version and every topic of its campaign with its nuggets in order "
        "(and `last_edit`, which an edit names as its `base`). A draft is not found for a "
        "researcher.",
    )
    def get(self, request: Request, campaign_id: int, number: int) -> Response:
        bank = _bank(request, campaign_id, number)
        body = _one(bank) | {"by_topic": [_topic_data(t) for t in bank_topics(bank)]}
        return Response(NuggetBankDetailSerializer(body).data)


class NuggetEditsView(APIView):
    """A draft's edits: one operation a POST; a topic's history by GET."""

    permission_classes = [IsMember]

    @extend_schema(
        parameters=[OpenApiParameter("topic", str, required=True, description="the topic's qid")],
        responses={200: EditSerializer(many=True), 400: ErrorSerializer, 404: ErrorSerializer},
        description="The topic's edits in this version, oldest first (a drafted topic's first "
        "is `draft`, what it began with), each with the nuggets it touched before and after.",
    )
    def get(self, request: Request, campaign_id: int, number: int) -> Response:
        bank = _bank(request, campaign_id, number)
        qid = request.query_params.get("topic")
        if not qid:
            raise InvalidInput("which topic?", [Problem.at("topic", "required (a qid)")])
        history = topic_history(bank, topic_of(bank, qid))
        return Response(EditSerializer([_edit_data(e) for e in history], many=True).data)

    @extend_schema(
        request=EditRequestSerializer,
        responses={
            201: EditDoneSerializer,
            400: ErrorSerializer,
            403: ErrorSerializer,
            404: ErrorSerializer,
            409: OpenApiResponse(
                ErrorSerializer,
                description="the version is published (frozen), or `base` is not the topic's "
                "latest edit: another edit came first; read the topic again",
            ),
        },
        description="One edit of a draft's topic: add (`text`, `importance`, `position`?, "
        "`sources`?), reword (`key`, `text`), importance (`key`, `importance`), delete "
        "(`key`), merge (`keys`, `text`?, `importance`?: one new nugget, sources joined), split "
        "(`key`, `parts`: new nuggets in its place), move (`key`, `to`). Answers the edit and "
        "the topic as it is now. Annotators and admins.",
    )
    def post(self, request: Request, campaign_id: int, number: int) -> Response:
        if not may_edit(request.user):
            raise NotAllowed("only annotators and admins edit nugget banks")
        bank = _bank(request, campaign_id, number)
        data = EditRequestSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        row = nugget_edit(bank=bank, by=request.user, **data.validated_data)
        topic = topic_of(bank, data.validated_data["topic"])
        (edit,) = [e for e in topic_history(bank, topic) if e.id == row.pk]
        (now,) = bank_topics(bank, qid=topic.qid)
        body = {"edit": _edit_data(edit), "topic": _topic_data(now)}
        return Response(EditDoneSerializer(body).data, status=status.HTTP_201_CREATED)


class NuggetBankPublishView(APIView):
    permission_classes = [IsMember]

    @extend_schema(
        request=None,
        responses={
            200: PublishedSerializer,
            403: ErrorSerializer,
            409: OpenApiResponse(ErrorSerializer, description="published already"),
        },
        description="Publish a draft: frozen from now on (every edit is a 409), its content "
        "hashed (sha256 of one JSON line [qid, key, position, importance, text] a nugget, by "
        "topic and position). Topics without a nugget do not stop it: they are listed. Admins "
        "only.",
    )
    def post(self, request: Request, campaign_id: int, number: int) -> Response:
        if not may_manage(request.user):
            raise NotAllowed("only admins publish nugget banks")
        bank = _bank(request, campaign_id, number)
        done = bank_publish(bank=bank, by=request.user)
        body = _one(done.bank) | {"empty_topics": list(done.empty_topics)}
        return Response(PublishedSerializer(body).data)
