"""Significance between runs as the API and the pages show it: every pair of runs as a matrix
(with a choice of test and correction, or Tukey's HSD) and every run against one baseline.

Both read the stored per-query values (``selectors.per_query_values``: honest mode, runs named
as the user may see them) and compute the tests on request; nothing is written. The number of
runs is capped (``POOLJUDGE_SIGNIFICANCE_MAX_RUNS`` for the resampling tests,
``POOLJUDGE_SIGNIFICANCE_MAX_RUNS_FAST`` for the t-test, Tukey's HSD and the baseline view);
without a choice of runs the best ones by the measure are taken, and the answer says which and
why."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from django.conf import settings

from judging.assessments.models import QrelsVersion
from judging.campaigns.models import Campaign
from judging.core.errors import InvalidInput
from judging.core.roles import UserLike
from judging.evaluation.selectors import common_queries, per_query_values
from metrics.problems import Problem
from metrics.stats.matrices import effect_size_matrix, paired_resampling_matrix, paired_t_matrix
from metrics.stats.multiple import CORRECTIONS, adjust
from metrics.stats.paired import compare_to_baseline
from metrics.stats.tukey import tukey_hsd

TESTS: tuple[str, ...] = ("t", "randomization", "bootstrap", "tukey")
RESAMPLING = frozenset({"randomization", "bootstrap"})
TEST_NAMES = {
    "t": "paired t-test",
    "randomization": "paired randomization test (Fisher, sign flips, 10,000 resamples)",
    "bootstrap": "paired bootstrap test (10,000 resamples)",
    "tukey": "Tukey's HSD (two-way ANOVA, system x topic)",
}
CORRECTION_NAMES = {
    "holm": "Holm (family-wise error rate)",
    "bonferroni": "Bonferroni (family-wise error rate)",
    "bh": "Benjamini-Hochberg (false discovery rate)",
    "none": "none (raw p-values)",
    "tukey": "Tukey HSD (itself a multiple comparison procedure)",
}
ALPHA = 0.05
N_RESAMPLES = 10_000
VIEWS: tuple[str, ...] = ("matrix", "pairs", "baseline")
AVERAGING = "macro (mean over topics)"


def _bad(field: str, what: str) -> InvalidInput:
    return InvalidInput(f"{field}: {what}", [Problem.at(field, what)])


def check_test(test: str) -> str:
    if test not in TESTS:
        raise _bad("test", f"{test[:40]!r} is not one of {', '.join(TESTS)}")
    return test


def check_correction(correction: str, test: str) -> str:
    """The correction applied: ``tukey`` for Tukey's HSD whatever was asked (it is its own
    multiple comparison procedure), else one of ``metrics.stats.multiple.CORRECTIONS``."""
    if correction and correction not in (*CORRECTIONS, "tukey"):
        raise _bad("correction", f"{correction[:40]!r} is not one of {', '.join(CORRECTIONS)}")
    if test == "tukey":
        return "tukey"
    if correction == "tukey":
        raise _bad("correction", "tukey is a test (test=tukey), not a correction of another test")
    return correction or "holm"


def max_runs(test: str, view: str = "matrix") -> int:
    """How many runs one answer compares at most (the settings' limits)."""
    if view == "matrix" and test in RESAMPLING:
        return int(settings.POOLJUDGE_EVALUATION.significance_max_runs)
    return int(settings.POOLJUDGE_EVALUATION.significance_max_runs_fast)


def max_runs_text(test: str, view: str = "matrix") -> str:
    if view == "matrix" and test in RESAMPLING:
        return (
            f"the {test} test compares at most {max_runs(test, view)} runs "
            "(POOLJUDGE_SIGNIFICANCE_MAX_RUNS: 10,000 resamples for every pair)"
        )
    return f"at most {max_runs(test, view)} runs (POOLJUDGE_SIGNIFICANCE_MAX_RUNS_FAST)"


def parse_runs(values: Sequence[str]) -> list[str] | None:
    """The ``runs`` parameter: repeated, or comma-separated labels; None when not given."""
    out: list[str] = []
    for v in values:
        out += [p.strip() for p in v.split(",") if p.strip()] if "," in v else [v.strip()]
    out = [r for r in dict.fromkeys(out) if r]
    return out or None


def parse_top(value: str | None) -> int | None:
    if value is None or value.strip() == "":
        return None
    text = value.strip()
    if not (text.isascii() and text.isdigit()) or len(text) > 9:
        raise _bad("top", f"must be a whole number, not {text[:40]!r}")
    top = int(text)
    if top < 2:
        raise _bad("top", "must be at least 2 (a comparison needs two runs)")
    return top


def _mean(values: dict[str, float], queries: list[str]) -> float:
    if queries:
        return float(np.mean([values[q] for q in queries]))
    return float(np.mean(list(values.values()))) if values else math.nan


def _selection(
    per_query: dict[str, dict[str, float]],
    *,
    runs: Sequence[str] | None,
    top: int | None,
    cap: int,
    cap_text: str,
    measure: str,
    keep: str | None = None,
) -> tuple[list[str], dict[str, Any]]:
    """The runs compared and why: those asked for (``runs``, labels as the user sees them), or
    the best ``top`` by the measure (default: as many as the cap allows); ``keep`` (a baseline)
    is always among them."""
    available = list(per_query)
    everyone = common_queries(per_query)
    by_mean = sorted(available, key=lambda r: (-_mean(per_query[r], everyone), r))
    if runs is not None:
        unknown = [r for r in runs if r not in per_query]
        if unknown:
            raise _bad(
                "runs",
                f"{unknown[0][:60]!r} is not an evaluated run of this campaign under this "
                "qrels version (runs are named as on the leaderboard)",
            )
        chosen = list(runs)
        if keep is not None and keep not in chosen:
            chosen.append(keep)
        if len(chosen) > cap:
            raise _bad("runs", f"{len(chosen)} runs asked for: {cap_text}; choose fewer")
        why = f"the {len(chosen)} runs chosen"
        how = "given"
    else:
        n = min(cap, top if top is not None else cap)
        chosen = by_mean[:n]
        if keep is not None and keep not in chosen:
            chosen = [*chosen[: n - 1], keep]
        if len(chosen) == len(available):
            why = f"all {len(available)} evaluated runs"
        else:
            limit = f"{cap_text}" if top is None or top > cap else f"top={top} asked"
            why = (
                f"the best {len(chosen)} of {len(available)} evaluated runs by mean {measure}"
                f" ({limit})" + (", and the baseline" if keep and keep not in by_mean[:n] else "")
            )
        how = "top"
    return chosen, {
        "how": how,
        "text": why,
        "n_available": len(available),
        "cap": cap,
        "available": by_mean,
    }


def _version_fields(version: QrelsVersion) -> dict[str, Any]:
    return {
        "qrels_version": version.number,
        "qrels_kind": version.kind_label,
        "qrels_hash": version.content_hash,
    }


def significance_matrix(
    *,
    campaign: Campaign,
    version: QrelsVersion,
    measure: str,
    test: str,
    correction: str,
    user: UserLike,
    runs: Sequence[str] | None = None,
    top: int | None = None,
) -> dict[str, Any]:
    """Every pair of the chosen runs on one measure, over the topics they all have a value for.

    ``runs`` (labels as the user may see them) or the best ``top`` by mean (default: up to the
    cap); in order of mean, best first. ``test``: t, randomization, bootstrap (paired, each
    pair; p-values adjusted with ``correction`` over all the pairs) or tukey (Tukey's HSD, its
    own correction). ``cells[i][j]`` is run i against run j (None on the diagonal): diff =
    mean_i - mean_j, p, p_adjusted, effect (Cohen's d_z of i - j), significant (p_adjusted <=
    alpha); ``pairs`` the same for i < j. Unknown test, correction, measure or run: a 400
    naming the parameter."""
    check_test(test)
    applied = check_correction(correction, test)
    canonical, per_query, _ = per_query_values(
        campaign=campaign, version=version, measure=measure, user=user
    )
    chosen, selection = _selection(
        per_query,
        runs=runs,
        top=top,
        cap=max_runs(test),
        cap_text=max_runs_text(test),
        measure=canonical,
    )
    subset = {r: per_query[r] for r in chosen}
    queries = common_queries(subset)
    order = sorted(chosen, key=lambda r: (-_mean(subset[r], queries), r))
    out: dict[str, Any] = {
        "campaign": campaign.pk,
        **_version_fields(version),
        "measure": canonical,
        "averaging": AVERAGING,
        "test": test,
        "test_name": TEST_NAMES[test],
        "correction": applied,
        "correction_name": CORRECTION_NAMES[applied],
        "alpha": ALPHA,
        "n_queries": len(queries),
        "selection": selection,
        "runs": [{"run": r, "mean": _mean(subset[r], queries)} for r in order],
        "cells": [],
        "pairs": [],
    }
    m = len(order)
    if m > 1 and not queries:
        out["note"] = "the runs have no scored topic in common: there is nothing to pair"
        return out
    if m > 1 and len(queries) < 2 and test != "randomization":
        out["note"] = "the runs have one scored topic in common: a paired test needs two"
        return out
    if m < 2:
        return out
    x = np.array([[subset[r][q] for q in queries] for r in order], dtype=np.float64)
    means = x.mean(axis=1)
    effect = effect_size_matrix(x)
    iu, ju = np.triu_indices(m, k=1)
    if test == "t":
        _, p_full = paired_t_matrix(x)
        raw = [float(v) for v in p_full[iu, ju]]
        adjusted = adjust(raw, applied)
    elif test == "tukey":
        # pairs in the same (i < j) order as np.triu_indices
        raw = [c.p_value for c in tukey_hsd({r: subset[r] for r in order}, queries=queries)]
        adjusted = list(raw)
    else:
        # the same resamples as paired_test draws for each pair, applied to all pairs at once
        raw = [
            float(v)
            for v in paired_resampling_matrix(x, test=test, n_resamples=N_RESAMPLES, seed=0)
        ]
        adjusted = adjust(raw, applied)
    cells: list[list[dict[str, Any] | None]] = [[None] * m for _ in range(m)]
    pairs = []
    for k, (i, j) in enumerate(zip(iu, ju, strict=True)):
        significant = bool(adjusted[k] <= ALPHA)
        d = float(means[i] - means[j])
        cells[i][j] = {
            "diff": d,
            "p": raw[k],
            "p_adjusted": adjusted[k],
            "effect": float(effect[i, j]),
            "significant": significant,
        }
        cells[j][i] = {
            "diff": -d,
            "p": raw[k],
            "p_adjusted": adjusted[k],
            "effect": float(effect[j, i]),
            "significant": significant,
        }
        pairs.append(
            {
                "run_a": order[i],
                "run_b": order[j],
                "mean_a": float(means[i]),
                "mean_b": float(means[j]),
                "diff": d,
                "effect": float(effect[i, j]),
                "p_value": raw[k],
                "p_adjusted": adjusted[k],
                "significant": significant,
            }
        )
    out["cells"] = cells
    out["pairs"] = pairs
    return out


def legacy_comparisons(matrix: dict[str, Any]) -> list[dict[str, Any]]:
    """The pair list in the API's earlier shape (``run_a``, ``run_b``, ``mean_a``, ``mean_b``,
    ``diff``, ``p_value``, ``p_holm`` under Holm, ``test``, ``n``, ``significant``), with the
    ``p_adjusted``, ``correction`` and ``effect`` it gained."""
    out = []
    for p in matrix["pairs"]:
        row = {
            **p,
            "test": matrix["test"],
            "correction": matrix["correction"],
            "n": matrix["n_queries"],
        }
        if matrix["correction"] == "holm":
            row["p_holm"] = p["p_adjusted"]
        out.append(row)
    return out


def baseline_comparison(
    *,
    campaign: Campaign,
    version: QrelsVersion,
    measure: str,
    baseline: str,
    test: str,
    correction: str,
    user: UserLike,
    runs: Sequence[str] | None = None,
    top: int | None = None,
) -> dict[str, Any]:
    """Every chosen run against ``baseline`` (a label as the user may see it), the common case
    in papers: ``metrics.stats.paired.compare_to_baseline`` over the topics they all have a value
    for, the p-values adjusted over those m - 1 comparisons only. Rows in order of mean, best
    first: mean, diff with its paired bootstrap 95% interval, effect (d_z), p, p adjusted,
    wins/ties/losses, significant. Tukey's HSD compares all pairs, not against one run: a 400
    naming ``test``, as for an unknown baseline, test, correction, measure or run."""
    check_test(test)
    if test == "tukey":
        raise _bad(
            "test",
            "Tukey's HSD compares every pair, not runs against one baseline: choose t, "
            "randomization or bootstrap, or the matrix view",
        )
    applied = check_correction(correction, test)
    canonical, per_query, _ = per_query_values(
        campaign=campaign, version=version, measure=measure, user=user
    )
    if baseline not in per_query:
        raise _bad(
            "baseline",
            f"{baseline[:60]!r} is not an evaluated run of this campaign under this qrels "
            "version (runs are named as on the leaderboard)",
        )
    chosen, selection = _selection(
        per_query,
        runs=runs,
        top=top,
        cap=max_runs(test, "baseline"),
        cap_text=max_runs_text(test, "baseline"),
        measure=canonical,
        keep=baseline,
    )
    subset = {r: per_query[r] for r in chosen}
    queries = common_queries(subset)
    order = sorted(chosen, key=lambda r: (-_mean(subset[r], queries), r))
    out: dict[str, Any] = {
        "campaign": campaign.pk,
        **_version_fields(version),
        "measure": canonical,
        "averaging": AVERAGING,
        "baseline": baseline,
        "baseline_mean": _mean(subset[baseline], queries),
        "test": test,
        "test_name": TEST_NAMES[test],
        "correction": applied,
        "correction_name": CORRECTION_NAMES[applied],
        "alpha": ALPHA,
        "level": 0.95,
        "n_queries": len(queries),
        "selection": selection,
        "rows": [],
    }
    if len(order) > 1 and not queries:
        out["note"] = "the runs have no scored topic in common: there is nothing to pair"
        return out
    if len(order) > 1 and len(queries) < 2 and test != "randomization":
        out["note"] = "the runs have one scored topic in common: a paired test needs two"
        return out
    if len(order) < 2:
        return out
    rows = compare_to_baseline(
        {r: subset[r] for r in order},
        baseline,
        test=test,
        correction=applied,
        alpha=ALPHA,
        n_resamples=N_RESAMPLES,
        queries=queries,
    )
    out["rows"] = [
        {
            "run": c.run,
            "mean": c.mean_run,
            "diff": c.diff,
            "ci_low": c.ci_low,
            "ci_high": c.ci_high,
            "effect": c.effect,
            "p_value": c.p_value,
            "p_adjusted": c.p_adjusted,
            "wins": c.wins,
            "ties": c.ties,
            "losses": c.losses,
            "significant": c.significant,
        }
        for c in rows
    ]
    return out


def _cell(v: Any) -> Any:
    """A CSV value: an undefined effect (nan) written as empty; an infinite one as the number
    inf or -inf."""
    if isinstance(v, float) and math.isnan(v):
        return ""
    return v


def pairs_rows(matrix: dict[str, Any]) -> list[list[Any]]:
    """Every pair of the matrix as CSV rows, header first, one line each, with the test,
    correction and qrels version."""
    header = [
        "run_a",
        "run_b",
        "mean_a",
        "mean_b",
        "diff",
        "effect_dz",
        "p_value",
        "p_adjusted",
        "significant",
        "test",
        "correction",
        "alpha",
        "measure",
        "n_queries",
        "qrels_version",
        "qrels_kind",
        "qrels_hash",
    ]
    rows: list[list[Any]] = [header]
    for p in matrix["pairs"]:
        rows.append(
            [
                p["run_a"],
                p["run_b"],
                p["mean_a"],
                p["mean_b"],
                p["diff"],
                _cell(p["effect"]),
                p["p_value"],
                p["p_adjusted"],
                p["significant"],
                matrix["test"],
                matrix["correction"],
                matrix["alpha"],
                matrix["measure"],
                matrix["n_queries"],
                matrix["qrels_version"],
                matrix.get("qrels_kind", "human"),
                matrix["qrels_hash"],
            ]
        )
    return rows


def baseline_rows(table: dict[str, Any]) -> list[list[Any]]:
    """The baseline table as CSV rows, header first, one line per run, with the test,
    correction and qrels version."""
    header = [
        "run",
        "baseline",
        "mean",
        "mean_baseline",
        "diff",
        "ci_low",
        "ci_high",
        "effect_dz",
        "p_value",
        "p_adjusted",
        "wins",
        "ties",
        "losses",
        "significant",
        "test",
        "correction",
        "alpha",
        "measure",
        "n_queries",
        "qrels_version",
        "qrels_kind",
        "qrels_hash",
    ]
    rows: list[list[Any]] = [header]
    for r in table["rows"]:
        rows.append(
            [
                r["run"],
                table["baseline"],
                r["mean"],
                table["baseline_mean"],
                r["diff"],
                r["ci_low"],
                r["ci_high"],
                _cell(r["effect"]),
                r["p_value"],
                r["p_adjusted"],
                r["wins"],
                r["ties"],
                r["losses"],
                r["significant"],
                table["test"],
                table["correction"],
                table["alpha"],
                table["measure"],
                table["n_queries"],
                table["qrels_version"],
                table.get("qrels_kind", "human"),
                table["qrels_hash"],
            ]
        )
    return rows
