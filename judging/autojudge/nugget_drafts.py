"""A nugget bank drafted from each topic's judged relevant segments in a qrels version (the
segments graded at least the campaign's relevance threshold: ``nugget_selectors.
relevant_segments``), stored as a new draft through ``assessments.nuggets.bank_create``.

**extracted** (:func:`extracted_draft`), by the embedding judge's model (all-MiniLM-L6-v2,
``autojudge.embedding``): each segment's text is cut into sentences by
``metrics.passages.sentences`` (sentences of fewer than ``min_words`` words, or longer than
``POOLJUDGE_MAX_NUGGET_CHARS``, are left out; one sentence found in several segments is one
candidate naming all of them); the candidates are ranked by their cosine with the topic's text
(its title, else its description); walking down the ranking, a sentence whose cosine with one
already kept is at least ``duplicate`` is dropped as a near-duplicate (its segments added to
the kept one's sources), until ``most`` are kept; the ``vital`` most similar are vital, the rest
okay. Nothing is generated: every nugget is a sentence of a relevant segment, for the assessors
to cut down on the editing screen.

**judge** (:func:`judge_draft`), by an openai-compatible automatic judge version (its model and
endpoint; the prompt and the strict reading of the reply are ``autojudge.nugget_prompt``'s):
one request a topic, through ``autojudge.llm.ChatJudge`` (its retries, rate limit and masking
of keys). A topic whose reply cannot be read, or whose request failed, gets no nugget and is
reported with the reason; it never stops the others. The client keeps at most 2,000 characters
of a reply (``llm.ANSWER_CHARS``), so a longer one is reported as cut: ask for fewer nuggets.

Both are synchronous (the commands, the API's create): a topic without a relevant segment is
skipped and reported; when no topic gets a nugget, nothing is stored (``InvalidInput`` naming
each topic and why).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt
from django.conf import settings

from judging.assessments.models import NuggetBank, QrelsVersion
from judging.assessments.nugget_selectors import bank_topics, relevant_segments
from judging.assessments.nuggets import bank_create, bank_import
from judging.assessments.selectors import qrels_version
from judging.autojudge.models import Judge, JudgeKind
from judging.autojudge.nugget_prompt import MAX_PASSAGES, SYSTEM, parse_nuggets, passages, template
from judging.campaigns.models import Campaign, Topic
from judging.core.errors import Conflict, InvalidInput
from judging.core.roles import UserLike
from metrics.io.nuggets import DraftNugget
from metrics.passages.sentences import sentence_spans
from metrics.problems import Problem

EXTRACT_MOST = 10  # sentences kept a topic
EXTRACT_VITAL = 3  # the most similar of them, marked vital
JUDGE_MOST = 15  # nuggets asked for a topic (a reply of more than 2,000 characters is cut)


class Encoder(Protocol):
    """What extraction needs of a model: unit-length embeddings, one row per text."""

    def encode(self, texts: Sequence[str]) -> npt.NDArray[np.float64]: ...


@dataclass(frozen=True)
class DraftReport:
    """A drafted bank, the nuggets drafted per topic, and the topics left without any, why."""

    bank: NuggetBank
    drafted: dict[str, int]
    skipped: dict[str, str] = field(default_factory=dict)


def _query(topic: Topic) -> str:
    return topic.title or topic.description or topic.qid


def _check(campaign: Campaign, qrels: QrelsVersion) -> None:
    if qrels.campaign_id != campaign.pk:
        raise InvalidInput(
            "the qrels version is another campaign's",
            [Problem.at("qrels", f"qrels version {qrels.pk} is not one of {campaign.name!r}")],
        )


def _store(
    campaign: Campaign,
    qrels: QrelsVersion,
    by: UserLike | None,
    source: str,
    nuggets: dict[str, list[DraftNugget]],
    skipped: dict[str, str],
    note: str,
) -> DraftReport:
    if not nuggets:
        raise InvalidInput(
            "no topic got a nugget; nothing was stored",
            [Problem.at(q, why) for q, why in sorted(skipped.items())]
            or [Problem.at("topics", "the campaign has no topic")],
        )
    bank = bank_create(
        campaign=campaign, by=by, source=source, nuggets=nuggets, qrels=qrels, note=note
    )
    return DraftReport(bank, {q: len(ns) for q, ns in nuggets.items()}, skipped)


# --- extraction ---------------------------------------------------------------------------


@dataclass
class _Candidate:
    text: str
    sources: list[str]


def _candidates(segments: Sequence[Any], min_words: int, max_chars: int) -> list[_Candidate]:
    """The segments' sentences, each once (its segments in order)."""
    found: dict[str, _Candidate] = {}
    for s in segments:
        for start, end in sentence_spans(s.text):
            text = " ".join(s.text[start:end].split())
            if len(text.split()) < min_words or len(text) > max_chars:
                continue
            key = text.casefold()
            if key in found:
                if s.id not in found[key].sources:
                    found[key].sources.append(s.id)
            else:
                found[key] = _Candidate(text, [s.id])
    return list(found.values())


