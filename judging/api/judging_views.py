"""API for annotators (leases, judgments) and for admins (progress, agreement, adjudication,
publishing qrels). Annotator answers carry no system information: no run, rank, score, system
count or other annotator's grade."""

from __future__ import annotations

from typing import Any, cast

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from judging.api.permissions import IsAdmin, IsAnnotator, IsResearcher
from judging.api.result_schemas import ref
from judging.api.serializers import NoteSerializer, QrelsVersionSerializer, note_of
from judging.api.views import IntegerIdMixin
from judging.assessments import planning, queue, selectors, units
from judging.assessments import services as qrels_services
from judging.assessments.adjudication import decisions
from judging.assessments.answers import (
    AgreementAnswer,
    DisagreementsAnswer,
    ProgressAnswer,
    PublishExtras,
    QrelsDiffAnswer,
)
from judging.assessments.models import JudgingSlot, Judgment, Lease, QrelsVersion
from judging.autojudge import suggestions
from judging.campaigns.models import Campaign
from judging.core.params import MAX_ID, path_id, query_bool, query_int, query_text
from judging.core.roles import account
from judging.workflows.judgments import judgment_recorded
from judging.workflows.qrels import qrels_published


class SuggestionSerializer(serializers.Serializer[Any]):
    """An automatic grade suggested to the assessor: the grade and its label, never the judge."""

    grade = serializers.IntegerField()
    label = serializers.CharField()  # type: ignore[assignment]


class RevealedSuggestionSerializer(SuggestionSerializer):
    arm = serializers.ChoiceField(
        choices=suggestions.ARMS,
        help_text="shown: it was on the item before judging; hidden: revealed now, after the "
        "judgment was recorded",
    )


class LeaseDocumentSerializer(serializers.Serializer[Any]):
    docid = serializers.CharField(help_text="The item: a document, or a passage (docid#pid).")
    title = serializers.CharField(help_text="The document's title.")
    text = serializers.CharField(help_text="The document's whole text (a passage's too).")
    passage = serializers.ListField(
        child=serializers.IntegerField(min_value=0),
        min_length=2,
        max_length=2,
        allow_null=True,
        help_text="A passage's [start, end) character offsets (code points) in the text; null "
        "for a whole document.",
    )
    chunking = serializers.CharField(help_text="The passage's chunking; empty for a document.")


class UnitNuggetSerializer(serializers.Serializer[Any]):
    key = serializers.CharField()
    text = serializers.CharField()
    importance = serializers.CharField()


class UnitSerializer(serializers.Serializer[Any]):
    """For an item that is not a document, what its screen shows (``assessments.units``); the
    fields of its kind only."""

    question = serializers.CharField(help_text="What the assessor is asked")
    bank = serializers.IntegerField(required=False, help_text="The nugget bank's id")
    bank_number = serializers.IntegerField(required=False, help_text="Its version number")
    nugget = serializers.CharField(required=False, help_text="nugget_assignment: its key")
    nugget_text = serializers.CharField(required=False)
    importance = serializers.CharField(required=False, help_text="vital or okay")
    answer = serializers.ListField(
        child=serializers.CharField(), required=False, help_text="The answer's sentences"
    )
    sentence = serializers.CharField(required=False, help_text="citation_support")
    segment = serializers.CharField(required=False, help_text="The cited segment's id")
    segment_title = serializers.CharField(required=False)
    segment_text = serializers.CharField(required=False)
    nuggets = UnitNuggetSerializer(
        many=True, required=False, help_text="nugget_creation: the draft's nuggets of the topic"
    )


