"""Highlighting a long document on the judging path: ours vs the exact-word highlighter it
replaced, and vs stemming every word.

    PYTHONPATH=. .venv/bin/python benchmarks/highlight_bench.py [--kb 50] [--repeat 50]
        [--share 0.06]

The document: ``--kb`` kilobytes of English-like text (fixed seed), words drawn from about 250
common English words and a topic's own words and their inflections (``--share``, 6% by
default: about 7% of the words are marked, more than in most documents), in paragraphs of about
80 words, with a few HTML-like pieces and entities. The topic: a TREC-style title, description
and narrative (about 25 content words after the stop list) and two extra phrases, as
``topic_terms`` builds them.

- **ours**: ``paragraphs(text, topic_terms(...))``, the terms built once (``topic_terms`` is
  cached by the topic's text, as on the judging path from the second document of a topic on),
  stems cached across repeats as in a running server; also the first call on a cold stem cache
  (the worst case: a fresh process's first document).
- **exact words** (the peer, same process): the highlighter before issue 15, one
  case-insensitive regular expression of the title's words, no stemming.
- **stem every word**: the straightforward stemming highlighter, each word of the document
  stemmed (cached) and looked up.

Figures are medians over ``--repeat`` runs of the call only, wall time and CPU time; ratios
of CPU times.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import statistics
import sys
import time
from collections.abc import Callable, Iterable
from types import SimpleNamespace

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "judging.settings")

COMMON = str.split(
    "the of and to in a is that for it as was with be by on not he this are or his from at "
    "which but have an they you were her she there been one all we their has would when if "
    "so no will can more other its into only new some could time these two may then do first "
    "any like now my such make over our even most me state after also made many did must "
    "before back through years where much your way well down should because each just those "
    "people how too little good world very still own see men work long here get both between "
    "life being under never day same another know while last might us great old year off come "
    "since against go came right used take three states himself few house use during without "
    "again place american around however home small found thought went say part once general "
    "high upon school every government public country per company report market economic "
    "program policy development research president national business percent million said"
)
TOPIC = SimpleNamespace(
    title="solar sail propulsion costs",
    description="What does it cost to build and launch spacecraft propelled by solar sails?",
    narrative=(
        "A relevant document will discuss the economics of light-pressure propulsion for "
        "spacecraft: mission budgets, material prices, launch contracts. Documents that only "
        "mention NASA or rockets in general are not relevant."
    ),
)
CAMPAIGN = SimpleNamespace(highlight_terms=["light pressure", "Japanese IKAROS mission"])
TOPICAL = str.split(
    "solar solars sail sails sailing costs cost costing costly propulsion propelled propel "
    "spacecraft launch launched launches economics economic budgets budget material materials "
    "prices priced contracts contract mission missions light pressure NASA rockets IKAROS"
)
HOSTILE = ["<b>", "&amp;", "</mark>", '"quoted"', "a&b", "<script>x</script>"]


def document(kb: int, share: float = 0.06, seed: int = 15) -> str:
    rnd = random.Random(seed)
    words: list[str] = []
    size = 0
    while size < kb * 1000:
        r = rnd.random()
        w = rnd.choice(TOPICAL) if r < share else rnd.choice(HOSTILE) if r < share + 0.005 else None
        w = w or rnd.choice(COMMON)
        if rnd.random() < 0.08:
            w = w.capitalize() + rnd.choice([",", ".", ";", ""])
        words.append(w)
        size += len(w) + 1
        if len(words) % 80 == 0:
            words.append("\n\n")
    return " ".join(words)[: kb * 1000]


def exact_words(text: str, terms: Iterable[str]) -> str:
    """The highlighter before issue 15 (exact, case-insensitive title words)."""
    from django.utils.html import escape

    words = sorted({t for t in terms if t}, key=len, reverse=True)
    pattern = re.compile(r"(?<![\w])(" + "|".join(map(re.escape, words)) + r")(?![\w])", re.I)
    out: list[str] = []
    for para in [p.strip() for p in re.split(r"\n\s*\n|\n", text) if p.strip()]:
        last = 0
        for m in pattern.finditer(para):
            out.append(escape(para[last : m.start()]))
            out.append(f"<mark>{escape(m.group(0))}</mark>")
            last = m.end()
        out.append(escape(para[last:]))
    return "".join(out)


def stem_every_word(text: str, stems: dict[str, str]) -> str:
    from django.utils.html import escape

    from judging.web.highlight import stem

    token = re.compile(r"[^\W_]+")
    out: list[str] = []
    for para in [p.strip() for p in re.split(r"\n\s*\n|\n", text) if p.strip()]:
        last = 0
        for m in token.finditer(para):
            cls = stems.get(stem(m.group(0)))
            if cls:
                out.append(escape(para[last : m.start()]))
                out.append(f'<mark class="{cls}">{escape(m.group(0))}</mark>')
                last = m.end()
        out.append(escape(para[last:]))
    return "".join(out)


def median_ms(f: Callable[[], object], repeat: int) -> str:
    """Median wall and CPU (process) time of ``f``, in ms: "wall (cpu)"; on a busy machine the
    CPU time is the steadier figure."""
    wall, cpu = [], []
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        f()
        wall.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    return f"{statistics.median(wall) * 1000:6.2f} ({statistics.median(cpu) * 1000:6.2f})"


def ratio(a: str, b: str) -> float:
    """Ratio of the CPU figures of two ``median_ms`` answers."""
    return float(a.split("(")[1].rstrip(")")) / float(b.split("(")[1].rstrip(")"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kb", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--share", type=float, default=0.06, help="share of topic words")
    args = parser.parse_args()
    import django

    django.setup()
    from judging.web.highlight import paragraphs, query_terms, stem, topic_terms

    text = document(args.kb, args.share)
    t = time.perf_counter()
    terms = topic_terms(CAMPAIGN, TOPIC)
    first = paragraphs(text, terms)
    cold = f"{(time.perf_counter() - t) * 1000:6.2f}"
    marks = sum(p.count("<mark") for p in first)
    words = len(re.findall(r"[^\W_]+", text))
    ours = median_ms(lambda: paragraphs(text, terms), args.repeat)
    title_words = query_terms(TOPIC.title)
    peer = median_ms(lambda: exact_words(text, title_words), args.repeat)
    stems = dict(terms.words)
    for w in text.split():
        stem(w)
    every = median_ms(lambda: stem_every_word(text, stems), args.repeat)
    print(
        f"{len(text) / 1000:.0f} KB, {words} words, {marks} marks; Python "
        f"{sys.version.split()[0]}, {os.cpu_count()} CPUs; median of {args.repeat}"
    )
    print("                               wall ms (CPU ms)")
    print(f"ours (stems, cached terms)     {ours}")
    print(f"ours, first call, cold caches  {cold}")
    print(f"exact title words (before)     {peer}   ours / before = {ratio(ours, peer):.2f}")
    print(f"stem every word (warm cache)   {every}   ours / that   = {ratio(ours, every):.2f}")


if __name__ == "__main__":
    main()