def select_sentences(
    topic: npt.NDArray[np.float64],
    sentences: npt.NDArray[np.float64],
    *,
    most: int,
    duplicate: float,
) -> list[tuple[int, list[int]]]:
    """Which sentences to keep: ``(index, indices of the near-duplicates it absorbed)``, most
    similar to ``topic`` first. ``topic`` and the rows of ``sentences`` are unit vectors; a
    sentence whose cosine with a kept one is at least ``duplicate`` is absorbed by the first
    such kept one; at most ``most`` are kept (ties in similarity: the earlier sentence first)."""
    similarity = sentences @ topic
    order = sorted(range(len(similarity)), key=lambda i: (-similarity[i], i))
    kept: list[tuple[int, list[int]]] = []
    for i in order:
        twin = next((k for k in kept if float(sentences[i] @ sentences[k[0]]) >= duplicate), None)
        if twin is not None:
            twin[1].append(i)
        elif len(kept) < most:
            kept.append((i, []))
    return kept


def extracted_draft(
    *,
    campaign: Campaign,
    qrels: QrelsVersion,
    by: UserLike | None,
    note: str = "",
    most: int = EXTRACT_MOST,
    vital: int = EXTRACT_VITAL,
    duplicate: float = 0.9,
    min_words: int = 4,
    encoder: Encoder | None = None,
) -> DraftReport:
    """A draft of the topics' relevant sentences (module docstring); ``encoder`` defaults to
    the embedding judge's model (``Conflict`` when its extra is not installed)."""
    _check(campaign, qrels)
    most_allowed, max_chars = (
        settings.POOLJUDGE_JUDGING.max_nuggets_per_topic,
        settings.POOLJUDGE_JUDGING.max_nugget_chars,
    )
    problems = [
        Problem.at(name, f"must be between {low} and {high}, not {value}")
        for name, value, low, high in (
            ("most", most, 1, most_allowed),
            ("vital", vital, 0, most_allowed),
            ("duplicate", duplicate, 0, 1),
            ("min_words", min_words, 1, 100),
        )
        if not low <= value <= high
    ]
    if problems:
        raise InvalidInput("the extraction's parameters are not valid", problems)
    model = encoder or _embedding_model()
    nuggets: dict[str, list[DraftNugget]] = {}
    skipped: dict[str, str] = {}
    for topic in campaign.topics.order_by("qid"):
        segments = relevant_segments(qrels, topic)
        found = _candidates(segments, min_words, max_chars)
        if not found:
            why = "no sentence in its relevant segments" if segments else "no relevant segment"
            skipped[topic.qid] = f"{why} in qrels v{qrels.number}"
            continue
        vectors = model.encode([_query(topic), *(c.text for c in found)])
        kept = select_sentences(vectors[0], vectors[1:], most=most, duplicate=duplicate)
        nuggets[topic.qid] = [
            DraftNugget(
                found[i].text,
                "vital" if rank < vital else "okay",
                tuple(dict.fromkeys(s for j in [i, *twins] for s in found[j].sources)),
            )
            for rank, (i, twins) in enumerate(kept)
        ]
    said = note or (
        f"extracted from the relevant segments of qrels v{qrels.number}: the {most} sentences "
        f"most similar to the topic, the top {vital} vital, near-duplicates (cosine >= "
        f"{duplicate:g}) dropped"
    )
    return _store(campaign, qrels, by, "extracted", nuggets, skipped, said)


