"""Measure names: ir_measures style (``nDCG@10``) and trec_eval style (``ndcg_cut_10``).

Every name parses to a :class:`Measure` (a family and an optional cutoff) whose canonical
:attr:`Measure.name` is the ir_measures spelling. Family names are matched case-insensitively;
trec_eval names accept both ``_`` and ``.`` before the cutoff (``P_10``, ``P.10``) and trec_eval's
comma lists (``P.5,10`` is P@5 and P@10).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["FAMILIES", "Measure", "UnknownMeasureError", "parse_measure", "parse_measures"]


@dataclass(frozen=True)
class _Family:
    name: str  # canonical ir_measures spelling
    cutoff: str  # "required", "optional" or "none"
    trec: str | None  # trec_eval name without cutoff
    trec_cut: str | None  # trec_eval name prefix with cutoff ("P" -> P_10)
    micro: bool  # a ratio of per-query counts, so micro-averaging is defined
    count: bool = False  # an integer count, aggregated by summing
    doc: str = ""


FAMILIES: dict[str, _Family] = {
    f.name: f
    for f in (
        _Family("P", "required", None, "P", True, doc="precision at k: rel in top k / k"),
        _Family("R", "required", None, "recall", True, doc="recall at k: rel in top k / R"),
        _Family("ceiling", "required", None, None, True, doc="achievable recall: min(k,R)/R"),
        _Family("RR", "optional", "recip_rank", None, False, doc="1 / rank of first rel"),
        _Family("AP", "optional", "map", "map_cut", False, doc="average precision"),
        _Family("Rprec", "none", "Rprec", None, True, doc="precision at rank R"),
        _Family("nDCG", "optional", "ndcg", "ndcg_cut", False, doc="normalised DCG"),
        _Family("Bpref", "none", "bpref", None, False, doc="binary preference"),
        _Family("Judged", "optional", None, None, True, doc="judged fraction of top k"),
        _Family("Unjudged", "optional", None, None, True, doc="unjudged fraction of top k"),
        _Family("infAP", "none", "infAP", None, False, doc="inferred AP (Yilmaz & Aslam)"),
        _Family("Success", "required", None, "success", True, doc="1 if a rel doc in top k"),
        _Family("NumRel", "none", "num_rel", None, True, True, doc="relevant documents, R"),
        _Family("NumRet", "none", "num_ret", None, True, True, doc="retrieved documents"),
        _Family("NumRelRet", "none", "num_rel_ret", None, True, True, doc="relevant retrieved"),
    )
}

# Lower-cased ir_measures-style spellings (and a few common aliases) -> family.
_IR_ALIASES: dict[str, str] = {f.lower(): f for f in FAMILIES}
_IR_ALIASES.update(
    {
        "precision": "P",
        "recall": "R",
        "mrr": "RR",
        "map": "AP",
        "ndcg": "nDCG",
        "r-prec": "Rprec",
        "rprecision": "Rprec",
        "numrel": "NumRel",
        "numret": "NumRet",
        "numrelret": "NumRelRet",
    }
)
# trec_eval names (lower-cased) -> (family, takes a cutoff)
_TREC: dict[str, tuple[str, bool]] = {}
for _f in FAMILIES.values():
    if _f.trec:
        _TREC[_f.trec.lower()] = (_f.name, False)
    if _f.trec_cut:
        _TREC[_f.trec_cut.lower()] = (_f.name, True)

_IR_RE = re.compile(r"^\s*([A-Za-z][A-Za-z_-]*?)\s*(?:@\s*(\S+))?\s*$")
_TREC_RE = re.compile(r"^\s*([A-Za-z][A-Za-z_]*?)(?:[._]([0-9][0-9,]*))?\s*$")


class UnknownMeasureError(ValueError):
    """A measure name that is not recognised; the message lists close matches."""


@dataclass(frozen=True, order=True)
class Measure:
    """A measure family with an optional cutoff ``k``."""

    family: str
    cutoff: int | None = None

    @property
    def name(self) -> str:
        """Canonical ir_measures-style name, e.g. ``nDCG@10``."""
        return self.family if self.cutoff is None else f"{self.family}@{self.cutoff}"

    @property
    def trec_name(self) -> str | None:
        """trec_eval's name (``ndcg_cut_10``), or None when trec_eval has no such measure."""
        fam = FAMILIES[self.family]
        if self.cutoff is None:
            return fam.trec
        return f"{fam.trec_cut}_{self.cutoff}" if fam.trec_cut else None

    @property
    def micro_defined(self) -> bool:
        """True when the measure is a ratio of per-query counts (micro-averaging is defined)."""
        return FAMILIES[self.family].micro

    @property
    def is_count(self) -> bool:
        """True for NumRel, NumRet, NumRelRet (aggregated by summing, like trec_eval)."""
        return FAMILIES[self.family].count

    def __str__(self) -> str:
        return self.name


