"""The one grammar of measure names, shared by every reader of them.

A name is ``BASE``, ``BASE@CUTOFF``, ``BASE(PARAMS)`` or ``BASE(PARAMS)@CUTOFF`` (ir_measures
style: ``nDCG@10``, ``P(rel=2)@10``, ``alpha_nDCG(alpha=0.5)@20``), blanks allowed around the
parts; ``BASE`` holds no blank, ``(`` or ``@``; ``PARAMS`` is ``key=value`` parts separated by
top-level commas (a value may be quoted or bracketed and then hold commas). :func:`split_name`
splits a name into :class:`NameParts` and :func:`split_params` splits the parameters; what a
base, parameter or cutoff may be is the reader's to check against its own measures:

- :func:`metrics.measures.names.parse_measure`: the registry's families (and trec_eval's own
  spellings, ``ndcg_cut_10``, which are not of this grammar);
- :func:`metrics.measures.diversity_names.parse_diversity_measure`: the diversity measures;
- PPI's four measures (:mod:`metrics.sampling.forms`): ``P@k``, ``R@k``, ``nDCG@k``, ``AP``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["NameParts", "split_name", "split_params"]

_NAME = re.compile(r"^\s*([^\s(@]+)\s*(?:\((.*)\))?\s*(?:@\s*(\S+))?\s*$")


@dataclass(frozen=True)
class NameParts:
    """A measure name's parts as written: ``base``, the text in parentheses (None: none) and
    the text after ``@`` (None: none)."""

    base: str
    params: str | None
    cutoff: str | None


def split_name(text: str) -> NameParts | None:
    """``text``'s parts, or None when it is not of the grammar."""
    m = _NAME.match(text)
    if m is None:
        return None
    return NameParts(m.group(1), m.group(2), m.group(3))


def split_params(text: str) -> list[str]:
    """``a=1, b='x,y', c={1:2,3:4}`` -> its top-level comma-separated parts, stripped, empty
    parts dropped."""
    parts: list[str] = []
    depth, quote, start = 0, "", 0
    for i, ch in enumerate(text):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]
