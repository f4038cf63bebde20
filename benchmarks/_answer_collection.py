"""A synthetic collection of answer runs over the RAG demo's help centre, with every nugget
assignment and citation support label known (for ``benchmarks/nugget_ppi.py``).

The demo (``judging.demo.rag``: 72 articles, 40 questions, plain Python, no Django) is read as
it is built; its articles are cut into paragraphs (the demo's chunking ``paragraph``), the
segments answers cite (``kb-063#p2``), and sentences (:func:`metrics.passages.sentences.
sentence_spans`).

- **Topics**: the 36 answerable questions. **A topic's bank**: its answering sentences, then its
  related sentences, then the other sentences of the answering articles in their order, up to
  8 distinct nuggets; the first 40% of them (at least the answering sentences) are vital.
- **Forms of a nugget's sentence**: ``full`` (verbatim), ``partial`` (its first 55% of words,
  closed by a full stop) and ``wrong`` (its numbers changed, or a ``not`` after its first
  auxiliary verb: a contradiction that reads like the nugget).
- **Systems** (:data:`SYSTEMS`): each takes, per nugget, its full form, partial form, wrong form
  or nothing with its own probabilities (vital and okay apart), adds sentences drawn from the
  whole help centre ("fillers") and claims found nowhere in it ("made up"), and cites
  for each sentence the paragraph it came from, or with some probability another segment. One
  system (``twin``) repeats another's answer word for word on half the topics, so items are
  shared between runs; one (``unsupported``) cites wrong segments and makes claims up.
- **Truth**, a function of an item's text only, so a shared item has one label: a nugget is
  supported (2) by an answer holding its full form, partially (1) by one holding its partial
  form, else not (0); a (sentence, segment) pair is fully supported (2) when the segment holds
  the sentence the sentence's full or partial form came from, partially (1) when it holds the
  one its wrong form contradicts, else not (0; made-up claims always).

Everything is drawn from fixed seeds: every call gives the same collection.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from metrics.answers import Nugget
from metrics.answers.items import AnswerItem
from metrics.io.answers import AnswerSentence, TopicAnswer
from metrics.passages.sentences import sentence_spans

SEED = 3405


@dataclass(frozen=True)
class System:
    """Per nugget: P(full), P(partial), P(wrong) for vital and for okay nuggets; fillers and
    made-up claims per answer (a range); P(citing the sentence's own paragraph), else another
    segment of the same article (half the time) or of any article; P(a sentence cites
    nothing); P(a second citation)."""

    name: str
    vital: tuple[float, float, float]
    okay: tuple[float, float, float]
    fillers: tuple[int, int] = (0, 0)
    made_up: tuple[int, int] = (0, 0)
    cite_own: float = 0.95
    uncited: float = 0.0
    second: float = 0.2


SYSTEMS = (
    System("strong", (0.85, 0.08, 0.02), (0.45, 0.10, 0.02)),
    System("twin", (0.85, 0.08, 0.02), (0.45, 0.10, 0.02)),  # strong's answer on half the topics
    System("medium", (0.60, 0.15, 0.05), (0.30, 0.12, 0.05), fillers=(0, 1), cite_own=0.85),
    System(
        "weak",
        (0.35, 0.20, 0.12),
        (0.15, 0.15, 0.08),
        fillers=(1, 2),
        cite_own=0.70,
        uncited=0.10,
    ),
    System(
        "unsupported",
        (0.65, 0.10, 0.05),
        (0.35, 0.10, 0.05),
        fillers=(0, 1),
        made_up=(1, 2),
        cite_own=0.55,
    ),
    System("terse", (0.75, 0.10, 0.05), (0.05, 0.02, 0.01), cite_own=0.95, second=0.0),
    System("verbose", (0.70, 0.10, 0.03), (0.60, 0.10, 0.03), fillers=(2, 3), cite_own=0.90),
    System("noisy", (0.45, 0.20, 0.15), (0.25, 0.20, 0.10), fillers=(1, 2), cite_own=0.75),
)
TWIN_OF, TWIN_SHARE = "strong", 0.5

_MADE_UP = (
    "Northwind Cloud guarantees a reply to every ticket within five minutes.",
    "Every plan includes unlimited free storage for the first year.",
    "Customers can ask for a refund of any invoice up to two years later.",
    "The console can be used without an account for up to a week.",
    "All data is copied to a second continent every night at no charge.",
    "Support can restore any deleted project at any time without a backup.",
    "API keys never expire and cannot be revoked once created.",
    "Northwind Cloud offers a free dedicated account manager on every plan.",
    "Every region has its own separate billing account and currency.",
    "Two-factor authentication is switched off by default for administrators.",
    "Invoices can be paid in cash at any Northwind Cloud office.",
    "There is no limit on the number of requests an access token can send.",
)
_AUX = re.compile(r"\b(is|are|can|does|will|has|have|must)\b")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_SMALL = {
    "one": "two",
    "two": "four",
    "three": "five",
    "five": "ten",
    "seven": "three",
    "ten": "twenty",
    "twelve": "six",
    "thirty": "sixty",
}


def partial_form(sentence: str) -> str:
    words = sentence.rstrip(".").split()
    keep = max(2, round(0.55 * len(words)))
    return " ".join(words[:keep]).rstrip(",;:") + "."


def wrong_form(sentence: str) -> str | None:
    if _NUMBER.search(sentence):
        return _NUMBER.sub(lambda m: str(int(float(m.group()) * 2 + 3)), sentence)
    for small, other in _SMALL.items():
        if re.search(rf"\b{small}\b", sentence):
            return re.sub(rf"\b{small}\b", other, sentence)
    m = _AUX.search(sentence)
    if m is None:
        return None
    return sentence[: m.end()] + " not" + sentence[m.end() :]


@dataclass(frozen=True)
class AnswerCollection:
    """Banks, runs (run -> its answers), segment texts, and the truth of every item."""

    banks: dict[str, list[Nugget]]
    runs: dict[str, list[TopicAnswer]]
    segments: dict[str, str]
    # form text -> the (origin sentence, form) pairs it is: "full", "partial" or "wrong"
    origins: dict[str, set[tuple[str, str]]]
    # an answer's text (its sentences joined by a space) -> its sentences
    sentences: dict[str, frozenset[str]]

    def nugget_label(self, item: AnswerItem) -> int:
        """The true assignment of ``item.target`` (a nugget id) to the answer ``item.text``."""
        nugget = next(n for n in self.banks[item.topic_id] if n.id == item.target)
        sentences = self.sentences[item.text]
        if nugget.text in sentences:
            return 2
        return 1 if partial_form(nugget.text) in sentences else 0

    def support_label(self, item: AnswerItem) -> int:
        """The true support of the sentence ``item.text`` by the segment ``item.target``."""
        held = self.segments[item.target]
        best = 0
        for origin, form in self.origins.get(item.text, ()):
            if origin in held:
                best = max(best, 1 if form == "wrong" else 2)
        return best


def _sentences_of(text: str) -> list[str]:
    return [text[s:e] for s, e in sentence_spans(text)]


def build() -> AnswerCollection:
    """The collection (module docstring); the same on every call."""
    from judging.demo.rag import build as build_demo

    demo = build_demo()
    chunks = demo.chunks("paragraph")
    segments: dict[str, str] = {}
    where: dict[str, list[str]] = {}  # sentence -> segments holding it
    by_doc: dict[str, list[tuple[str, list[str]]]] = {}  # docid -> (segment, its sentences)
    for doc in demo.documents:
        for c in chunks[doc.docid]:
            seg = f"{doc.docid}#{c.pid}"
            text = doc.text[c.start : c.end]
            segments[seg] = text
            sents = _sentences_of(text)
            by_doc.setdefault(doc.docid, []).append((seg, sents))
            for s in sents:
                where.setdefault(s, []).append(seg)
    texts = {d.docid: d.text for d in demo.documents}
    all_segments = sorted(segments)
    banks: dict[str, list[Nugget]] = {}
    home: dict[tuple[str, str], str] = {}  # (topic, nugget text) -> its own segment
    for q in demo.questions:
        if not q.answers:
            continue
        chosen: list[tuple[str, str]] = []  # (sentence, segment)
        for span in (*q.answers, *q.related):
            s = texts[span.docid][span.start : span.end]
            seg = next(g for g, sents in by_doc[span.docid] if s in sents)
            chosen.append((s, seg))
        for span in q.answers:
            for seg, sents in by_doc[span.docid]:
                chosen += [(s, seg) for s in sents]
        seen: dict[str, str] = {}
        for s, seg in chosen:
            seen.setdefault(s, seg)
        picked = list(seen.items())[:8]
        n_vital = max(len(q.answers), round(0.4 * len(picked)))
        banks[q.qid] = [
            Nugget(f"n{j + 1}", s, "vital" if j < n_vital else "okay")
            for j, (s, _) in enumerate(picked)
        ]
        for s, seg in picked:
            home[(q.qid, s)] = seg
    origins: dict[str, set[tuple[str, str]]] = {}
    for s in where:
        origins.setdefault(s, set()).add((s, "full"))
        origins.setdefault(partial_form(s), set()).add((s, "partial"))
        w = wrong_form(s)
        if w is not None:
            origins.setdefault(w, set()).add((s, "wrong"))
    pool = sorted(where)  # every sentence of the help centre, for the fillers
    runs: dict[str, list[TopicAnswer]] = {}
    for k, system in enumerate(SYSTEMS):
        rng = random.Random(f"{SEED}-{k}-{system.name}")
        answers = []
        for t in sorted(banks):
            if system.name == "twin" and rng.random() < TWIN_SHARE:
                answers.append(next(a for a in runs[TWIN_OF] if a.topic_id == t))
                continue
            answers.append(
                _answer(system, t, banks[t], home, where, pool, all_segments, by_doc, rng)
            )
        runs[system.name] = answers
    said = {
        " ".join(s.text for s in a.sentences): frozenset(s.text for s in a.sentences)
        for answers in runs.values()
        for a in answers
    }
    return AnswerCollection(banks, runs, segments, origins, said)


def _answer(
    system: System,
    topic: str,
    bank: list[Nugget],
    home: dict[tuple[str, str], str],
    where: dict[str, list[str]],
    pool: list[str],
    all_segments: list[str],
    by_doc: dict[str, list[tuple[str, list[str]]]],
    rng: random.Random,
) -> TopicAnswer:
    """One system's answer to one topic: (sentence, the segment it came from) pairs, then the
    citations drawn."""
    lines: list[tuple[str, str | None]] = []
    for n in bank:
        full, part, wrong = system.vital if n.importance == "vital" else system.okay
        u = rng.random()
        own = home[(topic, n.text)]
        if u < full:
            lines.append((n.text, own))
        elif u < full + part:
            lines.append((partial_form(n.text), own))
        elif u < full + part + wrong:
            w = wrong_form(n.text)
            if w is not None:
                lines.append((w, own))
    for _ in range(rng.randint(*system.fillers)):
        s = rng.choice(pool)
        if all(s != line for line, _ in lines) and s not in {n.text for n in bank}:
            lines.append((s, rng.choice(where[s])))
    for _ in range(rng.randint(*system.made_up)):
        lines.insert(rng.randrange(len(lines) + 1), (rng.choice(_MADE_UP), None))
    if not lines:  # an answer says something: the first nugget's partial form
        lines.append((partial_form(bank[0].text), home[(topic, bank[0].text)]))
    references: list[str] = []
    sentences = []
    for text, source in lines:
        if rng.random() < system.uncited:
            sentences.append(AnswerSentence(text, ()))
            continue
        if source is not None and rng.random() < system.cite_own:
            cited = source
        elif source is not None and rng.random() < 0.5:
            doc = source.split("#")[0]
            cited = rng.choice([seg for seg, _ in by_doc[doc]])
        else:
            cited = rng.choice(all_segments)
        cites = [cited]
        if rng.random() < system.second:
            extra = rng.choice(all_segments)
            if extra != cited:
                cites.append(extra)
        for seg in cites:
            if seg not in references:
                references.append(seg)
        sentences.append(AnswerSentence(text, tuple(references.index(s) for s in cites)))
    return TopicAnswer(topic, tuple(references), tuple(sentences), None, 0)
