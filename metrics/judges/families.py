"""Family gaps of an automatic judge (defined in :mod:`metrics.judges.audit`): which model a run
or a judge is built on (:func:`model_family`), and the mean score gap of each model's runs."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from metrics.judges.audit import _json

__all__ = [
    "FamilyGap",
    "family_gaps",
    "model_family",
    "same_family",
]

_DATE_SUFFIX = re.compile(r"(?:[-@](?:\d{4}-\d{2}-\d{2}|\d{8}|\d{4}|\d{2}-\d{4}|latest|preview))+$")


def model_family(name: str) -> str:
    """The family a declared model name belongs to, for comparing runs with the judge.

    The rule, in order: lower-case and trim; keep what follows the last ``/`` (drop a provider
    or organisation: ``openai/gpt-4o``, ``meta-llama/Llama-3.1-8B``); drop an Ollama-style tag
    after ``:`` (``llama3.1:70b`` -> ``llama3.1``); turn ``_`` and spaces into ``-``; drop
    trailing snapshot stamps, repeatedly: ``-2024-08-06``, ``-20241022``, ``-0613``,
    ``-04-2024``, ``@20240620``, ``-latest``, ``-preview``. So ``gpt-4o-2024-08-06`` and
    ``OpenAI/GPT-4o`` both give ``gpt-4o``; ``claude-3-5-sonnet@20240620`` gives
    ``claude-3-5-sonnet``. Size or variant words (``mini``, ``8b``, ``instruct``) are kept: they
    name different models; :func:`same_family` relates them.
    """
    s = name.strip().lower()
    s = s.rsplit("/", 1)[-1]
    s = s.split(":", 1)[0]
    s = re.sub(r"[\s_]+", "-", s)
    return _DATE_SUFFIX.sub("", s).strip("-")


def same_family(a: str, b: str) -> bool:
    """Whether two model names are one family: after :func:`model_family`, equal, or one extends
    the other after a hyphen (``gpt-4o-mini`` is in ``gpt-4o``'s family; ``gpt-4`` and
    ``gpt-4o`` are not, nor are ``llama-3`` and ``llama-3.1``). Empty names match nothing."""
    fa, fb = model_family(a), model_family(b)
    if not fa or not fb:
        return False
    short, long = sorted((fa, fb), key=len)
    return long == short or long.startswith(short + "-")


@dataclass(frozen=True)
class FamilyGap:
    """The runs declaring one model family and their mean score gap, automatic - human.

    ``family`` is the :func:`model_family` of the declared names (``"(none declared)"`` for runs
    declaring none); a run declaring several models is in each of their families. ``mean_gap``
    averages ``auto - human`` over the family's runs; ``relative_gap`` subtracts the mean gap of
    all runs, so a judge that inflates every score does not look biased toward one family.
    ``circular``: the family is the judge's own (:func:`same_family`).
    """

    family: str
    runs: list[str]
    mean_gap: float
    relative_gap: float
    human_mean: float
    auto_mean: float
    circular: bool

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict (NaN -> None)."""
        return {
            "family": self.family,
            "runs": list(self.runs),
            "mean_gap": _json(self.mean_gap),
            "relative_gap": _json(self.relative_gap),
            "human_mean": _json(self.human_mean),
            "auto_mean": _json(self.auto_mean),
            "circular": self.circular,
        }


NO_MODEL = "(none declared)"


def family_gaps(
    human_scores: Mapping[str, float],
    auto_scores: Mapping[str, float],
    families: Mapping[str, Sequence[str]],
    judge_model: str,
) -> list[FamilyGap]:
    """Mean score gap per model family, circular families (the judge's own) first.

    ``families`` maps a run to the models it declares (runs absent from it, or declaring none,
    form the ``"(none declared)"`` family). Only runs scored under both qrels count. Families
    are sorted circular first, then by name.
    """
    runs = sorted(set(human_scores) & set(auto_scores))
    gap = {r: float(auto_scores[r]) - float(human_scores[r]) for r in runs}
    overall = float(np.mean(list(gap.values()))) if runs else math.nan
    members: dict[str, list[str]] = {}
    for r in runs:
        names = {model_family(m) for m in families.get(r, ())} - {""}
        for fam in sorted(names) or [NO_MODEL]:
            members.setdefault(fam, []).append(r)
    out = []
    for fam, rs in members.items():
        mean_gap = float(np.mean([gap[r] for r in rs]))
        out.append(
            FamilyGap(
                family=fam,
                runs=rs,
                mean_gap=mean_gap,
                relative_gap=mean_gap - overall,
                human_mean=float(np.mean([float(human_scores[r]) for r in rs])),
                auto_mean=float(np.mean([float(auto_scores[r]) for r in rs])),
                circular=fam != NO_MODEL and same_family(fam, judge_model),
            )
        )
    return sorted(out, key=lambda f: (not f.circular, f.family))
