"""The diversity measures' names (ir_measures and ndeval styles) read through the one
measure-name grammar (:mod:`metrics.measures.grammar`): :class:`DiversityMeasure`,
:func:`parse_diversity_measure`, and the hint :mod:`metrics.measures.names` gives when such a
name is asked of ordinary qrels."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from metrics.measures.grammar import split_name, split_params

__all__ = [
    "DEFAULT_MEASURES",
    "DiversityMeasure",
    "UnknownDiversityMeasure",
    "diversity_hint",
    "parse_diversity_measure",
]

KINDS = ("alpha_DCG", "alpha_nDCG", "ERR_IA", "nERR_IA", "P_IA", "StRecall")


_NDEVAL = {
    "alpha_DCG": "alpha-DCG",
    "alpha_nDCG": "alpha-nDCG",
    "ERR_IA": "ERR-IA",
    "nERR_IA": "nERR-IA",
    "P_IA": "P-IA",
    "StRecall": "strec",
}


_USES_ALPHA = {"alpha_DCG", "alpha_nDCG", "ERR_IA", "nERR_IA"}


_ALIASES: dict[str, str] = {}
for _k, _n in _NDEVAL.items():
    _ALIASES[_k.lower()] = _k
    _ALIASES[_n.lower()] = _k
_ALIASES["\u03b1_dcg"] = "alpha_DCG"
_ALIASES["\u03b1_ndcg"] = "alpha_nDCG"
_ALIASES["\u03b1-dcg"] = "alpha_DCG"
_ALIASES["\u03b1-ndcg"] = "alpha_nDCG"
_ALIASES["strecall"] = "StRecall"


class UnknownDiversityMeasure(ValueError):
    """A measure name that :func:`parse_diversity_measure` cannot read."""


@dataclass(frozen=True, order=True)
class DiversityMeasure:
    """One diversity measure at a cutoff: ``kind`` (an ir_measures name in :data:`KINDS`),
    ``cutoff`` k >= 1, ``alpha`` (redundancy intolerance; ignored by P_IA and StRecall),
    ``rel`` (minimum grade that is relevant) and ``judged_only``."""

    kind: str
    cutoff: int
    alpha: float = 0.5
    rel: int = 1
    judged_only: bool = False

    def _params(self) -> str:
        parts = []
        if self.kind in _USES_ALPHA and self.alpha != 0.5:
            parts.append(f"alpha={self.alpha:g}")
        if self.judged_only:
            parts.append("judged_only=True")
        if self.rel != 1:
            parts.append(f"rel={self.rel}")
        return f"({','.join(parts)})" if parts else ""

    @property
    def name(self) -> str:
        """The ir_measures-style name, parameters shown only when not the default."""
        return f"{self.kind}{self._params()}@{self.cutoff}"

    @property
    def ndeval_name(self) -> str:
        """ndeval's column name (``alpha-nDCG@20``), with non-default parameters appended."""
        return f"{_NDEVAL[self.kind]}{self._params()}@{self.cutoff}"

    def __str__(self) -> str:
        return self.name


def _known_names() -> str:
    ir = ", ".join(f"{k}@k" for k in KINDS)
    nd = ", ".join(f"{v}@k" for v in _NDEVAL.values())
    return (
        f"ir_measures style {ir} (parameters alpha=, rel=, judged_only=, as in "
        f"alpha_nDCG(alpha=0.5)@20); ndeval style {nd}"
    )


def _bool(text: str) -> bool:
    low = text.strip().lower()
    if low in ("true", "1", "yes"):
        return True
    if low in ("false", "0", "no"):
        return False
    raise ValueError(f"{text!r} is not a boolean")


def diversity_hint(text: str) -> str | None:
    """When ``text`` names one of the diversity measures here (either style, parameters and
    cutoff aside), where to compute it: they need subtopic qrels, which ordinary qrels are not;
    None for any other name. Read by :mod:`metrics.measures.names` for its unknown-measure
    message."""
    m = split_name(text)
    if not m or m.base.lower() not in _ALIASES:
        return None
    name = text.strip()
    return (
        f"{name} is a diversity measure: use `python -m metrics diversity SUBTOPIC_QRELS RUN "
        f"-m {name}` (metrics.measures.diversity.evaluate_diversity in Python), over subtopic "
        "qrels: ndeval's `topic subtopic docno grade` lines, one per document and subtopic"
    )


def parse_diversity_measure(text: str) -> DiversityMeasure:
    """Parse ``alpha_nDCG(alpha=0.5)@20``, ``ERR-IA@10``, ``strec@5``... (case-insensitive).

    Raises :class:`UnknownDiversityMeasure` naming the known measures when the name is not one
    of them, and when the cutoff or a parameter is missing or malformed.
    """
    m = split_name(text)
    if not m:
        raise UnknownDiversityMeasure(
            f"unknown diversity measure {text!r}; known: {_known_names()}"
        )
    base, params, cutoff = m.base, m.params, m.cutoff
    kind = _ALIASES.get(base.lower())
    if kind is None:
        raise UnknownDiversityMeasure(
            f"unknown diversity measure {text!r}; known: {_known_names()}"
        )
    values: dict[str, Any] = {}
    for part in split_params(params or ""):
        key, eq, value = part.partition("=")
        key = key.strip().lower().replace("\u03b1", "alpha")
        try:
            if not eq:
                raise ValueError("expected NAME=VALUE")
            if key == "alpha" and kind in _USES_ALPHA:
                values["alpha"] = float(value)
                if not 0.0 <= values["alpha"] <= 1.0:
                    raise ValueError("alpha must be in [0, 1]")
            elif key == "rel":
                values["rel"] = int(value)
                if values["rel"] < 1:
                    raise ValueError("rel must be >= 1")
            elif key == "judged_only":
                values["judged_only"] = _bool(value)
            elif key == "cutoff":
                if cutoff is not None:
                    raise ValueError("cutoff given twice")
                cutoff = value.strip()
            else:
                allowed = "alpha, rel, judged_only" if kind in _USES_ALPHA else "rel, judged_only"
                raise ValueError(f"unknown parameter {key!r} (allowed: {allowed})")
        except ValueError as exc:
            raise UnknownDiversityMeasure(f"{text!r}: parameter {part!r}: {exc}") from None
    if cutoff is None:
        raise UnknownDiversityMeasure(
            f"{text!r}: a cutoff is needed, as in {_NDEVAL[kind]}@20 or {kind}@20"
        )
    try:
        k = int(cutoff)
    except ValueError:
        k = 0
    if k < 1 or not cutoff.isdigit():
        raise UnknownDiversityMeasure(f"{text!r}: cutoff {cutoff!r} must be an integer >= 1")
    return DiversityMeasure(kind, k, **values)


#: ndeval's default report, restricted to the measures computed here, in ndeval's column order.
DEFAULT_MEASURES: tuple[str, ...] = tuple(
    f"{name}@{k}"
    for name in ("ERR-IA", "nERR-IA", "alpha-nDCG", "P-IA", "strec")
    for k in (5, 10, 20)
)
