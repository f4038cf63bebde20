"""The prompts that ask an openai-compatible model to label answer items, and the strict reading
of its reply. No Django here.

**Nugget assignment** (does the answer contain the nugget?) asks, for one nugget at a time, what
castorini/nuggetizer's assigner asks for a list of nuggets (``src/nuggetizer/prompts/
assigner_prompts.py``, three grades: a nugget fully captured by the passage is ``support``,
partly captured ``partial_support``, else ``not_support``), in our own words, with the answer's
sentences as the passage. **Citation support** (does the cited segment support the sentence?)
asks what the TREC 2024 RAG Track's support judge asked (Thakur et al., arXiv 2504.15205,
section 3.2: full support when all of the sentence's information is in the cited passage,
partial when only some of it is, no support when none is), in our own words, with the topic's
question for context.

The reply must be the label alone: ``support`` / ``partial_support`` / ``not_support`` for an
assignment, ``full_support`` / ``partial_support`` / ``no_support`` for a citation, in any case,
with spaces, hyphens or underscores between the words, optionally wrapped in quotes, asterisks,
backticks or brackets and ended by a full stop (:func:`parse_label`). Anything else is
malformed (a reply that reads as the model declining is refused): never guessed at, never
clamped. The grades are the judging units' (``assessments.units``): 2, 1, 0.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from judging.autojudge.prompts import reads_as_refusal

NUGGET_ASSIGNMENT = "nugget_assignment"
CITATION_SUPPORT = "citation_support"

PASSAGE_CHARS = 4000  # of a cited segment sent (the judge's max_chars replaces it)

ASSIGNMENT_SYSTEM = "You check whether an answer to a question contains a given fact (a nugget)."
ASSIGNMENT = "\n".join(
    [
        "Question: {query}",
        "",
        "Answer:",
        "{answer}",
        "",
        "Nugget: {nugget}",
        "",
        "Does the answer contain the nugget? Label it with one of:",
        "support - the answer states everything the nugget says;",
        "partial_support - the answer states only part of the nugget, or only implies it;",
        "not_support - the answer does not state the nugget.",
        "Judge by what the answer says, not by what you know. Reply with the label alone.",
    ]
)

SUPPORT_SYSTEM = "You check whether a cited passage supports a sentence of an answer."
SUPPORT = "\n".join(
    [
        "Question: {query}",
        "",
        "Sentence of the answer: {sentence}",
        "",
        "Passage it cites:",
        "{passage}",
        "",
        "Does the passage support the sentence? Label it with one of:",
        "full_support - the passage supports everything the sentence states;",
        "partial_support - the passage supports some of what the sentence states, and the rest "
        "is missing from it;",
        "no_support - the passage supports nothing the sentence states.",
        "Judge by what the passage says, not by what you know. Reply with the label alone.",
    ]
)

LABELS: dict[str, dict[str, int]] = {
    NUGGET_ASSIGNMENT: {"support": 2, "partial_support": 1, "not_support": 0},
    CITATION_SUPPORT: {"full_support": 2, "partial_support": 1, "no_support": 0},
}

_SLOT = re.compile(r"\{(query|answer|nugget|sentence|passage)\}")
_WRAP = "\"'`*[]()"
_SEPARATORS = re.compile(r"[\s_-]+")


def _render(template: str, values: dict[str, str]) -> str:
    """Every slot filled in one pass: text inside a value is never substituted again."""
    return _SLOT.sub(lambda m: values[m.group(1)], template)


def assignment_message(query: str, nugget: str, sentences: Sequence[str]) -> str:
    """The user message asking whether the answer (its sentences, one a line) holds the
    nugget."""
    answer = "\n".join(" ".join(s.split()) for s in sentences)
    return _render(ASSIGNMENT, {"query": query, "nugget": nugget, "answer": answer})


def support_message(query: str, sentence: str, passage: str, max_chars: int = PASSAGE_CHARS) -> str:
    """The user message asking whether the passage (its first ``max_chars`` characters, white
    space collapsed) supports the sentence."""
    cut = " ".join(passage.split())[:max_chars]
    return _render(SUPPORT, {"query": query, "sentence": sentence, "passage": cut})


@dataclass(frozen=True)
class ParsedLabel:
    """What a reply says: ``grade`` 2/1/0 or None; ``refused`` when it has none and reads as a
    refusal; ``problem`` why there is no grade ("" when there is)."""

    grade: int | None
    refused: bool = False
    problem: str = ""


def parse_label(kind: str, reply: str) -> ParsedLabel:
    """The grade of a reply to the ``kind``'s prompt (the rules in the module docstring)."""
    labels = LABELS[kind]
    text = reply.strip()
    if text.endswith("."):
        text = text[:-1]
    token = _SEPARATORS.sub("_", text.strip().strip(_WRAP).strip().lower())
    if token in labels:
        return ParsedLabel(labels[token])
    if reads_as_refusal(reply):
        return ParsedLabel(None, refused=True, problem="the model declined to label")
    if not reply.strip():
        return ParsedLabel(None, problem="the reply is empty")
    shown = " ".join(reply.split())[:60]
    return ParsedLabel(
        None, problem=f"the reply {shown!r} is not one of {', '.join(sorted(labels))}"
    )