class LeaseSerializer(serializers.Serializer[Any]):
    """What an annotator sees of a leased item: topic and document, nothing about systems; and,
    when the campaign suggests automatic grades and the item is in the shown arm, the grade
    (in the hidden arm: null, revealed with the recorded judgment)."""

    id = serializers.IntegerField()
    campaign = serializers.IntegerField(source="slot.campaign_id")
    expires_at = serializers.DateTimeField()
    state = serializers.CharField()
    kind = serializers.CharField(
        source="slot.kind",
        help_text="What is judged: document (a document or passage; its relevance), "
        "nugget_creation, nugget_assignment or citation_support (assessments.units).",
    )
    topic = serializers.SerializerMethodField()
    document = serializers.SerializerMethodField()
    unit = serializers.SerializerMethodField()
    scale = serializers.SerializerMethodField()
    suggestion = serializers.SerializerMethodField()

    def get_topic(self, lease: Lease) -> dict[str, str]:
        t = lease.slot.topic
        return {
            "qid": t.qid,
            "title": t.title,
            "description": t.description,
            "narrative": t.narrative,
        }

    @extend_schema_field(LeaseDocumentSerializer)
    def get_document(self, lease: Lease) -> dict[str, Any]:
        shown = queue.item_text(lease.slot)
        doc = shown.document if shown else None
        return {
            "docid": lease.slot.docid,
            "title": doc.title if doc else "",
            "text": doc.text if doc else "",
            "passage": list(shown.passage) if shown and shown.passage else None,
            "chunking": shown.chunking if shown else "",
        }

    @extend_schema_field(UnitSerializer(allow_null=True))
    def get_unit(self, lease: Lease) -> dict[str, Any] | None:
        slot = lease.slot
        return units.unit_shown(slot.campaign_id, slot.topic_id, slot.kind, slot.docid)

    def get_scale(self, lease: Lease) -> list[dict[str, Any]]:
        slot = lease.slot
        if slot.kind == units.DOCUMENT:
            return list(slot.campaign.scale)
        return [{"grade": g, "label": label} for g, label in units.KINDS[slot.kind].grades.items()]

    @extend_schema_field(SuggestionSerializer(allow_null=True))
    def get_suggestion(self, lease: Lease) -> dict[str, Any] | None:
        slot = lease.slot
        found = suggestions.suggestion_for(
            slot.campaign,
            slot.topic_id,
            slot.docid,
            slot.pk,
            gold=slot.gold_id is not None,
            kind=slot.kind,
        )
        if found is None or found["arm"] != suggestions.SHOWN:
            return None  # the hidden arm says nothing before the judgment is recorded
        return {"grade": found["grade"], "label": found["label"]}


SPAN_SCHEMA = {
    "type": "array",
    "items": {"type": "integer", "minimum": 0},
    "minItems": 2,
    "maxItems": 2,
    "description": "[start, end): character offsets (code points) in the document's text",
}


@extend_schema_field({"type": "array", "items": SPAN_SCHEMA, "nullable": True})
class AnswersField(serializers.JSONField):
    """The answer spans an assessor marked, checked whole by the service
    (``assessments.spans``: each problem named, ``answers[2]``)."""


class SpansSerializer(serializers.Serializer[Any]):
    passage = serializers.ListField(
        child=serializers.IntegerField(),
        required=False,
        help_text="[start, end) of the passage judged in its document's text (only for a "
        "passage, an id docid#pid)",
    )
    answers = serializers.ListField(
        child=serializers.ListField(child=serializers.IntegerField()),
        required=False,
        help_text="The [start, end) spans marked as answering, sorted and merged",
    )


class JudgmentInSerializer(serializers.Serializer[Any]):
    grade = serializers.IntegerField()
    active_seconds = serializers.FloatField(required=False, default=0.0, min_value=0.0)
    answers = AnswersField(
        required=False,
        default=None,
        allow_null=True,
        help_text="The spans of the document's text that answer the topic, as [start, end) "
        "character offsets (Python code points of the document's text, the scale of a "
        "passage's offsets), at most POOLJUDGE_MAX_ANSWER_SPANS; only with a grade above 0. "
        "Stored sorted, overlapping and touching spans merged. Recording: omitted means none. "
        "Changing (PATCH): omitted keeps the judgment's answers (none with grade 0), [] "
        "removes them.",
    )


class JudgmentOutSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    topic = serializers.CharField(source="topic.qid")
    kind = serializers.CharField(help_text="What was judged (assessments.units)")
    docid = serializers.CharField(help_text="The item's key in its kind: a document's id")
    grade = serializers.IntegerField()
    active_seconds = serializers.FloatField()
    spans = SpansSerializer(
        allow_null=True,
        help_text="Where in the document's text the judgment applies: the passage judged and "
        "the answers marked (null: a whole document, nothing marked)",
    )
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()


class JudgmentRecordedSerializer(JudgmentOutSerializer):
    suggestion = RevealedSuggestionSerializer(
        allow_null=True,
        help_text="The automatic grade suggested for the item, in either arm (null: none)",
    )


