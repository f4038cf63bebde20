"""The prompt that asks an openai-compatible model for a topic's nuggets, and the strict reading
of its reply. No Django here.

The prompt asks in one turn for what castorini/nuggetizer asks in two (its creator prompt:
atomic nuggets of information, at most 12 words, no redundancy, most important first, a capped
number; its scorer prompt: each one ``vital``, "must be present in a good answer", or
``okay``, "worthwhile but not essential"; ``src/nuggetizer/prompts/prompt_templates/
creator_template.yaml`` and ``scorer_template.yaml``, commit d00dc3e), in our own words, and
asks for the passages each nugget comes from, which become the nugget's sources. The passages
are the topic's relevant segments, numbered from 1 (at most :data:`MAX_PASSAGES`, each cut to
:data:`PASSAGE_CHARS` characters).

The reply must be one nugget a line, ``vital | <nugget> | <passage numbers>`` or ``okay | ...``
(any case; a leading ``-``, ``*`` or ``1.`` is allowed; blank lines are skipped). Anything else
fails the whole topic, with the reason (:func:`parse_nuggets`): a line in another form, a
passage number that was not given, a text too long or given twice, more nuggets than asked
for, none at all. A failed topic is reported, never guessed at.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from metrics.io.nuggets import DraftNugget, Importance

MAX_PASSAGES = 20
PASSAGE_CHARS = 1500

SYSTEM = (
    "You help assessors build nugget lists for evaluating answers: short, self-contained facts "
    "that a good answer to a question holds."
)
TEMPLATE = "\n".join(
    [
        "Question: {query}",
        "",
        "Passages judged relevant to the question, numbered:",
        "{passage}",
        "",
        "List the facts from these passages that an answer to the question should contain. "
        "Each nugget is one atomic, self-contained statement of at most 12 words, and no two "
        "nuggets say the same thing. Label a nugget vital when a good answer cannot leave it "
        "out, and okay when it is useful but not essential. Give at most {most} nuggets, the "
        "most important first.",
        "",
        "Reply with one nugget a line and nothing else, in this form:",
        "vital | <nugget> | <the numbers of the passages it comes from, comma-separated>",
        "okay | <nugget> | <the numbers of the passages it comes from, comma-separated>",
    ]
)

_LINE = re.compile(
    r"^\s*(?:[-*\u2022]\s*|\d{1,3}[.)]\s*)?(vital|okay)\s*\|\s*(.*?)\s*\|\s*"
    r"(\d+(?:\s*,\s*\d+)*)\s*$",
    re.IGNORECASE,
)


def template(most: int) -> str:
    """The user message's template for at most ``most`` nuggets (``{query}`` and ``{passage}``
    left for the client to fill)."""
    return TEMPLATE.replace("{most}", str(most))


def passages(segments: Sequence[tuple[str, str]]) -> str:
    """``(title, text)`` segments as the prompt numbers them: ``[1] title: text``, each cut."""
    out = []
    for i, (title, text) in enumerate(segments[:MAX_PASSAGES], 1):
        body = " ".join(text.split())[:PASSAGE_CHARS]
        out.append(f"[{i}] {title}: {body}" if title else f"[{i}] {body}")
    return "\n".join(out)


@dataclass(frozen=True)
class Parsed:
    """The nuggets of a reply, or (``problem`` not empty) why there are none."""

    nuggets: tuple[DraftNugget, ...] = ()
    problem: str = ""


def parse_nuggets(reply: str, sources: Sequence[str], *, most: int, max_chars: int) -> Parsed:
    """The reply's nuggets (the form in the module docstring), each with the ids in
    ``sources`` of the passages it names (passage i is ``sources[i - 1]``)."""
    found: list[DraftNugget] = []
    seen: set[str] = set()
    lines = [(i, line) for i, line in enumerate(reply.splitlines(), 1) if line.strip()]
    if not lines:
        return Parsed(problem="the reply is empty")
    for i, line in lines:
        match = _LINE.match(line)
        if match is None:
            shown = repr(line.strip()[:60])
            return Parsed(
                problem=f"reply line {i} is not 'vital|okay | nugget | passages': {shown}"
            )
        importance, text, numbers = match.groups()
        cited = [int(x) for x in numbers.split(",")]
        wrong = [x for x in cited if not 1 <= x <= len(sources)]
        if wrong:
            given = f"1 to {len(sources)}"
            return Parsed(problem=f"reply line {i} names passage {wrong[0]}, not given ({given})")
        if not text:
            return Parsed(problem=f"reply line {i} has no nugget text")
        if len(text) > max_chars:
            size = f"{len(text)} characters; the limit is {max_chars}"
            return Parsed(problem=f"reply line {i} has a nugget of {size}")
        normal = " ".join(text.split()).casefold()
        if normal in seen:
            return Parsed(problem=f"reply line {i} repeats a nugget")
        seen.add(normal)
        label: Importance = "vital" if importance.lower() == "vital" else "okay"
        ids = tuple(dict.fromkeys(sources[x - 1] for x in cited))
        found.append(DraftNugget(text, label, ids))
    if len(found) > most:
        return Parsed(problem=f"{len(found)} nuggets, more than the {most} asked for")
    return Parsed(tuple(found))