def _embedding_model() -> Encoder:
    from judging.autojudge.embedding import EmbeddingScorer, EmbeddingUnavailable

    try:
        return EmbeddingScorer()
    except EmbeddingUnavailable as exc:
        raise Conflict(str(exc)) from None


# --- an automatic judge -------------------------------------------------------------------


class Asker(Protocol):
    """What drafting needs of a chat client: ``llm.ChatJudge.judge``'s signature."""

    def judge(self, query: str, passage: str) -> Any: ...


def chat_client(judge: Judge, most: int) -> Asker:
    """A chat client on the judge version's endpoint and model, asking the nugget prompt."""
    from judging.autojudge.labellers import ChatLabeller
    from judging.autojudge.llm import ChatJudge

    try:
        config = ChatLabeller(judge).client.config
    except RuntimeError as exc:  # the endpoint is not configured any more
        raise Conflict(f"judge {judge}: {exc}") from None
    # a reply of `most` nuggets of a dozen words and their passages: about 25 tokens each
    config = dataclasses.replace(config, max_tokens=max(config.max_tokens, 40 * most))
    return ChatJudge(config, scale=(0, 1, 2, 3), template=template(most), system_message=SYSTEM)


def reply_problem(verdict: Any) -> str | None:
    """Why a verdict carries no reply to read, or None."""
    from judging.autojudge.llm import ANSWER_CHARS

    if verdict.status == "error":
        return f"the endpoint failed: {verdict.error}"
    if verdict.status == "refused":
        return f"the model declined ({verdict.error})"
    if not verdict.answer:
        return verdict.error or "the reply is empty"
    if len(verdict.answer) >= ANSWER_CHARS and verdict.answer.endswith("…"):
        return f"the reply is longer than {ANSWER_CHARS:,} characters and was cut: ask for fewer"
    return None


def judge_draft(
    *,
    judge: Judge,
    qrels: QrelsVersion,
    by: UserLike | None,
    note: str = "",
    most: int = JUDGE_MOST,
    client: Asker | None = None,
) -> DraftReport:
    """A draft written by the openai-compatible judge version ``judge``, one request per topic
    with relevant segments (module docstring); a bad reply or a failed request is reported for
    its topic. ``client`` replaces the endpoint (tests)."""
    campaign = judge.campaign
    _check(campaign, qrels)
    if judge.kind != JudgeKind.OPENAI:
        raise InvalidInput(
            "nuggets are drafted by an openai-compatible judge",
            [Problem.at("judge", f"judge {judge} is of kind {judge.kind!r}")],
        )
    most_allowed, max_chars = (
        settings.POOLJUDGE_JUDGING.max_nuggets_per_topic,
        settings.POOLJUDGE_JUDGING.max_nugget_chars,
    )
    if not 1 <= most <= most_allowed:
        raise InvalidInput(
            "the number of nuggets asked for is not valid",
            [Problem.at("most", f"must be between 1 and {most_allowed}, not {most}")],
        )
    ask = client or chat_client(judge, most)
    nuggets: dict[str, list[DraftNugget]] = {}
    skipped: dict[str, str] = {}
    for topic in campaign.topics.order_by("qid"):
        segments = [s for s in relevant_segments(qrels, topic) if s.text.strip()][:MAX_PASSAGES]
        if not segments:
            skipped[topic.qid] = f"no relevant segment with text in qrels v{qrels.number}"
            continue
        verdict = ask.judge(_query(topic), passages([(s.title, s.text) for s in segments]))
        problem = reply_problem(verdict)
        if problem is not None:
            skipped[topic.qid] = problem
            continue
        ids = [s.id for s in segments]
        parsed = parse_nuggets(verdict.answer, ids, most=most, max_chars=max_chars)
        if parsed.problem:
            skipped[topic.qid] = parsed.problem
            continue
        nuggets[topic.qid] = list(parsed.nuggets)
    said = note or (
        f"written by judge {judge} ({judge.model}) from the relevant segments of qrels "
        f"v{qrels.number}" + (f"; {len(skipped)} topic(s) without nuggets" if skipped else "")
    )
    return _store(campaign, qrels, by, "judge", nuggets, skipped, said)