def _lease_response(lease: Lease | None, created: int = status.HTTP_201_CREATED) -> Response:
    if lease is None:
        return Response(status=status.HTTP_204_NO_CONTENT)
    loaded = (
        Lease.slot.is_cached(lease)
        and JudgingSlot.topic.is_cached(lease.slot)
        and JudgingSlot.campaign.is_cached(lease.slot)
    )
    if not loaded:
        lease = Lease.objects.select_related("slot__topic", "slot__campaign").get(pk=lease.pk)
    return Response(LeaseSerializer(lease).data, status=created)


# A 204 from the lease endpoint has no body: this header carries the items waiting for text.
WAITING_HEADER = "Pooljudge-Waiting-For-Text"


class CampaignLeaseView(APIView):
    permission_classes = [IsAnnotator]

    @extend_schema(
        request=None,
        responses={201: LeaseSerializer, 204: None},
        parameters=[
            OpenApiParameter(
                WAITING_HEADER,
                int,
                location=OpenApiParameter.HEADER,
                response=[204],
                description="with a 204: how many items not judged by you are queued but wait "
                "for their document's text (served once an admin imports it)",
            )
        ],
        description="Lease the next item to judge (or your current one); 204 when "
        f"nothing is left for you now, with {WAITING_HEADER}: the items that wait for their "
        "document's text.",
    )
    def post(self, request: Request, campaign_id: int) -> Response:
        campaign = get_object_or_404(Campaign.objects.visible_to(request.user), pk=campaign_id)
        response = _lease_response(
            queue.lease_next(campaign=campaign, annotator=account(request.user))
        )
        if response.status_code == status.HTTP_204_NO_CONTENT:
            waiting = selectors.waiting_for_text(campaign, request.user)
            response[WAITING_HEADER] = str(waiting)
        return response


class LeaseViewSet(IntegerIdMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet[Lease]):
    """An annotator's own leases."""

    serializer_class = LeaseSerializer
    permission_classes = [IsAnnotator]

    def get_queryset(self) -> QuerySet[Lease]:
        if getattr(self, "swagger_fake_view", False):  # schema generation
            return Lease.objects.none()
        return Lease.objects.filter(annotator=cast(Any, self.request.user)).select_related(
            "slot__topic", "slot__campaign"
        )

    @extend_schema(request=None, responses={200: LeaseSerializer})
    @action(detail=True, methods=["post"])
    def renew(self, request: Request, pk: str | None = None) -> Response:
        lease = queue.lease_renew(lease_id=path_id(pk), annotator=account(request.user))
        return _lease_response(lease, status.HTTP_200_OK)

    @extend_schema(
        request=None,
        responses={204: None},
        description="Release the item (skip): it returns to the queue.",
    )
    def destroy(self, request: Request, pk: str | None = None) -> Response:
        queue.lease_release(lease_id=path_id(pk), annotator=account(request.user))
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(
        request=JudgmentInSerializer,
        responses={201: JudgmentRecordedSerializer, 200: JudgmentRecordedSerializer},
        description="Record the grade, and the answer spans marked in the document's text "
        "(`answers`; for a passage, `docid#pid`, the passage's offsets are stored with them: "
        "`spans` in the answer). Idempotent: the same grade with the same answers again stores "
        "nothing new (200). Another grade, or the same grade with other answers, for an item "
        "you already judged is refused (409, saying what the judgment is): it comes from a page "
        "that is out of date (a second tab, another computer); change a judgment with PATCH "
        "/api/v1/judgments/{id}/. When the campaign "
        "suggests automatic grades, the item's suggestion (its arm and grade, looked up here, "
        "never taken from the request) is recorded with the judgment and returned: in the "
        "hidden arm this is where the assessor first learns it.",
    )
    @action(detail=True, methods=["post"])
    def judgment(self, request: Request, pk: str | None = None) -> Response:
        ser = JudgmentInSerializer(data=request.data)
        ser.is_valid(raise_exception=True)
        recorded = judgment_recorded(
            lease_id=path_id(pk),
            annotator=account(request.user),
            grade=ser.validated_data["grade"],
            active_seconds=ser.validated_data["active_seconds"],
            answers=ser.validated_data["answers"],
        )
        return Response(
            {**JudgmentOutSerializer(recorded.judgment).data, "suggestion": recorded.suggestion},
            status=status.HTTP_201_CREATED if recorded.created else status.HTTP_200_OK,
        )


