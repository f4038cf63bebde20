"""Relevance judgments as published, immutable qrels versions."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models

from judging.campaigns.models import Campaign, Topic


class QrelsSource(models.TextChoices):
    IMPORTED = "imported", "Imported from a file"
    PUBLISHED = "published", "Published from judgments"


class QrelsVersionQuerySet(models.QuerySet["QrelsVersion"]):
    def visible_to(self, user: Any) -> QrelsVersionQuerySet:
        """Qrels are results: admins and researchers read them, annotators do not."""
        from judging.core.roles import is_admin, is_researcher

        if is_admin(user) or is_researcher(user):
            return self.all()
        return self.none()


class QrelsVersion(models.Model):
    """An immutable snapshot of judgments. ``number`` counts up per campaign from 1."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="qrels_versions")
    number = models.PositiveIntegerField()
    source = models.CharField(max_length=20, choices=QrelsSource.choices)
    content_hash = models.CharField(
        max_length=64, help_text="SHA-256 of the canonical TREC export (sorted lines)."
    )
    note = models.TextField(blank=True)
    num_judgments = models.PositiveIntegerField(default=0)
    num_relevant = models.PositiveIntegerField(default=0)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    objects = QrelsVersionQuerySet.as_manager()

    class Meta:
        ordering = ["campaign", "number"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "number"], name="qrels_number_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.campaign} qrels v{self.number}"


class QrelsEntry(models.Model):
    version = models.ForeignKey(QrelsVersion, on_delete=models.CASCADE, related_name="entries")
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="+")
    docid = models.CharField(max_length=255)
    grade = models.IntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["version", "topic", "docid"], name="qrels_entry_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.topic_id} {self.docid} {self.grade}"
