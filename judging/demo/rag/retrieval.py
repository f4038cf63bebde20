"""The retrieval setups of the demo: pure functions from passages and questions to a run.

A setup takes ``passages``, a list of ``(passage_id, text)``, and the questions, and returns
``{qid: {passage_id: score}}``: the best :data:`DEPTH` passages of each question (BM25: of those
sharing a term with it, which may be fewer), scores strictly decreasing. Scores are rounded to 9
decimals, so that float noise in the last bits does not change the output from machine to machine,
and a tie (broken by passage id) is lowered by 1e-9 per place, so that every reader of the run
orders it the same way.

* ``bm25``: Okapi BM25 (Robertson & Zaragoza 2009, "The Probabilistic Relevance Framework: BM25
  and Beyond"), ``k1 = 0.9``, ``b = 0.4`` (Anserini's defaults) and Lucene's idf
  ``log(1 + (N - df + 0.5) / (df + 0.5))``, over lower-cased words without :data:`STOPWORDS`,
  stemmed by :func:`stem`, a crude suffix stripper.
* ``bm25_nostem``: the same without stemming, the change a regression check should catch:
  "rotated" no longer matches "rotate", nor "roles" "role".
* ``dense``: **a stand-in for a dense retriever**, since the demo downloads no model. A text is
  read as words after two rewrites: :data:`SYNONYMS`, a hand-written list of paraphrases, folds
  each into one word ("bill" -> "invoice", "wiped" -> "delete"), and codes, numbers and acronyms
  ("AES-256", "429", "SOC") become one token, as a small model's vocabulary splits them into
  pieces that carry little. The words' character 3- to 5-grams (``#word#``) are hashed into
  :data:`DIMENSIONS` = 192 buckets (crc32), weighted ``log(1 + count) * idf`` (the idf of a bucket
  over the passages, ``log((1 + N) / (1 + df)) + 1``) and L2-normalised; the score is the cosine.
  So it finds answers worded differently from the question, as a dense model does, and the
  collisions of a small vector blur exact words, as one does too. It knows only the paraphrases
  listed, and measures nothing about real dense models.
* ``hybrid``: reciprocal rank fusion (Cormack, Clarke & Buettcher, SIGIR 2009) of ``bm25`` and
  ``dense``: ``sum 1 / (60 + rank)`` over the two rankings' first :data:`FUSION_DEPTH` passages.
"""

from __future__ import annotations

import math
import re
import zlib
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from judging.demo.rag.questions import RagQuestion

DEPTH = 20
FUSION_DEPTH = 100
RRF_K = 60
K1, B = 0.9, 0.4
DIMENSIONS = 192

Passages = Sequence[tuple[str, str]]
RunDict = dict[str, dict[str, float]]

_WORD = re.compile(r"[a-z0-9]+")

# fmt: off
STOPWORDS = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "does", "for", "from", "how",
    "i", "if", "in", "is", "it", "its", "my", "of", "on", "or", "our", "so", "that", "the",
    "their", "them", "then", "they", "this", "to", "we", "what", "when", "where", "which", "who",
    "will", "with", "you", "your",
})

