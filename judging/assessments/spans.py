"""Where in its document's text a judgment applies: the judged passage and the answer spans.

A span is ``[start, end]``, the half-open character range ``text[start:end]`` of the document's
``text`` (characters are Python's code points, as ``campaigns.passages`` counts them, so a
passage's offsets and the spans marked inside it are on one scale). A judgment stores them as
``Judgment.spans`` (and each history row as ``JudgmentChange.spans``, the spans after it)::

    {"passage": [start, end], "answers": [[start, end], ...]}

``passage``: present when the item judged is a passage (``docid#pid``), its offsets in the
document. ``answers``: present when the assessor marked the text that answers the topic, only
with a relevant grade (above 0): sorted, overlapping or touching spans merged into one (a union
of characters, so the same text marked twice, or in two strokes, is stored once). None for a
whole document with nothing marked. At most ``POOLJUDGE_MAX_ANSWER_SPANS`` spans are accepted
(counted as given, before merging).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings

from judging.campaigns.passages import passage_text
from judging.core.errors import InvalidInput
from metrics.problems import Problem

Span = tuple[int, int]

__all__ = ["Span", "answers_of", "answers_parsed", "item_spans", "merged", "stored"]


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def answers_parsed(value: Any, field: str = "answers") -> list[Span] | None:
    """The answer spans as given (None or an empty list: none), checked for shape only: a list
    of at most ``POOLJUDGE_MAX_ANSWER_SPANS`` pairs of whole numbers. Every problem is named
    with its place (``answers[2]``)."""
    if value is None:
        return None
    cap = settings.POOLJUDGE_JUDGING.max_answer_spans
    if not isinstance(value, list | tuple):
        raise InvalidInput(
            f"{field} must be a list of [start, end] character offsets; nothing was recorded",
            [Problem.at(field, f"must be a list of [start, end] pairs, not {_shown(value)}")],
        )
    if len(value) > cap:
        raise InvalidInput(
            f"at most {cap} answer spans may be marked, not {len(value)}; nothing was recorded",
            [Problem.at(field, f"{len(value)} spans: at most {cap} (POOLJUDGE_MAX_ANSWER_SPANS)")],
        )
    problems: list[Problem] = []
    spans: list[Span] = []
    for i, pair in enumerate(value):
        if not isinstance(pair, list | tuple) or len(pair) != 2 or not all(map(_whole, pair)):
            problems.append(
                Problem.at(
                    f"{field}[{i}]", f"must be [start, end], two whole numbers, not {_shown(pair)}"
                )
            )
            continue
        spans.append((int(pair[0]), int(pair[1])))
    if problems:
        raise InvalidInput(
            f"{len(problems)} answer span(s) are not [start, end] pairs; nothing was recorded",
            problems,
        )
    return spans


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def merged(spans: list[Span]) -> list[Span]:
    """The spans sorted, overlapping and touching ones merged (their union of characters)."""
    out: list[list[int]] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1][1] = max(out[-1][1], end)
        else:
            out.append([start, end])
    return [(s, e) for s, e in out]


def answers_checked(
    spans: list[Span], *, length: int, grade: int, field: str = "answers"
) -> list[Span]:
    """``spans`` (from ``answers_parsed``) inside a text of ``length`` characters and allowed by
    the grade (answers mark relevant text: a grade above 0), merged; an ``InvalidInput`` naming
    each span out of the text, or the grade."""
    if not spans:
        return []
    if grade <= 0:
        raise InvalidInput(
            f"answer spans are marked only on relevant text: grade {grade} is not relevant; "
            "nothing was recorded",
            [Problem.at(field, f"answers need a grade above 0, not {grade}; remove them")],
        )
    problems = [
        Problem.at(
            f"{field}[{i}]",
            f"[{start}, {end}] is not a span of the document's text, which has {length:,} "
            f"characters (0 <= start < end <= {length:,})",
        )
        for i, (start, end) in enumerate(spans)
        if not 0 <= start < end <= length
    ]
    if problems:
        raise InvalidInput(
            f"{len(problems)} answer span(s) are outside the document's text; nothing was recorded",
            problems,
        )
    return merged(spans)


def stored(passage: Span | None, answers: list[Span]) -> dict[str, Any] | None:
    """The ``Judgment.spans`` value: passage and answers as lists (JSON), None when neither."""
    out: dict[str, Any] = {}
    if passage is not None:
        out["passage"] = [passage[0], passage[1]]
    if answers:
        out["answers"] = [[s, e] for s, e in answers]
    return out or None


def answers_of(spans: Any) -> list[Span]:
    """The answer spans of a stored ``spans`` value (none for None or a value without them)."""
    if not isinstance(spans, dict):
        return []
    return [(int(s), int(e)) for s, e in spans.get("answers") or []]


def item_spans(
    *, campaign_id: int, item: str, grade: int, answers: list[Span] | None
) -> dict[str, Any] | None:
    """The spans to store for judging ``item`` (a docid or a passage id) with ``grade`` and the
    answer spans given (checked against its document's text). The text is looked up only when
    needed: when answers are given, or when the id may name a passage (every passage id has a
    ``#``), so that judging a whole document without answers costs no query."""
    if not answers and "#" not in item:
        return None
    found = passage_text(campaign_id, item)
    if found is None:
        if answers:
            raise InvalidInput(
                f"{item} has no text in the campaign, so no answer span can be marked in it; "
                "nothing was recorded",
                [Problem.at("answers", "the item has no text")],
            )
        return None
    checked = answers_checked(answers or [], length=len(found.document.text), grade=grade)
    return stored(found.passage, checked)