class JudgmentViewSet(
    IntegerIdMixin,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    viewsets.GenericViewSet[Judgment],
):
    """An annotator's own judgments (never anybody else's)."""

    serializer_class = JudgmentOutSerializer
    permission_classes = [IsAnnotator]

    def get_queryset(self) -> QuerySet[Judgment]:
        if getattr(self, "swagger_fake_view", False):  # schema generation
            return Judgment.objects.none()
        qs = Judgment.objects.filter(annotator=cast(Any, self.request.user)).select_related("topic")
        campaign = query_int(
            self.request.query_params, "campaign", minimum=1, maximum=MAX_ID, what="a campaign id"
        )
        if campaign is not None:
            qs = qs.filter(campaign_id=campaign)
        return qs.order_by("-updated_at", "-pk")

    @extend_schema(
        request=JudgmentInSerializer,
        responses={200: JudgmentOutSerializer},
        description="Change one of your judgments: its grade and, with `answers`, its answer "
        "spans (omitted: kept, except that grade 0 has none; []: removed). Each change is kept "
        "in the judgment's history; the same grade and answers change nothing.",
    )
    def partial_update(self, request: Request, pk: str | None = None) -> Response:
        ser = JudgmentInSerializer(data=request.data)
        ser.is_valid(raise_exception=True)
        judgment = queue.judgment_change(
            judgment_id=path_id(pk),
            annotator=account(request.user),
            grade=ser.validated_data["grade"],
            answers=ser.validated_data["answers"],
        )
        return Response(JudgmentOutSerializer(judgment).data)


class UndoView(APIView):
    permission_classes = [IsAnnotator]

    @extend_schema(
        request=None,
        responses={201: LeaseSerializer, 204: None},
        description="Undo your latest judgment in the campaign; the item is leased back to you.",
    )
    def post(self, request: Request, campaign_id: int) -> Response:
        campaign = get_object_or_404(Campaign.objects.visible_to(request.user), pk=campaign_id)
        return _lease_response(
            queue.judgment_undo(campaign=campaign, annotator=account(request.user))
        )


# --- admins ---------------------------------------------------------------------------------


def _campaign(request: Request, campaign_id: int) -> Campaign:
    return get_object_or_404(Campaign.objects.visible_to(request.user), pk=campaign_id)


class ProgressView(APIView):
    permission_classes = [IsAdmin]

    @extend_schema(
        responses={200: ref(ProgressAnswer)},
        description="Judging progress per topic and annotator, lease states, throughput "
        "(admins); waiting_text: items queued but not served because their document has no "
        "text yet (documents_waiting_text: distinct documents; per topic too).",
    )
    def get(self, request: Request, campaign_id: int) -> Response:
        return Response(selectors.judging_progress(_campaign(request, campaign_id)))


class AgreementView(APIView):
    permission_classes = [IsAdmin]

    @extend_schema(
        responses={200: ref(AgreementAnswer)},
        description="Agreement on items judged by several "
        "annotators: Cohen's linear-weighted kappa per pair, Fleiss' kappa, Krippendorff's "
        "alpha (ordinal), overall and per topic (admins).",
    )
    def get(self, request: Request, campaign_id: int) -> Response:
        return Response(selectors.agreement_report(_campaign(request, campaign_id)))


class DisagreementView(APIView):
    permission_classes = [IsAdmin]

    @extend_schema(
        responses={200: ref(DisagreementsAnswer)},
        parameters=[
            OpenApiParameter("relevance", bool, description="only disagreements on relevant vs not")
        ],
    )
    def get(self, request: Request, campaign_id: int) -> Response:
        items = selectors.disagreement_list(
            _campaign(request, campaign_id),
            relevance_only=query_bool(request.query_params, "relevance"),
        )
        return Response({"count": len(items), "results": items})


class AdjudicationSerializer(serializers.Serializer[Any]):
    topic = serializers.CharField()
    docid = serializers.CharField()
    grade = serializers.IntegerField()
    note = serializers.CharField(required=False, allow_blank=True, default="")


class AdjudicationChangeSerializer(serializers.Serializer[Any]):
    topic = serializers.CharField()
    docid = serializers.CharField()
    old_grade = serializers.IntegerField(allow_null=True, help_text="null: the first decision")
    new_grade = serializers.IntegerField()
    note = serializers.CharField(help_text="The reason given.")
    decided_by = serializers.CharField()
    decided_at = serializers.DateTimeField()


