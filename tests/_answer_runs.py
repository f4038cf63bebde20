"""Answer runs submitted as a participant would: a TREC RAG answer file through the API."""

from __future__ import annotations

import json
from typing import Any

from django.core.files.uploadedfile import SimpleUploadedFile


def submit_answers(client: Any, campaign: Any, lines: list[dict[str, Any]]) -> None:
    """Submit ``lines`` (one run's answers, one topic a line) as a file; it must be stored."""
    body = "".join(json.dumps(x) + "\n" for x in lines).encode()
    made = client.post(
        f"/api/v1/campaigns/{campaign.pk}/runs/",
        {"file": SimpleUploadedFile("answers.jsonl", body)},
        format="multipart",
    )
    assert made.status_code == 201, made.content
