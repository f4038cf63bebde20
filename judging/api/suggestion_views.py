"""API of the suggestions shown to assessors and their anchoring report: admins set them up;
researchers and admins read the setting and the report; annotators are refused (they meet a
suggestion only as a grade on the item they judge, ``LeaseSerializer.suggestion``)."""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.permissions import SAFE_METHODS, BasePermission
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from judging.api.result_schemas import ref
from judging.autojudge import suggestions
from judging.autojudge.answers import SuggestionsAnswer
from judging.campaigns.models import Campaign
from judging.core.params import MAX_ID, query_int
from judging.core.roles import is_admin, is_researcher


class ReadResearcherWriteAdmin(BasePermission):
    message = "only researchers and admins read suggestions; only admins set them up"

    def has_permission(self, request: Request, view: Any) -> bool:
        if request.method in SAFE_METHODS:
            return is_researcher(request.user)
        return is_admin(request.user)


class JudgeRefSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    name = serializers.CharField()
    version = serializers.IntegerField()
    kind = serializers.CharField()
    model = serializers.CharField()


class SuggestionSettingSerializer(serializers.Serializer[Any]):
    enabled = serializers.BooleanField()
    judge = JudgeRefSerializer()
    hidden_share = serializers.FloatField()
    updated_at = serializers.DateTimeField()


class SuggestionsInSerializer(serializers.Serializer[Any]):
    judge = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=MAX_ID,
        help_text="The judge version (its id) whose grades are suggested; not needed to turn "
        "suggestions off.",
    )
    hidden_share = serializers.FloatField(
        required=False,
        default=0.2,
        min_value=0.0,
        max_value=1.0,
        help_text="Share of the slots whose suggestion stays hidden until the assessor commits.",
    )
    enabled = serializers.BooleanField(required=False, default=True)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs.get("enabled", True) and attrs.get("judge") is None:
            raise serializers.ValidationError({"judge": "which judge's grades to suggest"})
        return attrs


class SuggestionsOutSerializer(serializers.Serializer[Any]):
    setting = SuggestionSettingSerializer(allow_null=True)


class SuggestionsView(APIView):
    permission_classes = [ReadResearcherWriteAdmin]

    def _campaign(self, request: Request, campaign_id: int) -> Campaign:
        return get_object_or_404(Campaign.objects.visible_to(request.user), pk=campaign_id)

    @extend_schema(
        responses={200: ref(SuggestionsAnswer)},
        parameters=[
            OpenApiParameter(
                "judge",
                int,
                description="compare the assessors' grades with this judge version's labels "
                "instead of the grades recorded as suggested",
            )
        ],
        description="The campaign's suggestion setting (which judge version, the hidden "
        "share, on or off; null when never set up) and the anchoring report: human-automatic "
        "agreement (n, exact, within one grade, linear kappa) when the automatic grade was "
        "shown before judging and when it stayed hidden until committed, and the difference "
        "shown - hidden with 95% intervals (Wald for exact agreement, percentile bootstrap "
        "for kappa). Gold items are left out. Researchers and admins.",
    )
    def get(self, request: Request, campaign_id: int) -> Response:
        campaign = self._campaign(request, campaign_id)
        judge_id = query_int(
            request.query_params, "judge", minimum=1, maximum=MAX_ID, what="a judge's id"
        )
        judge = suggestions.report_judge(campaign, judge_id)
        return Response(
            {
                "setting": suggestions.suggestion_setting(campaign),
                "report": suggestions.anchoring_report(campaign, judge),
            }
        )

    @extend_schema(
        request=SuggestionsInSerializer,
        responses={200: SuggestionsOutSerializer},
        description="Set up suggestions (admins): show `judge`'s grades to the campaign's "
        "assessors, a `hidden_share` of the slots (chosen by a hash of the slot) hidden until "
        'the assessor commits. `{"enabled": false}` turns them off and keeps the rest.',
    )
    def put(self, request: Request, campaign_id: int) -> Response:
        campaign = self._campaign(request, campaign_id)
        ser = SuggestionsInSerializer(data=request.data)
        ser.is_valid(raise_exception=True)
        v = ser.validated_data
        if v.get("judge") is None:
            suggestions.suggestions_off(campaign)
        else:
            suggestions.suggestions_configure(
                campaign=campaign,
                judge=v["judge"],
                hidden_share=v["hidden_share"],
                enabled=v["enabled"],
                by=request.user,
            )
        return Response({"setting": suggestions.suggestion_setting(campaign)})
