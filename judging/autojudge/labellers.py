"""What grades pairs for a judge run: the openai-compatible client (``llm.ChatJudge``) and the
embedding judge (``embedding.EmbeddingScorer`` with calibrated thresholds). Each is built at
task time from the judge version and the settings, so an endpoint's URL and key live only in
the worker's memory: never in a task's arguments, the database or a message."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Protocol, cast

from django.conf import settings

from judging.autojudge.models import Judge, JudgeKind, LabelStatus
from judging.autojudge.services import Label, endpoint_key, register_labeller
from judging.autojudge.texts import document_texts, topic_texts


class ChatLabeller:
    """Grades pairs with a chat-completions endpoint and the judge's prompt (UMBRELA's by
    default); a pair whose document has no text is not sent (an error label says why)."""

    def __init__(self, judge: Judge) -> None:
        from judging.autojudge.llm import ChatJudge, EndpointConfig
        from judging.autojudge.prompts import check_mapping

        params = judge.params
        endpoint = settings.POOLJUDGE_AUTOJUDGE.llm_endpoints.get(params.get("endpoint", ""))
        if endpoint is None:
            raise RuntimeError(f"endpoint {params.get('endpoint')!r} is not configured any more")
        rpm = settings.POOLJUDGE_AUTOJUDGE.llm_requests_per_minute
        config = EndpointConfig(
            base_url=endpoint["base_url"],
            api_key=endpoint_key(endpoint),
            model=judge.model,
            timeout_seconds=float(settings.POOLJUDGE_AUTOJUDGE.llm_timeout_seconds),
            max_retries=settings.POOLJUDGE_AUTOJUDGE.llm_max_retries,
            requests_per_minute=float(rpm) if rpm else None,
            price_prompt_per_1k=float(params.get("price_prompt_per_1k", 0.0)),
            price_completion_per_1k=float(params.get("price_completion_per_1k", 0.0)),
            max_tokens=int(params.get("max_tokens", 100)),
        )
        scale = judge.campaign.grade_values()
        mapping = params.get("mapping")
        self.judge = judge
        self.workers = int(params.get("workers", 1))
        self.client = ChatJudge(
            config,
            scale=scale,
            template=judge.prompt,
            mapping=check_mapping({int(k): int(v) for k, v in mapping.items()}, scale)
            if mapping
            else None,
        )

    def label(self, pairs: Sequence[tuple[str, str]]) -> Iterator[Label]:
        yield from label_pool_pairs(self, self.judge, pairs)

    def label_texts(self, items: Sequence[tuple[tuple[str, str], str, str]]) -> Iterator[Label]:
        """Grade ``((qid, docid), query, passage)`` as given (the robustness probes send
        altered passages through this)."""
        for key, verdict in self.client.judge_many(items, workers=self.workers):
            q, d = cast(tuple[str, str], key)  # the keys sent above
            yield Label(
                q,
                d,
                verdict.grade if verdict.status == "ok" else None,
                status=verdict.status,
                score=float(verdict.raw_grade) if verdict.raw_grade is not None else None,
                answer=verdict.answer if verdict.status != "error" else verdict.error,
                prompt_tokens=verdict.prompt_tokens,
                completion_tokens=verdict.completion_tokens,
                cost=verdict.cost,
            )


class TextLabeller(Protocol):
    def label_texts(self, items: Sequence[tuple[tuple[str, str], str, str]]) -> Iterator[Label]: ...


def label_pool_pairs(
    labeller: TextLabeller, judge: Judge, pairs: Sequence[tuple[str, str]]
) -> Iterator[Label]:
    """Grade pool pairs with their stored texts; a document without text is not sent (an
    error label says why, and the next run asks again once its text is loaded)."""
    queries = topic_texts(judge, (q for q, _ in pairs))
    texts = document_texts(judge, (d for _, d in pairs))
    sendable = []
    for q, d in pairs:
        if texts.get(d, "").strip():
            sendable.append(((q, d), queries[q], texts[d]))
        else:
            yield Label(q, d, None, status=LabelStatus.ERROR, answer="no text for document")
    yield from labeller.label_texts(sendable)


class EmbeddingLabeller:
    """Grades pairs by the cosine similarity of topic and document under all-MiniLM-L6-v2,
    cut into the campaign's grades by the thresholds calibrated on a human-judged sample
    (``autojudge.services.embedding_calibrate``). Needs the ``autojudge`` extra."""

    def __init__(self, judge: Judge, scorer: Any = None) -> None:
        from judging.autojudge.embedding import EmbeddingScorer

        thresholds = judge.params.get("thresholds")
        if not thresholds:
            raise RuntimeError(
                f"judge {judge} has no thresholds: calibrate it on a human-judged sample first"
            )
        self.judge = judge
        self.thresholds = [float(t) for t in thresholds]
        self.scale = judge.campaign.grade_values()
        self.scorer = scorer or EmbeddingScorer(max_chars=int(judge.params.get("max_chars", 4000)))

    def label(self, pairs: Sequence[tuple[str, str]]) -> Iterator[Label]:
        yield from label_pool_pairs(self, self.judge, pairs)

    def label_texts(self, items: Sequence[tuple[tuple[str, str], str, str]]) -> Iterator[Label]:
        from metrics.judges.calibration import grades_from_thresholds

        batch = 256
        for start in range(0, len(items), batch):
            part = items[start : start + batch]
            topics = {f"t{i}": q for i, (_, q, _) in enumerate(part)}
            docs = {f"d{i}": p for i, (_, _, p) in enumerate(part)}
            scores = self.scorer.similarities(
                topics, docs, [(f"t{i}", f"d{i}") for i in range(len(part))]
            )
            grades = grades_from_thresholds(scores, self.thresholds, self.scale)
            for ((q, d), _, _), score, grade in zip(part, scores, grades, strict=True):
                yield Label(q, d, int(grade), score=float(score))


def register() -> None:
    from judging.autojudge import answer_labellers, juries

    register_labeller(JudgeKind.OPENAI, ChatLabeller)
    register_labeller(JudgeKind.EMBEDDING, EmbeddingLabeller)
    juries.register()  # a jury combines its members' labels
    answer_labellers.register()  # the same kinds over answer items
