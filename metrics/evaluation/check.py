"""Regression checks: does a new run score worse than a baseline run, beyond a threshold and
significantly? What a retrieval team's CI runs on every change (``python -m metrics check``, and
the API's ``/runs/<id>/check/``, which reads stored per-query values through
:func:`check_values`).

For each measure M, over the same queries Q for both runs (n = |Q|):

- ``delta`` = mean_Q(M(run)) - mean_Q(M(baseline)) (macro average: the mean over queries);
- its ``level`` paired bootstrap percentile interval: the interval of the mean of the per-query
  differences d_q = M_q(run) - M_q(baseline) (:func:`metrics.stats.intervals.bootstrap_ci`);
- ``p``: a two-sided paired test of mean(d) = 0 (:func:`metrics.stats.paired.paired_test`: Student
  t, randomization or bootstrap), and ``p_adjusted`` after ``correction`` across the measures of
  the check (:func:`metrics.stats.multiple.adjust`). The default is **no correction** (``"none"``):
  a check names a handful of measures chosen in advance, each a separate gate, and a correction
  would only make a real drop on one of them harder to see. Asking ``holm`` controls the chance
  of any false alarm across the measures instead; the answer always says which was applied.
- the threshold t: ``max_drop`` itself (absolute), or ``max_drop`` x mean(baseline) with
  ``relative=True`` (``--max-drop 2%``: a drop of more than 2 % of the baseline's score).

Verdict per measure:

- ``fail``: the run drops by more than the threshold (delta < -t) **and** the test finds the
  difference significant (p_adjusted <= alpha);
- ``drop-not-significant``: delta < -t but p_adjusted > alpha (a warning; the check passes);
- ``pass`` otherwise (a gain, a drop within the threshold).

The check fails when any measure fails.

Unjudged documents. A run that retrieves documents the qrels never judged scores them as
non-relevant, so its drop may be an artefact of the judgments, not of retrieval. Each measure
reports the judged fraction of both runs: ``Judged@k`` with k the measure's cut-off (nDCG@5:
Judged@5), and for measures without a cut-off (AP, RR, nDCG, Rprec, bpref, infAP) ``Judged``,
the judged fraction of the whole ranking (the run's depth). A measure that dropped (delta < 0)
is **flagged** ``unjudged`` when the run's judged fraction is lower than the baseline's (by at
least ``COVERAGE_GAP`` = 0.01: fractions closer than that are judged alike, and two fractions
0.01 apart never print the same at two decimals) and either more than ``judged_tolerance``
(default 0.05) below it or below ``min_judged`` (default 0.9). Runs judged alike are not
flagged however low their coverage: AP over a 1000-deep ranking, about 0.4 judged for every
run of a TREC pool, drops for reasons of ranking, not of judging. The flag is a
warning beside the verdict, never a pardon: a ``fail`` stays a ``fail`` (the drop is measured
against the qrels as they are; judge the new documents, then check again). Count measures
(NumRel, NumRet, ...) and the Judged/Unjudged measures themselves carry no judged fraction.

Queries (the CLI, :func:`regression_check`): the honest evaluation's
(:mod:`metrics.evaluation.evaluator`): the qrels queries with at least one relevant document; a run
that does not answer one of them scores 0 there, so both runs are compared on the same n queries
(the answer says how many and how many each run left unanswered).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from metrics.io import Qrels, Run
from metrics.measures.names import Measure, parse_measures

__all__ = [
    "FAIL",
    "PASS",
    "VERDICTS",
    "WARN",
    "CheckResult",
    "MeasureCheck",
    "check_values",
    "judged_measure",
    "parse_max_drop",
    "regression_check",
]

PASS = "pass"
WARN = "drop-not-significant"
FAIL = "fail"
VERDICTS: tuple[str, ...] = (PASS, WARN, FAIL)

DEFAULT_JUDGED_TOLERANCE = 0.05
DEFAULT_MIN_JUDGED = 0.9
COVERAGE_GAP = 0.01  # a judged fraction this much below the baseline's differs from it

_MAX_DROP = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*(%?)\s*$")


def parse_max_drop(text: str | float) -> tuple[float, bool]:
    """``"0.01"`` -> (0.01, absolute); ``"2%"`` -> (0.02, relative). ``ValueError`` for a
    negative, non-finite or unreadable threshold, or a relative one of 100 % or more."""
    if isinstance(text, float | int):
        value, relative = float(text), False
    else:
        match = _MAX_DROP.match(text)
        if match is None:
            raise ValueError(
                f"max drop {text[:40]!r} is not a number (0.01) or a percentage of the "
                "baseline's score (2%)"
            )
        value, relative = float(match.group(1)), match.group(2) == "%"
        if relative:
            value /= 100.0
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"max drop must be a finite number >= 0, got {text!r}")
    if relative and value >= 1.0:
        raise ValueError(f"a relative max drop must be below 100%, got {text!r}")
    return value, relative


def judged_measure(measure: Measure) -> Measure | None:
    """The judged fraction reported beside ``measure``: ``Judged@k`` at its cut-off k, ``Judged``
    (the whole ranking) when it has none; None for counts and the Judged/Unjudged measures."""
    if measure.is_count or measure.family in ("Judged", "Unjudged"):
        return None
    return Measure("Judged", measure.cutoff) if measure.cutoff is not None else Measure("Judged")


@dataclass(frozen=True)
class MeasureCheck:
    """One measure of a regression check (see the module docstring for each figure)."""

    measure: str
    baseline: float
    run: float
    delta: float
    relative_delta: float | None  # delta / baseline; None when the baseline scores 0
    ci_low: float
    ci_high: float
    p_value: float
    p_adjusted: float
    effect: float  # Cohen's d_z of the per-query differences
    wins: int
    ties: int
    losses: int
    threshold: float  # the absolute drop allowed for this measure
    judged_measure: str | None
    judged_run: float | None
    judged_baseline: float | None
    unjudged: bool
    unjudged_note: str
    verdict: str

    @property
    def dropped(self) -> bool:
        """A drop beyond the threshold (significant or not)."""
        return self.delta < -self.threshold

    def to_dict(self) -> dict[str, Any]:
        """JSON-able: NaN and infinite values become None."""
        return {k: _num(v) for k, v in asdict(self).items()}


@dataclass(frozen=True)
class CheckResult:
    """A regression check of a run against a baseline on several measures."""

    run: str
    baseline: str
    measures: list[MeasureCheck]
    n_queries: int
    test: str
    correction: str
    alpha: float
    ci_level: float
    max_drop: float
    relative: bool
    judged_tolerance: float
    min_judged: float
    n_resamples: int = 10_000
    unanswered_run: int = 0
    unanswered_baseline: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        """``fail`` when a measure fails, else ``drop-not-significant`` when one dropped beyond
        the threshold without significance, else ``pass``."""
        verdicts = {m.verdict for m in self.measures}
        return FAIL if FAIL in verdicts else WARN if WARN in verdicts else PASS

    @property
    def passed(self) -> bool:
        return self.verdict != FAIL

    @property
    def threshold_text(self) -> str:
        if self.relative:
            return f"{self.max_drop:.4g} of the baseline's score ({self.max_drop * 100:.4g}%)"
        return f"{self.max_drop:.4g} (absolute)"

    @property
    def method(self) -> str:
        """One sentence: how the figures were computed."""
        correction = (
            f"no correction across the {len(self.measures)} measures"
            if self.correction == "none"
            else f"{self.correction} correction across the {len(self.measures)} measures"
        )
        return (
            f"paired {self.test} test, alpha {self.alpha:g}, {correction}; "
            f"{self.ci_level:.0%} paired bootstrap CI of the delta; macro average over "
            f"{self.n_queries} queries; max drop {self.threshold_text}"
        )

    @property
    def summary(self) -> str:
        """The last line of the text output: ``PASS``, ``PASS (warning: ...)`` or ``FAIL: ...``."""
        failed = [m for m in self.measures if m.verdict == FAIL]
        if failed:
            return "FAIL: " + "; ".join(self._drop(m) for m in failed)
        warned = [m for m in self.measures if m.verdict == WARN]
        if warned:
            return "PASS (warning: " + "; ".join(self._drop(m) for m in warned) + ")"
        return "PASS"

    def _drop(self, m: MeasureCheck) -> str:
        p = f"p {_p(m.p_value, self.n_resamples)}"
        if self.correction != "none":
            p += f", {self.correction} {_p(m.p_adjusted, self.n_resamples)}"
        text = f"{m.measure} dropped {-m.delta:.3g} ({p}"
        text += ")" if m.verdict == FAIL else ", not significant)"
        if m.unjudged:
            text += f" [{m.unjudged_note}]"
        return text

    def to_dict(self) -> dict[str, Any]:
        """JSON-able: the check's settings, ``passed``, ``verdict``, ``summary`` and the rows."""
        return {
            "run": self.run,
            "baseline": self.baseline,
            "passed": self.passed,
            "verdict": self.verdict,
            "summary": self.summary,
            "method": self.method,
            "test": self.test,
            "correction": self.correction,
            "alpha": self.alpha,
            "ci_level": self.ci_level,
            "n_resamples": self.n_resamples,
            "max_drop": self.max_drop,
            "relative": self.relative,
            "judged_tolerance": self.judged_tolerance,
            "min_judged": self.min_judged,
            "average": "macro",
            "n_queries": self.n_queries,
            "unanswered": {"run": self.unanswered_run, "baseline": self.unanswered_baseline},
            "notes": list(self.notes),
            "measures": [m.to_dict() for m in self.measures],
        }