def _known_spellings() -> list[str]:
    out: list[str] = []
    for f in FAMILIES.values():
        if f.cutoff == "required":
            out.append(f"{f.name}@10")
        else:
            out.append(f.name)
            if f.cutoff == "optional":
                out.append(f"{f.name}@10")
        if f.trec:
            out.append(f.trec)
        if f.trec_cut:
            out.append(f"{f.trec_cut}_10")
    return list(dict.fromkeys(out))


def _unknown(text: str, why: str = "") -> UnknownMeasureError:
    import difflib  # only for messages: kept out of every reader's start-up

    known = _known_spellings()
    close = difflib.get_close_matches(text.strip(), known, n=4, cutoff=0.5)
    if not close:
        low = {k.lower(): k for k in known}
        close = [low[m] for m in difflib.get_close_matches(text.strip().lower(), list(low), n=4)]
    msg = f"invalid measure {text!r} ({why})" if why else f"unknown measure {text!r}"
    if close:
        msg += f"; close matches: {', '.join(close)}"
    families = ", ".join(
        f"{f.name}@k" if f.cutoff == "required" else f.name for f in FAMILIES.values()
    )
    return UnknownMeasureError(f"{msg}. Known measures: {families}")


def _cutoff(text: str, raw: str) -> int:
    if not raw.isdigit() or int(raw) < 1:
        raise _unknown(text, f"cutoff {raw!r} must be a positive integer")
    return int(raw)


def _make(text: str, family: str, cutoff: int | None) -> Measure:
    fam = FAMILIES[family]
    if cutoff is None and fam.cutoff == "required":
        raise _unknown(text, f"{family} needs a cutoff, e.g. {family}@10")
    if cutoff is not None and fam.cutoff == "none":
        raise _unknown(text, f"{family} takes no cutoff")
    return Measure(family, cutoff)


def parse_measures(names: Iterable[str]) -> list[Measure]:
    """Parse measure names (either style; trec_eval comma lists expand), keeping first-seen order.

    Duplicates are dropped. Raises :class:`UnknownMeasureError` (a ``ValueError``) naming close
    matches for an unknown name.
    """
    out: dict[Measure, None] = {}
    for text in names:
        for m in _parse_many(text):
            out.setdefault(m, None)
    return list(out)


def parse_measure(text: str) -> Measure:
    """Parse one measure name, e.g. ``nDCG@10``, ``ndcg_cut_10``, ``P.10``, ``recip_rank``.

    ir_measures style: ``Family`` or ``Family@k`` (families: P, R, ceiling, RR, AP, Rprec, nDCG,
    Bpref, Judged, Unjudged, infAP, Success, NumRel, NumRet, NumRelRet; case-insensitive).
    trec_eval style: ``P_k``, ``recall_k``, ``recip_rank``, ``map``, ``map_cut_k``, ``Rprec``,
    ``ndcg``, ``ndcg_cut_k``, ``bpref``, ``infAP``, ``success_k``, ``num_rel``, ``num_ret``,
    ``num_rel_ret`` (``.`` may replace the ``_`` before k).
    """
    many = _parse_many(text)
    if len(many) != 1:
        raise _unknown(text, "a list of cutoffs names several measures; use parse_measures")
    return many[0]


def _parse_many(text: str) -> list[Measure]:
    m = _IR_RE.match(text)
    if m and m.group(2) is not None:
        fam = _IR_ALIASES.get(m.group(1).lower())
        if fam is None:
            raise _unknown(text)
        return [_make(text, fam, _cutoff(text, m.group(2)))]
    t = _TREC_RE.match(text)
    if t:
        base, cut = t.group(1).lower(), t.group(2)
        if cut is None:
            if base in _TREC and not _TREC[base][1]:
                return [_make(text, _TREC[base][0], None)]
            if base in _IR_ALIASES:
                return [_make(text, _IR_ALIASES[base], None)]
        elif base in _TREC and _TREC[base][1]:
            cuts = [c for c in cut.split(",") if c]
            return [_make(text, _TREC[base][0], _cutoff(text, c)) for c in cuts]
        elif base in _IR_ALIASES:
            fam = _IR_ALIASES[base]
            if FAMILIES[fam].cutoff != "none":
                return [_make(text, fam, _cutoff(text, cut))]
    raise _unknown(text)
