"""The help centre of Northwind Cloud, a fictional hosting company: 72 articles in 8 sections.

Each article is written from its spec (title, the words it uses for its subject, where in the
console that subject lives) and sentence templates, with a seeded ``random.Random``: an
introduction, one to four body paragraphs and a closing paragraph, separated by blank lines, each
of two to four sentences. The sentences that answer the questions (:mod:`.questions`) are planted
into body paragraphs; :func:`write_documents` returns where each landed.

The three subject words of an article are used interchangeably ("invoices", "billing statements",
"monthly bills"), so that the words of a question and of its answer often differ: what separates
lexical retrieval from a model of meaning.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from judging.demo.rag.articles import ARTICLES, SECTION_BY_KEY, ArticleSpec, Section


@dataclass(frozen=True)
class RagDocument:
    docid: str
    title: str
    text: str  # paragraphs joined by "\n\n"
    section: str
    key: str  # the article's spec key, e.g. "invoices"


# fmt: off
_INTRO = (
    "This article explains how {things} work in Northwind Cloud.",
    "Here is what you need to know about {things}.",
    "{Things} are part of every Northwind Cloud plan.",
    "Most teams look at {things} when they first set up an organisation.",
)
_INTRO_NEXT = (
    "You will find them on {place}.",
    "Only {role} can change them.",
    "What follows applies to every region.",
    "Most teams set them up once and rarely touch them again.",
    "The same options are available through the API.",
)
_BODY = (
    "Changes to {things} are recorded in the activity log of your organisation.",
    "{Things} are listed on {place}, next to the other settings of the project.",
    "Only {role} can change {things}, and other members see them read-only.",
    "If your organisation has several projects, {things} apply to each project separately.",
    "The command line tool gives the same access to {things} as the console.",
    "We recommend reviewing {things} whenever your team changes.",
    "Screens in the console may look slightly different depending on your plan.",
    "Changes usually take a few minutes to show up everywhere.",
    "{Things} created through the API appear in the console straight away.",
    "The Enterprise plan adds more options for {things}.",
    "A short video on {place} walks through {things} step by step.",
    "Some older projects show {things} under a different menu.",
)
_CLOSING = (
    "See the other articles of the {section} section for related tasks.",
    "This article was last reviewed by the {section} team.",
    "Screenshots in this article show the default console theme.",
)
_CLOSING_NEXT = (
    "Still have questions? Contact our support team from the Help menu.",
    "Was this article helpful? Let us know with the buttons below.",
    "Our support team is happy to help with anything not covered here.",
)
# fmt: on


def _fill(template: str, rng: random.Random, spec: ArticleSpec, section: Section) -> str:
    things = rng.choice(spec.things)
    text = template.format(
        things=things,
        Things=things[0].upper() + things[1:],
        place=spec.place,
        role=section.role,
        section=section.name,
    )
    return text[0].upper() + text[1:]


def _paragraphs(rng: random.Random, spec: ArticleSpec, planted: Sequence[str]) -> list[list[str]]:
    """The article as paragraphs of sentences: introduction, body (with ``planted`` spread over
    its paragraphs, one per paragraph while there are enough), closing."""
    section = SECTION_BY_KEY[spec.section]
    n_body = min(4, max(len(planted), rng.randint(1, 4)))
    body_pool = [*_BODY, *section.notes]
    rng.shuffle(body_pool)
    slots = rng.sample(range(n_body), n_body)
    mine: list[list[str]] = [[] for _ in range(n_body)]
    for i, sentence in enumerate(planted):
        mine[slots[i % n_body]].append(sentence)
    body: list[list[str]] = []
    for extra in mine:
        size = max(1, rng.randint(3, 4) - len(extra))
        paragraph = [_fill(body_pool.pop(), rng, spec, section) for _ in range(size)]
        for sentence in extra:
            paragraph.insert(rng.randint(0, len(paragraph)), sentence)
        body.append(paragraph)
    intro = [_fill(rng.choice(_INTRO), rng, spec, section)]
    intro += [_fill(t, rng, spec, section) for t in rng.sample(_INTRO_NEXT, rng.randint(1, 2))]
    closing = [_fill(rng.choice(t), rng, spec, section) for t in (_CLOSING, _CLOSING_NEXT)]
    return [intro, *body, closing]


def write_documents(
    rng: random.Random, planted: Mapping[str, Sequence[str]]
) -> tuple[list[RagDocument], dict[tuple[str, str], tuple[str, int, int]]]:
    """Every article written, with ``planted`` (article key -> sentences) in its body; and where
    each planted sentence is: ``(key, sentence) -> (docid, start, end)``, ``text[start:end]``
    being the sentence. Docids ``kb-001``... are shuffled so that their order says nothing of the
    section."""
    numbers = rng.sample(range(1, len(ARTICLES) + 1), len(ARTICLES))
    documents: list[RagDocument] = []
    where: dict[tuple[str, str], tuple[str, int, int]] = {}
    for spec, number in zip(ARTICLES, numbers, strict=True):
        docid = f"kb-{number:03d}"
        ours = list(planted.get(spec.key, ()))
        parts: list[str] = []
        pos = 0
        for paragraph in _paragraphs(rng, spec, ours):
            if parts:
                parts.append("\n\n")
                pos += 2
            for j, sentence in enumerate(paragraph):
                if j:
                    parts.append(" ")
                    pos += 1
                if sentence in ours:
                    where[(spec.key, sentence)] = (docid, pos, pos + len(sentence))
                parts.append(sentence)
                pos += len(sentence)
        documents.append(RagDocument(docid, spec.title, "".join(parts), spec.section, spec.key))
    documents.sort(key=lambda d: d.docid)
    return documents, where
