"""Measure names: ir_measures style (``nDCG@10``) and trec_eval style (``ndcg_cut_10``).

Every name parses to a :class:`Measure` (a family and an optional cutoff) whose canonical
:attr:`Measure.name` is the ir_measures spelling. Family names are matched case-insensitively;
trec_eval names accept both ``_`` and ``.`` before the cutoff (``P_10``, ``P.10``) and trec_eval's
comma lists (``P.5,10`` is P@5 and P@10). The names come from the registry
(:mod:`metrics.registry`): a family added there is parsed here with no change.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from metrics.registry import FAMILIES, Family

__all__ = ["Measure", "UnknownMeasureError", "parse_measure", "parse_measures"]


# Lower-cased ir_measures-style spellings (and each family's aliases) -> family.
_IR_ALIASES: dict[str, str] = {f.lower(): f for f in FAMILIES}
_IR_ALIASES.update({a: f.name for f in FAMILIES.values() for a in f.aliases})
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
    def spec(self) -> Family:
        """The family's registry entry (:mod:`metrics.registry`)."""
        return FAMILIES[self.family]

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