def _num(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def _p(p: float, n_resamples: int) -> str:
    """``= 0.004``; a bootstrap p of 0 is ``< 1/B``."""
    if p == 0.0:
        return f"< {1.0 / n_resamples:.2g}"
    return f"= {p:.2g}" if p < 0.001 else f"= {p:.3f}"


def _unjudged(
    delta: float,
    judged_run: float | None,
    judged_baseline: float | None,
    name: str | None,
    tolerance: float,
    min_judged: float,
) -> tuple[bool, str]:
    if delta >= 0 or judged_run is None or judged_baseline is None or name is None:
        return False, ""
    # judged alike (the same figure at two decimals can never be this far apart): unjudged
    # documents cannot explain the run doing worse than the baseline
    if round(judged_baseline - judged_run, 9) < COVERAGE_GAP:
        return False, ""
    reasons = []
    if judged_run < judged_baseline - tolerance:
        reasons.append(f"{judged_baseline - judged_run:.2f} below the baseline's")
    if judged_run < min_judged:
        reasons.append(f"below {min_judged:g}")
    if not reasons:
        return False, ""
    return True, (
        f"the drop may come from unjudged documents: {name} {judged_run:.2f} (run) vs "
        f"{judged_baseline:.2f} (baseline), {' and '.join(reasons)}"
    )


def check_values(
    run: Mapping[str, Mapping[str, float]],
    baseline: Mapping[str, Mapping[str, float]],
    *,
    queries: Sequence[str],
    max_drop: float,
    relative: bool = False,
    test: str = "t",
    alpha: float = 0.05,
    correction: str = "none",
    ci_level: float = 0.95,
    judged: Mapping[str, tuple[str | None, float | None, float | None]] | None = None,
    judged_tolerance: float = DEFAULT_JUDGED_TOLERANCE,
    min_judged: float = DEFAULT_MIN_JUDGED,
    run_name: str = "run",
    baseline_name: str = "baseline",
    n_resamples: int = 10_000,
    seed: int = 0,
) -> CheckResult:
    """The regression check on per-query values already computed.

    ``run[m]`` and ``baseline[m]`` map query -> value of measure ``m`` (measures in the order
    of ``run``); exactly ``queries`` are compared, a query without a value scoring 0.
    ``judged[m]`` = (judged measure's name, run's mean, baseline's mean), or absent when not
    known. ``ValueError`` for no queries or measures, an unknown test or correction, a measure
    missing from ``baseline``, or ``alpha``, ``ci_level``, ``max_drop`` out of range."""
    from metrics.stats.multiple import CORRECTIONS, adjust
    from metrics.stats.paired import compare_to_baseline

    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be strictly between 0 and 1, got {alpha}")
    if not 0.0 < ci_level < 1.0:
        raise ValueError(f"the CI level must be strictly between 0 and 1, got {ci_level}")
    if correction not in CORRECTIONS:
        raise ValueError(
            f"unknown correction {correction!r}; expected one of {', '.join(CORRECTIONS)}"
        )
    if not math.isfinite(max_drop) or max_drop < 0:
        raise ValueError(f"max drop must be a finite number >= 0, got {max_drop}")
    if not 0.0 <= judged_tolerance <= 1.0 or not 0.0 <= min_judged <= 1.0:
        raise ValueError("the judged tolerance and minimum must lie in [0, 1]")
    if not run:
        raise ValueError("no measures to check")
    missing = [m for m in run if m not in baseline]
    if missing:
        raise ValueError(f"the baseline has no values for {', '.join(missing)}")
    qids = list(dict.fromkeys(queries))
    if not qids:
        raise ValueError("no queries to compare")
    if test != "randomization" and len(qids) < 2:
        raise ValueError(f"the paired {test} test needs at least two queries, got {len(qids)}")
    rows = []
    for m in run:
        # two keys of our own: the run and its baseline often carry the same tag
        (c,) = compare_to_baseline(
            {"run": run[m], "baseline": baseline[m]},
            "baseline",
            test=test,
            correction="none",
            alpha=alpha,
            level=ci_level,
            n_resamples=n_resamples,
            seed=seed,
            queries=qids,
        )
        rows.append((m, c))
    adjusted = adjust([c.p_value for _, c in rows], correction)
    out = []
    for (m, c), pa in zip(rows, adjusted, strict=True):
        threshold = max_drop * abs(c.mean_baseline) if relative else max_drop
        dropped = c.diff < -threshold
        verdict = (FAIL if pa <= alpha else WARN) if dropped else PASS
        jname, jrun, jbase = (judged or {}).get(m, (None, None, None))
        flag, note = _unjudged(c.diff, jrun, jbase, jname, judged_tolerance, min_judged)
        out.append(
            MeasureCheck(
                measure=m,
                baseline=c.mean_baseline,
                run=c.mean_run,
                delta=c.diff,
                relative_delta=c.diff / c.mean_baseline if c.mean_baseline else None,
                ci_low=c.ci_low,
                ci_high=c.ci_high,
                p_value=c.p_value,
                p_adjusted=pa,
                effect=c.effect,
                wins=c.wins,
                ties=c.ties,
                losses=c.losses,
                threshold=threshold,
                judged_measure=jname,
                judged_run=jrun,
                judged_baseline=jbase,
                unjudged=flag,
                unjudged_note=note,
                verdict=verdict,
            )
        )
    return CheckResult(
        run=run_name,
        baseline=baseline_name,
        measures=out,
        n_queries=len(qids),
        test=test,
        correction=correction,
        alpha=alpha,
        ci_level=ci_level,
        max_drop=max_drop,
        relative=relative,
        judged_tolerance=judged_tolerance,
        min_judged=min_judged,
        n_resamples=n_resamples,
    )


def regression_check(
    qrels: Qrels | Mapping[str, Mapping[str, int]],
    run: Run | Mapping[str, Mapping[str, float]],
    baseline: Run | Mapping[str, Mapping[str, float]],
    measures: Sequence[str | Measure],
    max_drop: float | str,
    test: str = "t",
    alpha: float = 0.05,
    correction: str = "none",
    relative: bool = False,
    *,
    ci_level: float = 0.95,
    judged_tolerance: float = DEFAULT_JUDGED_TOLERANCE,
    min_judged: float = DEFAULT_MIN_JUDGED,
    relevance_level: int = 1,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> CheckResult:
    """Check ``run`` against ``baseline`` on ``measures`` (see the module docstring).

    Both runs are evaluated in the honest mode (:class:`metrics.evaluation.evaluator.Evaluator`):
    the qrels queries with a relevant document, a query a run does not answer scoring 0.
    ``max_drop`` is absolute, or relative to the baseline's score with ``relative=True`` or a
    string ending in ``%`` (``"2%"``). ``metrics.measures.names.UnknownMeasureError`` for an unknown
    measure, ``ValueError`` for bad settings."""
    from metrics.evaluation.evaluator import Evaluator

    if isinstance(max_drop, str):
        max_drop, as_percent = parse_max_drop(max_drop)
        relative = relative or as_percent
    wanted: list[Measure] = []
    for m in measures:
        wanted.extend([m] if isinstance(m, Measure) else parse_measures([m]))
    wanted = list(dict.fromkeys(wanted))
    if not wanted:
        raise ValueError("no measures to check")
    judged_of = {m.name: judged_measure(m) for m in wanted}
    companions = [j for j in judged_of.values() if j is not None]
    ev = Evaluator(
        qrels, [*wanted, *companions], ci=None, relevance_level=relevance_level, seed=seed
    )
    new = ev.evaluate(run if isinstance(run, Run) else Run.from_dict(run))
    base = ev.evaluate(baseline if isinstance(baseline, Run) else Run.from_dict(baseline))
    # the same qrels, the same honest selection: both runs are averaged over the same queries
    queries = base.queries
    judged: dict[str, tuple[str | None, float | None, float | None]] = {}
    for name, j in judged_of.items():
        if j is not None:
            judged[name] = (j.name, new.aggregates[j.name].value, base.aggregates[j.name].value)
    result = check_values(
        {m.name: new.per_query[m.name] for m in wanted},
        {m.name: base.per_query[m.name] for m in wanted},
        queries=queries,
        max_drop=float(max_drop),
        relative=relative,
        test=test,
        alpha=alpha,
        correction=correction,
        ci_level=ci_level,
        judged=judged,
        judged_tolerance=judged_tolerance,
        min_judged=min_judged,
        run_name=new.run or "run",
        baseline_name=base.run or "baseline",
        n_resamples=n_resamples,
        seed=seed,
    )
    both = [s for s in base.excluded_summary if s in new.excluded_summary]
    notes = both + [f"run: {s}" for s in new.excluded_summary if s not in both]
    notes += [f"baseline: {s}" for s in base.excluded_summary if s not in both]
    return replace(
        result,
        unanswered_run=len(new.unanswered),
        unanswered_baseline=len(base.unanswered),
        notes=notes,
    )
