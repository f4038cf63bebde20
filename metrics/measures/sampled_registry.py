"""The inferred measures: the registry of measures that read sampled qrels (issue 32, point 2).

A sampled pool judges a sample of its documents (:class:`metrics.io.sampled.SampledQrels`: each
pooled document's stratum, and its grade or -1 when not sampled). The measures of complete
qrels (:data:`metrics.measures.registry.FAMILIES`) read an unsampled document as unjudged, that
is as non-relevant in their value: on a sample they are biased low. These estimate the
complete-judgment value from the sample instead (Yilmaz & Aslam 2006, Yilmaz, Kanoulas & Aslam
SIGIR 2008), as NIST's ``sample_eval.pl`` computes them (:mod:`metrics.measures.sample_eval`);
trec_eval's own ``infAP`` (one uniform sample) stays a family of the main registry.

An entry (:class:`SampledMeasure`) declares its canonical name (``xinfAP``, ``iP@10``), the name
``sample_eval.pl`` prints (``infAP``, ``iP10``), its value's key in
:class:`~metrics.measures.sample_eval.SampleEval` (``statAP``: :mod:`metrics.measures.statap`, from
inclusion probabilities; ``ebAP``: :mod:`metrics.measures.ebap`), whether its summary is a sum
(counts) and the families of complete qrels it stands in for (``replaces``: what
:func:`inferred_for` names when such a measure is asked on sampled qrels). They are not families of
the main registry because they read the strata, which a :class:`~metrics.measures.ranked.Ranked`
does not hold; the names are disjoint from the main registry's (checked on import), and
:func:`parse_sampled` reads ours and the script's spellings. ``iP@k`` takes any cutoff;
``iprec@rec`` the script's 11 levels."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from metrics.measures.names import Measure
from metrics.measures.registry import FAMILIES
from metrics.measures.sample_eval import CUTOFFS, RECALLS

__all__ = [
    "SAMPLED_MEASURES",
    "SAMPLE_EVAL_SET",
    "SampledMeasure",
    "inferred_for",
    "inferred_set",
    "needs_inferred",
    "parse_sampled",
]


@dataclass(frozen=True)
class SampledMeasure:
    """One inferred measure (see the module docstring); ``cutoff`` for ``iP@k``; ``coverage``: it
    describes the judgments, not a ranking (never tested against a baseline)."""

    name: str
    key: str
    script: str
    doc: str
    replaces: tuple[str, ...] = ()
    count: bool = False
    cutoff: int | None = None
    coverage: bool = False  # it describes the judgments (inum_rel), not a ranking


def _ip(k: int) -> SampledMeasure:
    return SampledMeasure(
        f"iP@{k}", f"iP{k}", f"iP{k}", f"inferred precision at {k}", ("P",), cutoff=k
    )


def _iprec(r: float) -> SampledMeasure:
    key = f"iprec@rec{r:.2f}"
    return SampledMeasure(
        key, key, key, f"inferred interpolated precision at recall {r:.2f}", ("IPrec",)
    )


def _registry(*measures: SampledMeasure) -> dict[str, SampledMeasure]:
    out = {m.name: m for m in measures}
    assert len(out) == len(measures), "two inferred measures share a name"
    clash = {n.lower() for n in out} & {f.lower() for f in FAMILIES}
    assert clash <= {"numret"}, f"inferred measures named like families: {clash}"
    assert all(f in FAMILIES for m in measures for f in m.replaces), "replaces a known family"
    return out


SAMPLED_MEASURES: dict[str, SampledMeasure] = _registry(
    SampledMeasure(
        "xinfAP",
        "infAP",
        "infAP",
        "extended inferred AP over strata (sample_eval.pl's infAP)",
        ("AP", "infAP"),
    ),
    SampledMeasure(
        "infNDCG", "infNDCG", "infNDCG", "inferred nDCG over the whole ranking", ("nDCG",)
    ),
    *(_iprec(r) for r in RECALLS),
    *(_ip(k) for k in (*CUTOFFS, 1000)),
    SampledMeasure(
        "inum_rel_ret",
        "inum_rel_ret",
        "inum_rel_ret",
        "estimated relevant documents retrieved",
        ("NumRelRet",),
        count=True,
    ),
    SampledMeasure(
        "inum_rel",
        "inum_rel",
        "inum_rel",
        "estimated relevant documents",
        ("NumRel",),
        count=True,
        coverage=True,
    ),
    SampledMeasure("NumRet", "num_ret", "num_ret", "documents retrieved", count=True),
    SampledMeasure(
        "statAP",
        "statAP",
        "statAP",
        "AP estimated from inclusion probabilities (Aslam, Pavlu & Yilmaz 2006), with its "
        "sampling variance",
        ("AP",),
    ),
    SampledMeasure(
        "ebAP",
        "ebAP",
        "ebAP",
        "AP from a stratified sample, its relevant count estimated by empirical Bayes, with an "
        "interval for the full-judgment MAP (metrics.measures.ebap)",
        ("AP",),
    ),
)
# What ``sample_eval.pl -q`` prints, in its order (per topic it prints the first, iP and counts).
SAMPLE_EVAL_SET: tuple[str, ...] = tuple(m for m in SAMPLED_MEASURES if m not in ("statAP", "ebAP"))

_IP = re.compile(r"ip(?:@|_|\.)?(\d+)")
_IPREC = re.compile(r"iprec@rec(\d*\.?\d+)")  # iprec_at_recall_* is trec_eval's IPrec


def parse_sampled(text: str, *, script: bool = False) -> list[SampledMeasure] | None:
    """The inferred measure(s) ``text`` names, or None when it names none. Case-insensitive;
    our names and ``sample_eval.pl``'s (``iP10``, ``iprec@rec0.50``, ``num_ret``); ``iP``
    alone is the script's three cutoffs, ``iprec`` its 11 levels, ``sample_eval`` everything it
    prints. ``infAP`` is trec_eval's (the main registry's) unless ``script`` (the script's name
    for xinfAP)."""
    low = text.strip().lower()
    if low == "sample_eval":
        return [SAMPLED_MEASURES[n] for n in SAMPLE_EVAL_SET]
    if low == "statmap":
        return [SAMPLED_MEASURES["statAP"]]
    if low == "ebmap":
        return [SAMPLED_MEASURES["ebAP"]]
    if low == "ip":
        return [m for m in SAMPLED_MEASURES.values() if m.cutoff is not None]
    if low == "iprec":
        return [m for m in SAMPLED_MEASURES.values() if m.key.startswith("iprec")]
    if low == "infap" and not script:
        return None
    for m in SAMPLED_MEASURES.values():
        if low in (m.name.lower(), m.script.lower()) and (m.name != "NumRet" or script):
            return [m]
    if (ip := _IP.fullmatch(low)) is not None:
        k = int(ip.group(1))
        if k < 1:
            raise ValueError(f"iP@k needs k >= 1, got {text!r}")
        return [_ip(k)]
    if (ir := _IPREC.fullmatch(low)) is not None:
        name = f"iprec@rec{float(ir.group(1)):.2f}"
        if name not in SAMPLED_MEASURES:
            levels = ", ".join(f"{r:.2f}" for r in RECALLS)
            raise ValueError(f"{text!r}: inferred interpolated precision is at recall {levels}")
        return [SAMPLED_MEASURES[name]]
    return None


def inferred_for(measure: Measure) -> str | None:
    """The inferred measure to use on sampled qrels instead of ``measure`` (None: it has none;
    judgment-free and coverage measures need none, see :func:`needs_inferred`)."""
    fam = measure.family
    if fam == "P" and isinstance(measure.cutoff, int):
        return f"iP@{measure.cutoff}"
    if fam == "nDCG":
        return "infNDCG"
    if fam == "IPrec" and measure.cutoff is not None:
        name = f"iprec@rec{float(measure.cutoff):.2f}"
        return name if name in SAMPLED_MEASURES else "iprec@rec0.00 ... iprec@rec1.00"
    for m in SAMPLED_MEASURES.values():
        if fam in m.replaces and m.cutoff is None:
            return m.name
    return None


JUDGMENT_FREE = frozenset({"NumRet", "NumQ"})


def needs_inferred(measure: Measure) -> bool:
    """Whether ``measure`` reads grades in a way a sample biases (not a count of retrieved
    documents, not a coverage measure such as Judged@k, not trec_eval's own infAP)."""
    return not (measure.family in JUDGMENT_FREE or measure.is_coverage or measure.family == "infAP")


def inferred_set(measures: Sequence[Measure]) -> list[SampledMeasure]:
    """The inferred measures a board of ``measures`` shows on sampled qrels: xinfAP, statAP,
    ebAP and infNDCG always, iP@k for each P@k asked, and the estimated relevant count."""
    out = [SAMPLED_MEASURES[n] for n in ("xinfAP", "statAP", "ebAP", "infNDCG")]
    for m in measures:
        if m.family == "P" and isinstance(m.cutoff, int) and m.rel is None and not m.kwargs:
            out.append(_ip(m.cutoff))
    out.append(SAMPLED_MEASURES["inum_rel"])
    return list(dict.fromkeys(out))