class AdjudicationResultSerializer(AdjudicationSerializer):
    history = AdjudicationChangeSerializer(many=True, help_text="Every decision on the item.")


class AdjudicationHistorySerializer(serializers.Serializer[Any]):
    count = serializers.IntegerField()
    results = AdjudicationChangeSerializer(many=True)


class AdjudicationView(APIView):
    permission_classes = [IsAdmin]

    @extend_schema(
        responses={200: AdjudicationHistorySerializer},
        parameters=[
            OpenApiParameter("topic", str, description="only the decisions of this topic"),
            OpenApiParameter("docid", str, description="only the decisions of this document"),
        ],
        description="The history of final grades set by admins, oldest first: every decision "
        "with the old and new grade, the reason, who and when.",
    )
    def get(self, request: Request, campaign_id: int) -> Response:
        campaign = _campaign(request, campaign_id)
        rows = decisions(
            campaign,
            qid=query_text(request.query_params, "topic"),
            docid=query_text(request.query_params, "docid", max_length=1024),
        )
        return Response(AdjudicationHistorySerializer({"count": len(rows), "results": rows}).data)

    @extend_schema(
        request=AdjudicationSerializer,
        responses={201: AdjudicationResultSerializer},
        description="Set the final grade of an item (replacing an earlier one); the answer "
        "carries the item's history of decisions.",
    )
    def post(self, request: Request, campaign_id: int) -> Response:
        campaign = _campaign(request, campaign_id)
        ser = AdjudicationSerializer(data=request.data)
        ser.is_valid(raise_exception=True)
        v = ser.validated_data
        qrels_services.adjudicate(
            campaign=campaign,
            qid=v["topic"],
            docid=v["docid"],
            grade=v["grade"],
            note=v["note"],
            decided_by=request.user,
        )
        history = decisions(campaign, qid=v["topic"], docid=v["docid"])
        return Response(
            AdjudicationResultSerializer({**v, "history": history}).data,
            status=status.HTTP_201_CREATED,
        )


# a publish answers the qrels version and its open items
PUBLISHED = {
    "allOf": [{"$ref": "#/components/schemas/QrelsVersion"}, ref(PublishExtras)],
}


class PublishView(APIView):
    permission_classes = [IsAdmin]

    @extend_schema(
        request=NoteSerializer,
        responses={201: PUBLISHED, 200: PUBLISHED},
        description="Publish the judgments as the next qrels version (200 with the latest "
        "version when nothing changed). Open items do not stop it: `open_items` counts the "
        "pooled slots still unjudged when it was published (first_slots, overlap_slots, "
        "needs_another_assessor, waiting_text), how many of their documents the version holds "
        "(documents_in_version: judged already through another slot, the open one would add "
        "a second opinion) and leaves out (documents_not_in_version), and lists the first "
        "POOLJUDGE_OPEN_ITEMS_LISTED of them, each with `in_version` (`truncated` when there "
        "are more); `warning` and `sentence` say it in words (empty when nothing is open).",
    )
    def post(self, request: Request, campaign_id: int) -> Response:
        campaign = _campaign(request, campaign_id)
        note = note_of(request.data)  # a body of `true`, `[]` or `"x"` is a 400
        open_ = planning.open_items(campaign)
        version, created = qrels_published(
            campaign=campaign,
            note=note,
            created_by=account(request.user),
        )
        warning = f"published with {planning.open_items_summary(open_)}" if open_["count"] else ""
        return Response(
            {**QrelsVersionSerializer(version).data, "open_items": open_, "warning": warning},
            status=status.HTTP_201_CREATED if created else status.HTTP_200_OK,
        )


class QrelsDiffView(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(
        responses={200: ref(QrelsDiffAnswer)},
        parameters=[
            OpenApiParameter(
                "against", int, required=True, description="the other version's number"
            )
        ],
    )
    def get(self, request: Request, pk: int) -> Response:
        version = get_object_or_404(QrelsVersion.objects.visible_to(request.user), pk=pk)
        against = query_int(
            request.query_params, "against", minimum=1, maximum=MAX_ID, what="a version number"
        )
        if against is None:
            raise serializers.ValidationError({"against": "the other version's number"})
        other = get_object_or_404(
            QrelsVersion.objects.visible_to(request.user),
            campaign=version.campaign,
            number=against,
        )
        return Response(qrels_services.qrels_diff(version=version, against=other))
