"""Answer runs (TREC RAG's generation output, ``metrics.io.answers``) in a campaign: read whole
from a submitted file, their ranked references stored as the run's ranked lists (so they are
pooled, judged and evaluated as any run), their answers kept beside as ``RunAnswer`` rows, and
read back with each citation as the segment id it cites."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from django.conf import settings

from judging.campaigns.models import Run as RunModel
from judging.campaigns.models import RunAnswer
from judging.core import uploads
from metrics.io import Run
from metrics.io.answers import AnswerRun, looks_like_answer_run, read_answer_run, references_run

__all__ = ["answer_rows", "answer_run_read", "answers_ranked", "run_answers"]


def answer_run_read(upload: uploads.Upload) -> AnswerRun | None:
    """An answer run (TREC RAG's generation output, ``metrics.io.answers``) read whole, or None
    when the file is another kind of run."""
    if not looks_like_answer_run(upload.data):
        return None
    with uploads.reading("the answer run"):
        return read_answer_run(
            upload.data,
            uploads.record_limits(),
            source=upload.name,
            max_problems=settings.POOLJUDGE_UPLOADS.max_problems,
            max_references=settings.POOLJUDGE_UPLOADS.max_answer_references,
            max_sentences=settings.POOLJUDGE_UPLOADS.max_answer_sentences,
            max_sentence_chars=settings.POOLJUDGE_UPLOADS.max_answer_sentence_chars,
        )


def answers_ranked(answers: AnswerRun) -> Run:
    """An answer run's references as its ranked run, with the reader's warnings."""
    return dataclasses.replace(references_run(answers), warnings=answers.warnings)


def answer_rows(answers: AnswerRun, topic_ids: Mapping[str, int]) -> list[RunAnswer]:
    """The answers of the campaign's topics, as rows (their run set when stored)."""
    return [
        RunAnswer(
            topic_id=topic_ids[a.topic_id],
            sentences=[{"text": s.text, "citations": list(s.citations)} for s in a.sentences],
            references=list(a.references),
            response_length=a.response_length,
            words=a.words,
        )
        for a in answers.answers
        if a.topic_id in topic_ids
    ]


def run_answers(run: RunModel) -> list[dict[str, Any]]:
    """The run's answers by topic, each sentence with its citations as the segment ids they
    cite (empty for a run of rankings only)."""
    rows = RunAnswer.objects.filter(run=run).select_related("topic").order_by("topic__qid")
    return [
        {
            "topic": a.topic.qid,
            "references": list(a.references),
            "response_length": a.response_length,
            "words": a.words,
            "sentences": [
                {
                    "text": s["text"],
                    "citations": [a.references[i] for i in s["citations"]],
                }
                for s in a.sentences
            ],
        }
        for a in rows
    ]
