"""What labels answer items (``autojudge.answer_labels``) for a judge version: the embedding
judge and the openai-compatible chat judge, registered by judge kind. Built at task time from
the judge version and the settings, as the document labellers are (``autojudge.labellers``).

**Embedding** (all-MiniLM-L6-v2, ``autojudge.embedding``; nothing downloads). The score is a
cosine of unit vectors:

- nugget assignment: ``max_s cos(nugget, s)`` over the answer's sentences ``s``;
- citation support: ``max_u cos(sentence, u)`` over the cited segment's sentences
  (``metrics.passages.sentences``) and the segment as a whole.

An empty claim or no evidence scores 0.0, the cosine of unrelated texts. The grade is 2 when
the score is at least ``t_support``, 1 when at least ``t_partial``, else 0; both are the judge
version's parameters, defaulting to :data:`T_PARTIAL` = 0.5 and :data:`T_SUPPORT` = 0.75. The
defaults are not fitted to people: on hand-written pairs the model scores a sentence restating a
fact 0.75-0.92, a related sentence that does not state it 0.35-0.72 and an unrelated one below
0.2. The raw score is stored with each label (``AutoLabel.score``): the corrected estimates
calibrate on it, not on these cuts.

**Chat** (``autojudge.llm.ChatJudge``: its retries, rate limit, token accounting and masking of
keys): one request per item with ``autojudge.answer_prompt``'s prompt for the item's kind, the
reply read strictly (``answer_prompt.parse_label``); a malformed or refused reply, or an endpoint
error, is a label without a grade with its status, as for documents.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from judging.autojudge.answer_labels import AnswerItem, register_answer_labeller
from judging.autojudge.models import Judge, JudgeKind, LabelStatus
from judging.autojudge.services import Label
from metrics.passages.sentences import sentence_spans

T_PARTIAL = 0.5
T_SUPPORT = 0.75
BATCH = 256  # items whose texts are encoded together


def answer_thresholds(params: Mapping[str, Any]) -> tuple[float, float]:
    """``(t_partial, t_support)`` of an embedding judge's parameters (defaults above);
    ``ValueError`` unless both are numbers in [-1, 1] with ``t_partial <= t_support``."""
    values = []
    for name, default in (("t_partial", T_PARTIAL), ("t_support", T_SUPPORT)):
        value = params.get(name, default)
        if isinstance(value, bool) or not isinstance(value, int | float) or not -1 <= value <= 1:
            raise ValueError(f"{name} must be a number between -1 and 1, not {value!r}")
        values.append(float(value))
    if values[0] > values[1]:
        raise ValueError(f"t_partial ({values[0]:g}) must not exceed t_support ({values[1]:g})")
    return values[0], values[1]


def grade_of(score: float, t_partial: float, t_support: float) -> int:
    """2 at or above ``t_support``, 1 at or above ``t_partial``, else 0."""
    return 2 if score >= t_support else 1 if score >= t_partial else 0


def evidence_units(item: AnswerItem) -> list[str]:
    """What a claim is compared with: the answer's sentences (assignment), or the segment's
    sentences and the segment whole (support)."""
    if item.kind == "citation_support":
        text = item.evidence[0] if item.evidence else ""
        found = [" ".join(text[a:b].split()) for a, b in sentence_spans(text)]
        return [s for s in dict.fromkeys([*found, text]) if s.strip()]
    return [s for s in item.evidence if s.strip()]


class EmbeddingAnswerLabeller:
    """Grades answer items by cosine similarity under all-MiniLM-L6-v2 (module docstring).
    Needs the ``autojudge`` extra; ``scorer`` replaces the model (anything with
    ``EmbeddingScorer.encode``)."""

    def __init__(self, judge: Judge, scorer: Any = None) -> None:
        from judging.autojudge.embedding import EmbeddingScorer

        self.t_partial, self.t_support = answer_thresholds(judge.params)
        self.scorer = scorer or EmbeddingScorer(max_chars=int(judge.params.get("max_chars", 4000)))

    def scores(self, items: Sequence[AnswerItem]) -> list[float]:
        """The score of each item (module docstring)."""
        out: list[float] = []
        for start in range(0, len(items), BATCH):
            part = items[start : start + BATCH]
            units = [evidence_units(x) for x in part]
            texts = list(dict.fromkeys([x.claim for x in part] + [u for us in units for u in us]))
            row = {t: i for i, t in enumerate(texts)}
            vectors = self.scorer.encode(texts)
            for item, found in zip(part, units, strict=True):
                if not item.claim.strip() or not found:
                    out.append(0.0)
                    continue
                claim = vectors[row[item.claim]]
                cosines = vectors[[row[u] for u in found]] @ claim
                out.append(float(np.clip(cosines.max(), -1.0, 1.0)))
        return out

    def label_items(self, items: Sequence[AnswerItem]) -> Iterator[Label]:
        for item, score in zip(items, self.scores(items), strict=True):
            grade = grade_of(score, self.t_partial, self.t_support)
            yield Label(item.qid, item.key, grade, score=score)


class ChatAnswerLabeller:
    """Grades answer items with a chat-completions endpoint, one request per item, with the
    prompt of the item's kind (``answer_prompt``); replies are read strictly."""

    def __init__(self, judge: Judge) -> None:
        from judging.autojudge.labellers import ChatLabeller

        document = ChatLabeller(judge)  # the judge version's endpoint, model, prices, limits
        self.config = document.client.config
        self.workers = document.workers
        self.max_chars = int(judge.params.get("max_chars", 4000))
        self._clients: dict[str, Any] = {}

    def client(self, kind: str) -> Any:
        """A ``ChatJudge`` for one kind. It fills a template of two slots, ``{query}`` and
        ``{passage}``; these prompts have more, so the whole message is rendered by
        ``answer_prompt`` and sent in the first slot, the second left empty."""
        from judging.autojudge.answer_prompt import ASSIGNMENT_SYSTEM, SUPPORT_SYSTEM
        from judging.autojudge.llm import ChatJudge

        if kind not in self._clients:
            system = ASSIGNMENT_SYSTEM if kind == "nugget_assignment" else SUPPORT_SYSTEM
            self._clients[kind] = ChatJudge(
                self.config,
                scale=(0, 1, 2),
                template="{query}{passage}",
                system_message=system,
            )
        return self._clients[kind]

    def message(self, item: AnswerItem) -> str:
        from judging.autojudge.answer_prompt import assignment_message, support_message

        if item.kind == "nugget_assignment":
            return assignment_message(item.query, item.claim, item.evidence)
        return support_message(item.query, item.claim, item.evidence[0], self.max_chars)

    def label_items(self, items: Sequence[AnswerItem]) -> Iterator[Label]:
        from judging.autojudge.answer_prompt import parse_label

        for kind in dict.fromkeys(x.kind for x in items):
            mine = [((x.qid, x.key), self.message(x), "") for x in items if x.kind == kind]
            for key, verdict in self.client(kind).judge_many(mine, workers=self.workers):
                qid, unit = key
                grade, status, said = None, verdict.status, verdict.error
                if verdict.status in ("ok", "malformed") and verdict.answer:
                    parsed = parse_label(kind, verdict.answer)
                    grade, said = parsed.grade, parsed.problem
                    status = (
                        LabelStatus.OK
                        if grade is not None
                        else LabelStatus.REFUSED
                        if parsed.refused
                        else LabelStatus.MALFORMED
                    )
                yield Label(
                    qid,
                    unit,
                    grade,
                    status=status,
                    score=float(grade) if grade is not None else None,
                    answer=verdict.answer if status != LabelStatus.ERROR else said,
                    prompt_tokens=verdict.prompt_tokens,
                    completion_tokens=verdict.completion_tokens,
                    cost=verdict.cost,
                )


def register() -> None:
    register_answer_labeller(JudgeKind.EMBEDDING, EmbeddingAnswerLabeller)
    register_answer_labeller(JudgeKind.OPENAI, ChatAnswerLabeller)
