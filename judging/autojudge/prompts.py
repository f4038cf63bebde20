"""The UMBRELA prompt, rendering it, reading the judge's answer, and mapping its grades.

The default template is UMBRELA's zero-shot "bing" prompt, the one ``umbrela judge`` uses by
default (``--prompt-type bing --few-shot-count 0``): Upadhyay, Pradeep, Thakur, Craswell and Lin,
"UMBRELA: UMbrela is the (Open-Source Reproduction of the) Bing RELevance Assessor", 2024,
arXiv:2406.06519, which reproduces the prompt of Thomas, Spielman, Craswell and Mitra, "Large
language models can accurately predict searcher preferences", SIGIR 2024. The text is
castorini/umbrela's ``src/umbrela/prompts/prompt_templates/qrel_zeroshot_bing.yaml``
(Apache-2.0, commit e2c4e41 of 2026-04-19), reproduced verbatim, typos included, since a judge
is compared with UMBRELA's published agreement only if it is asked the same question; lines 2 to
4 end in one space there and in :data:`UMBRELA`::

    Given a query and a passage, you must provide a score on an integer scale of 0 to 3 with the
    following meanings:
    0 = represent that the passage has nothing to do with the query,
    1 = represents that the passage seems related to the query but does not answer it,
    2 = represents that the passage has some answer for the query, but the answer may be a bit
    unclear, or hidden amongst extraneous information and
    3 = represents that the passage is dedicated to the query and contains the exact answer.

    Important Instruction: Assign category 1 if the passage is somewhat related to the topic but
    not completely, category 2 if passage presents something very important related to the
    entire topic but also has some extra information and category 3 if the passage only and
    entirely refers to the topic. If none of the above satisfies give it category 0.

    Query: {query}
    Passage: {passage}

    Split this problem into steps:
    Consider the underlying intent of the search.
    Measure how well the content matches a likely intent of the query (M).
    Measure how trustworthy the passage is (T).
    Consider the aspects above and the relative importance of each, and decide on a final score
    (O). Final score must be an integer value only.
    Do not provide any code in result. Provide each score in the format of: ##final score: score
    without providing any reasoning.

(wrapped here at 100 columns; in :data:`UMBRELA` each paragraph's sentence is one line). UMBRELA
sends it as the user message after the system message "You are a helpful assistant."
(:data:`UMBRELA_SYSTEM`), at temperature 0 with at most 100 new tokens.

Templates
    A template is text with the placeholders ``{query}`` and ``{passage}``, both required; any
    other brace is literal. Rendering substitutes both in one pass, so a passage that contains
    the text ``{query}`` is sent as it is (a document cannot rewrite the prompt's slots).

Answers (:func:`parse_answer`)
    The grade is the last ``final score: N`` (any case, ``#``, ``*`` or spaces around, ``:``,
    ``=`` or ``-`` optional), else the last ``O: N`` (the prompt's overall score), else an answer
    whose last non-empty line is a lone grade. N must be an integer 0..3: ``final score: 5`` or
    ``2.5`` is a malformed answer, not a clamped one. An answer with no grade is a refusal when
    it reads like one ("I can't help with that", "I'm sorry", "as an AI", ...; "I cannot
    find the answer" is not one), otherwise malformed. UMBRELA itself falls back to 0 on an
    unreadable answer (``result_status`` 0); here that case stays visible as "malformed"
    instead of becoming a silent "not relevant".

Grade mapping (:func:`default_mapping`)
    UMBRELA's 0..3 is ordinal, and its relevance boundary lies between 1 and 2: 1 is "related
    but does not answer it", UMBRELA binarises its agreement at grade >= 2, as TREC Deep
    Learning's binary measures use relevance level 2. The default mapping onto a campaign's
    scale (its grades in increasing order g_0 < ... < g_{n-1}) keeps that boundary:

    - n = 2 (binary): 0, 1 -> g_0; 2, 3 -> g_1;
    - n = 3 (e.g. Robust's 0 not relevant, 1 relevant, 2 highly relevant): 0, 1 -> g_0;
      2 -> g_1; 3 -> g_2. The alternative {0:0, 1:1, 2:2, 3:2} would call every "related but
      does not answer it" passage relevant, inflating R and every recall-based measure;
    - n = 4: the i-th grade to g_i;
    - n > 4: grade i to g_round(i (n-1) / 3).

    A campaign that wants another rule passes its own ``mapping`` ({0..3: grade of the scale}).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = [
    "UMBRELA",
    "UMBRELA_SYSTEM",
    "ParsedAnswer",
    "check_mapping",
    "check_template",
    "default_mapping",
    "parse_answer",
    "reads_as_refusal",
    "render",
]

UMBRELA_SYSTEM = "You are a helpful assistant."

# Lines 2-4 end in a space in UMBRELA's file; kept (joined explicitly, so no editor strips them).
UMBRELA = "\n".join(
    [
        "Given a query and a passage, you must provide a score on an integer scale of 0 to 3 "
        "with the following meanings:",
        "0 = represent that the passage has nothing to do with the query, ",
        "1 = represents that the passage seems related to the query but does not answer it, ",
        "2 = represents that the passage has some answer for the query, but the answer may be "
        "a bit unclear, or hidden amongst extraneous information and ",
        "3 = represents that the passage is dedicated to the query and contains the exact answer.",
        "",
        "Important Instruction: Assign category 1 if the passage is somewhat related to the "
        "topic but not completely, category 2 if passage presents something very important "
        "related to the entire topic but also has some extra information and category 3 if the "
        "passage only and entirely refers to the topic. If none of the above satisfies give it "
        "category 0.",
        "",
        "Query: {query}",
        "Passage: {passage}",
        "",
        "Split this problem into steps:",
        "Consider the underlying intent of the search.",
        "Measure how well the content matches a likely intent of the query (M).",
        "Measure how trustworthy the passage is (T).",
        "Consider the aspects above and the relative importance of each, and decide on a final "
        "score (O). Final score must be an integer value only.",
        "Do not provide any code in result. Provide each score in the format of: ##final score: "
        "score without providing any reasoning.",
    ]
)

UMBRELA_GRADES = (0, 1, 2, 3)

_PLACEHOLDER = re.compile(r"\{(query|passage)\}")

MAX_PROMPT_CHARS = 20_000  # the longest prompt template a judge takes


def check_template(template: str) -> None:
    """Raise ``ValueError`` unless ``template`` has both ``{query}`` and ``{passage}``."""
    found = set(_PLACEHOLDER.findall(template))
    missing = [name for name in ("query", "passage") if name not in found]
    if missing:
        names = " and ".join("{" + m + "}" for m in missing)
        raise ValueError(f"the prompt template has no {names} placeholder")


def render(template: str, *, query: str, passage: str) -> str:
    """``template`` with ``{query}`` and ``{passage}`` replaced, in one pass (text inside the
    query or passage is never substituted again)."""
    values = {"query": query, "passage": passage}
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], template)


# --------------------------------------------------------------------------------------------
# Answers

_NUMBER = r"([+-]?\d+(?:[.,]\d+)?)"
_FINAL = re.compile(r"final[\s_*#]*score[\s*#]*(?:is|[:=-])?[\s*#]*" + _NUMBER, re.IGNORECASE)
_OVERALL = re.compile(r"(?:^|[\s(\"'*])O\)?[\"'*]*\s*[:=]\s*" + _NUMBER)
_LONE = re.compile(r"^[\s*#\"'(\[]*" + _NUMBER + r"[\s*\"')\].]*$")
_APOS = r"(?:'|\u2019)"  # a typewriter or a typographic apostrophe
_DECLINE_VERBS = (
    r"(?:help|assist|comply|fulfil+|provide|do\s+that|engage|rate|grade|judge|evaluate|"
    r"assess|score|continue|process|respond|answer\s+that)"
)
_CANNOT = (
    rf"(?:I\s+(?:can{_APOS}t|cannot|can\s+not|won{_APOS}t|will\s+not|am\s+(?:unable|not\s+able)\s+to)"
    rf"|I{_APOS}m\s+(?:unable|not\s+able)\s+to|unable\s+to)"
)
_REFUSAL = re.compile(
    rf"\b(?:{_CANNOT}\s+{_DECLINE_VERBS}\b"
    rf"|I(?:{_APOS}m|\s+am)\s+sorry|I\s+apologi[sz]e|I\s+(?:must|have\s+to)\s+decline"
    r"|as\s+an\s+(?:AI|language\s+model)|against\s+(?:my|the)\s+(?:guidelines|polic(?:y|ies)))",
    re.IGNORECASE,
)


def reads_as_refusal(text: str) -> bool:
    """Whether an answer reads as the model declining ("I can't help with that", "I'm
    sorry", "as an AI", ...; "I cannot find the answer" does not)."""
    return _REFUSAL.search(text) is not None


@dataclass(frozen=True)
class ParsedAnswer:
    """What an answer says: ``raw_grade`` (UMBRELA 0..3) or None; ``refused`` when it has no
    grade and reads as a refusal; ``problem`` says why there is no grade ("" when there is)."""

    raw_grade: int | None
    refused: bool = False
    problem: str = ""


def _grade(token: str, where: str) -> ParsedAnswer:
    token = token.replace(",", ".")
    if not re.fullmatch(r"[+-]?\d+", token):
        return ParsedAnswer(None, problem=f"the {where} {token!r} is not an integer 0..3")
    value = int(token)
    if value not in UMBRELA_GRADES:
        return ParsedAnswer(None, problem=f"the {where} {value} is outside 0..3")
    return ParsedAnswer(value)


def parse_answer(text: str) -> ParsedAnswer:
    """Read the grade from a judge's answer (rules in the module docstring)."""
    finals = _FINAL.findall(text)
    if finals:
        return _grade(finals[-1], "final score")
    overall = _OVERALL.findall(text)
    if overall:
        return _grade(overall[-1], "overall score (O)")
    lines = [line for line in text.splitlines() if line.strip()]
    if lines:
        lone = _LONE.match(lines[-1])
        if lone:
            return _grade(lone.group(1), "grade")
    if reads_as_refusal(text):
        return ParsedAnswer(None, refused=True, problem="the model declined to grade")
    if not text.strip():
        return ParsedAnswer(None, problem="the answer is empty")
    return ParsedAnswer(None, problem="no '##final score: N' in the answer")


# --------------------------------------------------------------------------------------------
# Grade mapping


def _sorted_scale(scale: Sequence[int]) -> list[int]:
    grades = [int(g) for g in scale]
    if len(set(grades)) != len(grades):
        raise ValueError(f"the scale {list(scale)} repeats a grade")
    if len(grades) < 2:
        raise ValueError(f"a scale needs at least two grades, not {list(scale)}")
    return sorted(grades)


def default_mapping(scale: Sequence[int]) -> dict[int, int]:
    """UMBRELA's 0..3 onto ``scale``, keeping its relevance boundary between 1 and 2 (rules
    in the module docstring). ``ValueError`` for a scale of fewer than two distinct grades."""
    g = _sorted_scale(scale)
    n = len(g)
    if n == 2:
        return {0: g[0], 1: g[0], 2: g[1], 3: g[1]}
    if n == 3:
        return {0: g[0], 1: g[0], 2: g[1], 3: g[2]}
    # n = 4 is the identity by position; beyond, the nearest position (i (n-1) / 3 has
    # denominator 3, so it is never halfway between two)
    return {i: g[int(i * (n - 1) / 3 + 0.5)] for i in UMBRELA_GRADES}


def check_mapping(mapping: Mapping[int, int], scale: Sequence[int]) -> dict[int, int]:
    """``mapping`` as a dict after checking it sends each of 0..3 to a grade of ``scale``."""
    grades = set(_sorted_scale(scale))
    keys = set(mapping)
    if keys != set(UMBRELA_GRADES):
        raise ValueError(
            f"the grade mapping must map exactly UMBRELA's grades 0, 1, 2, 3; it has {sorted(keys)}"
        )
    wrong = {k: v for k, v in mapping.items() if v not in grades}
    if wrong:
        raise ValueError(f"the grade mapping sends {wrong} outside the scale {sorted(grades)}")
    return {int(k): int(v) for k, v in mapping.items()}