SYNONYMS: dict[str, str] = {
    # a word or phrase on the left is read as the words on the right
    "money back": "refund", "refunded": "refund", "refunds": "refund", "reimbursement": "refund",
    "reimbursements": "refund", "stop": "cancel", "cancellation": "cancel",
    "cancellations": "cancel", "cancelled": "cancel", "bill": "invoice", "bills": "invoice",
    "statement": "invoice", "invoices": "invoice", "earlier": "past", "old": "past",
    "previous": "past", "plan": "subscription", "promo": "promotional", "voucher": "credit",
    "vouchers": "credit", "coupon": "credit", "coupons": "credit", "credits": "credit",
    "run out": "expire", "shut down": "close", "closed": "close", "closure": "close",
    "files": "data", "file": "object", "wiped": "delete", "erased": "delete",
    "removed": "delete", "deleted": "delete", "for good": "permanently", "phone": "device",
    "lost": "gone", "two-step": "two-factor", "login": "sign in", "logins": "sign in",
    "log in": "sign in", "sign-ins": "sign in", "staff": "members", "okta": "identity provider",
    "company": "organisation", "history": "log", "user actions": "audit events",
    "kept": "retain", "retained": "retain", "block": "refuse", "idle": "without activity",
    "signed out": "sessions end", "eu": "europe", "keep": "stored",
    "cheapest": "lowest price", "archives": "cold", "seldom": "rarely",
    "bring back": "restore", "recover": "restore", "mistake": "accident", "calls": "requests",
    "call": "request", "throttled": "rate limit", "retried": "repeated", "twice": "repeated",
    "broken": "incidents", "outage": "incidents", "right now": "current", "warn": "announce",
    "announced": "announce", "planned": "scheduled", "downtime": "maintenance",
    "servers": "instances", "add": "launch", "launches": "launch", "traffic": "load",
    "move": "migrate",
}
# fmt: on

_PHRASES = sorted(SYNONYMS, key=len, reverse=True)
_CODE = re.compile(r"\b(?:[A-Za-z]*[0-9][A-Za-z0-9]*|[A-Z]{2,}[a-z]?)\b")
_FOLD = re.compile(r"\b(" + "|".join(re.escape(p) for p in _PHRASES) + r")\b")

_SUFFIXES = (
    ("ational", "ate"),
    ("ization", "ize"),
    ("ies", "y"),
    ("ied", "y"),
    ("ions", ""),
    ("ion", ""),
    ("ings", ""),
    ("ing", ""),
    ("ed", ""),
    ("es", ""),
    ("s", ""),
)


def stem(word: str) -> str:
    """A crude suffix stripper: the first matching suffix of :data:`_SUFFIXES` replaced (if at
    least three letters remain, and not ``ss``), then a final ``e`` dropped: "rotated",
    "rotating", "rotation" and "rotate" all become "rotat"; "copies" and "copied" become "copy"."""
    if not word.endswith("ss"):
        for suffix, replacement in _SUFFIXES:
            if word.endswith(suffix) and len(word) - len(suffix) >= 3:
                word = word[: len(word) - len(suffix)] + replacement
                break
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    return word


def tokens(text: str, *, stemmed: bool = True) -> list[str]:
    """BM25's terms: lower-cased words and numbers, stopwords removed, stemmed or not."""
    words = [w for w in _WORD.findall(text.lower()) if w not in STOPWORDS]
    return [stem(w) for w in words] if stemmed else words


def _ranked(scores: Sequence[float], ids: Sequence[str], depth: int) -> dict[str, float]:
    """The ``depth`` best ``id -> score``, rounded, made strictly decreasing (module docstring)."""
    order = sorted(range(len(ids)), key=lambda i: (-scores[i], ids[i]))[:depth]
    out: dict[str, float] = {}
    last = math.inf
    for i in order:
        score = round(float(scores[i]), 9)
        last = out[ids[i]] = score if score < last else round(last - 1e-9, 9)
    return out


def _bm25(
    passages: Passages, questions: Sequence[RagQuestion], *, stemmed: bool, depth: int
) -> RunDict:
    ids = [pid for pid, _ in passages]
    docs = [Counter(tokens(text, stemmed=stemmed)) for _, text in passages]
    lengths = np.array([sum(d.values()) for d in docs], dtype=np.float64)
    norm = K1 * (1 - B + B * lengths / lengths.mean())
    df = Counter(t for d in docs for t in d)
    n = len(docs)
    run: RunDict = {}
    for q in questions:
        scores = np.zeros(n)
        for term, qtf in Counter(tokens(q.text, stemmed=stemmed)).items():
            if term not in df:
                continue
            idf = math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
            tf = np.array([d.get(term, 0) for d in docs], dtype=np.float64)
            scores += qtf * idf * tf * (K1 + 1) / (tf + norm)
        matched = np.flatnonzero(scores > 0)  # the passages sharing a term; maybe none
        if matched.size:
            run[q.qid] = _ranked(scores[matched].tolist(), [ids[i] for i in matched], depth)
    return run