# --- one entry for the API and the pages ------------------------------------------------------


def draft_requested(
    *,
    campaign: Campaign,
    by: UserLike | None,
    source: str,
    qrels: int | None = None,
    based_on: int | None = None,
    judge: int | None = None,
    data: Any = None,
    file_name: str | None = None,
    note: str = "",
    most: int | None = None,
    vital: int | None = None,
) -> DraftReport:
    """A new draft of the campaign's bank by ``source``: ``imported`` (``data``, a nugget
    file), ``extracted`` (``most``, ``vital``), ``judge`` (the judge version ``judge``, by id;
    ``most``) or ``copied`` (the version numbered ``based_on``). ``qrels`` numbers the qrels
    version to draft from (default: the latest human one; a copy keeps its original's)."""

    def need(name: str, value: Any) -> Any:
        if value is None:
            raise InvalidInput(
                f"a draft by {source} needs {name}", [Problem.at(name, f"required for {source}")]
            )
        return value

    version = qrels_version(campaign, qrels)
    if qrels is not None and version is None:
        raise InvalidInput(
            "no such qrels version", [Problem.at("qrels", f"campaign has no qrels v{qrels}")]
        )
    if source in ("extracted", "judge") and version is None:
        raise InvalidInput(
            "nothing to draft from",
            [Problem.at("qrels", "the campaign has no qrels version: publish or import one")],
        )
    if source == "imported":
        need("file", data)
        bank = bank_import(
            campaign=campaign, by=by, data=data, source=file_name, qrels=version, note=note
        )
    elif source == "copied":
        number = int(need("based_on", based_on))
        original = NuggetBank.objects.filter(campaign=campaign, number=number).first()
        if original is None:
            raise InvalidInput(
                "no such nugget bank", [Problem.at("based_on", f"no nugget bank v{based_on}")]
            )
        bank = bank_create(
            campaign=campaign,
            by=by,
            source="copied",
            based_on=original,
            qrels=version if qrels is not None else None,
            note=note or f"a copy of v{original.number}",
        )
    elif source == "extracted":
        assert version is not None
        return extracted_draft(
            campaign=campaign,
            qrels=version,
            by=by,
            note=note,
            most=EXTRACT_MOST if most is None else most,
            vital=EXTRACT_VITAL if vital is None else vital,
        )
    elif source == "judge":
        assert version is not None
        found = Judge.objects.filter(campaign=campaign, pk=int(need("judge", judge))).first()
        if found is None:
            raise InvalidInput(
                "no such judge", [Problem.at("judge", f"campaign has no judge {judge}")]
            )
        most = JUDGE_MOST if most is None else most
        return judge_draft(judge=found, qrels=version, by=by, note=note, most=most)
    else:
        raise InvalidInput(
            "unknown source",
            [Problem.at("source", f"{source!r}: imported, extracted, judge or copied")],
        )
    drafted = {t.qid: len(t.nuggets) for t in bank_topics(bank) if t.nuggets}
    return DraftReport(bank, drafted)