def bm25(passages: Passages, questions: Sequence[RagQuestion], *, depth: int = DEPTH) -> RunDict:
    """BM25 with stemming (module docstring)."""
    return _bm25(passages, questions, stemmed=True, depth=depth)


def bm25_nostem(
    passages: Passages, questions: Sequence[RagQuestion], *, depth: int = DEPTH
) -> RunDict:
    """BM25 without stemming: the regression (module docstring)."""
    return _bm25(passages, questions, stemmed=False, depth=depth)


def _fold(text: str) -> list[str]:
    """The stand-in's words: codes and acronyms one token, paraphrases folded (:data:`SYNONYMS`)."""
    text = _CODE.sub(lambda m: m.group() if m.group().lower() in SYNONYMS else "0", text)
    return _WORD.findall(_FOLD.sub(lambda m: SYNONYMS[m.group(1)], text.lower()))


def _embed(texts: Sequence[list[str]]) -> np.ndarray:
    """Hashed character 3- to 5-gram counts of each text's words (``#word#``), one row per text,
    bucket ``crc32(ngram) mod DIMENSIONS`` (deterministic, unlike ``hash``)."""
    matrix = np.zeros((len(texts), DIMENSIONS))
    for row, words in enumerate(texts):
        for word in words:
            padded = f"#{word}#"
            for n in (3, 4, 5):
                for i in range(len(padded) - n + 1):
                    matrix[row, zlib.crc32(padded[i : i + n].encode()) % DIMENSIONS] += 1
    return matrix


def _unit(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms > 0, norms, 1.0)


def dense(passages: Passages, questions: Sequence[RagQuestion], *, depth: int = DEPTH) -> RunDict:
    """The dense stand-in (module docstring): cosine of TF-IDF-weighted hashed n-grams."""
    ids = [pid for pid, _ in passages]
    counts = _embed([_fold(text) for _, text in passages])
    df = np.count_nonzero(counts, axis=0)
    idf = np.log((1 + len(ids)) / (1 + df)) + 1
    docs = _unit(np.log1p(counts) * idf)
    asked = _embed([_fold(q.text) for q in questions])
    similarity = _unit(np.log1p(asked) * idf) @ docs.T
    return {q.qid: _ranked(similarity[i].tolist(), ids, depth) for i, q in enumerate(questions)}


def hybrid(passages: Passages, questions: Sequence[RagQuestion], *, depth: int = DEPTH) -> RunDict:
    """Reciprocal rank fusion of ``bm25`` and ``dense`` (module docstring)."""
    runs = [f(passages, questions, depth=FUSION_DEPTH) for f in (bm25, dense)]
    out: RunDict = {}
    for q in questions:
        fused: dict[str, float] = {}
        for run in runs:
            for rank, pid in enumerate(run.get(q.qid, {}), start=1):
                fused[pid] = fused.get(pid, 0.0) + 1 / (RRF_K + rank)
        out[q.qid] = _ranked(list(fused.values()), list(fused), depth)
    return out


@dataclass(frozen=True)
class Setup:
    """A retrieval setup: its run tag, what it is in a sentence, and the function."""

    name: str
    description: str
    retrieve: Callable[[Passages, Sequence[RagQuestion]], RunDict]


SETUPS: tuple[Setup, ...] = (
    Setup("bm25", "BM25 (k1=0.9, b=0.4) over stemmed words", bm25),
    Setup("dense", "stand-in for a dense model: hashed character n-grams with paraphrases", dense),
    Setup("hybrid", "reciprocal rank fusion (k=60) of bm25 and dense", hybrid),
    Setup("bm25_nostem", "bm25 without stemming: a change that loses recall", bm25_nostem),
)
