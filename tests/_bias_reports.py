"""Hand-made bias-report results in the shapes of /work/wt/SPEC.md (what the bias page reads),
for page tests that must not depend on the metrics code: stored directly as a done BiasReport.

The numbers are made up but consistent (penalty = estimate - score, penalty_pct = 100 * penalty
/ score, rank_change = rank_a - rank_b), so a page test can check each figure where it is shown.
"""

from __future__ import annotations

import copy
from typing import Any

POOLED = ["alpha", "beta", "gamma"]
NOVEL = "novel-x"
TOPICS = ["401", "402", "403"]


def estimators_p10() -> dict[str, Any]:
    """P@10: every estimator applies; Webber & Park has the lowest MAE."""
    return {
        "measure": "P@10",
        "depth": 10,
        "leave_out": "group",
        "mode": "trec_eval",
        "top75": False,
        "topics": TOPICS,
        "n_units": 3,
        "estimators": {
            "pool": {
                "label": "No correction",
                "applicable": True,
                "mae": 0.0533,
                "sre": 4,
                "sre_star": 1,
                "kendall_tau": 0.333,
                "n_runs": 3,
            },
            "webber_park": {
                "label": "Webber & Park 2009",
                "applicable": True,
                "mae": 0.0121,
                "sre": 1,
                "sre_star": 0,
                "kendall_tau": 1.0,
                "n_runs": 3,
            },
            "lipani2015": {
                "label": "Lipani, Lupu & Hanbury 2015",
                "applicable": True,
                "mae": 0.0207,
                "sre": 2,
                "sre_star": 0,
                "kendall_tau": 0.667,
                "n_runs": 3,
            },
            "lipani2016": {
                "label": "Lipani et al. 2016",
                "applicable": True,
                "mae": None,  # not measurable here: shown as "not enough data", never "None"
                "sre": None,
                "sre_star": None,
                "kendall_tau": None,
                "n_runs": 0,
            },
            "condensed": {
                "label": "Condensed list (Sakai 2007)",
                "applicable": True,
                "mae": 0.0411,
                "sre": 3,
                "sre_star": 1,
                "kendall_tau": 0.333,
                "n_runs": 3,
            },
            "upper": {
                "label": "Upper bound",
                "applicable": True,
                "mae": 0.0892,
                "sre": 4,
                "sre_star": 2,
                "kendall_tau": 0.0,
                "n_runs": 3,
            },
        },
        "recommended": "webber_park",
        "recommended_why": "lowest mean absolute error (0.0121) of the 6 estimators that apply "
        "to P@10, measured by leaving out each of the 3 groups in turn",
        "runs": {
            "alpha": {
                "unit": "g-alpha",
                "score": 0.35,
                "score_full_pool": 0.4,
                "pool": 0.35,
                "webber_park": 0.39,
                "lipani2015": 0.37,
                "lipani2016": None,
                "condensed": 0.42,
                "upper": 0.5,
            },
            "beta": {
                "unit": "g-beta",
                "score": 0.28,
                "score_full_pool": 0.3,
                "pool": 0.28,
                "webber_park": 0.31,
                "lipani2015": 0.33,
                "lipani2016": None,
                "condensed": 0.34,
                "upper": 0.4,
            },
        },
        "not_pooled": {
            NOVEL: {
                "score": 0.2,
                "estimates": {
                    "pool": {"estimate": 0.2, "penalty": 0.0, "penalty_pct": 0.0, "interval": None},
                    "webber_park": {
                        "estimate": 0.214,
                        "penalty": 0.014,
                        "penalty_pct": 7.0,
                        "interval": [0.2043, 0.2237],
                    },
                    "lipani2015": {
                        "estimate": 0.23,
                        "penalty": 0.03,
                        "penalty_pct": 15.0,
                        "interval": [0.21, 0.25],
                    },
                    "lipani2016": {
                        "estimate": 0.226,
                        "penalty": 0.026,
                        "penalty_pct": 13.0,
                        "interval": None,
                    },
                    "condensed": {
                        "estimate": 0.25,
                        "penalty": 0.05,
                        "penalty_pct": 25.0,
                        "interval": None,
                    },
                    "upper": {
                        "estimate": 0.4,
                        "penalty": 0.2,
                        "penalty_pct": 100.0,
                        "interval": None,
                    },
                },
            }
        },
        "deltas": {"n": 3, "mean": 0.014, "ci": [0.0043, 0.0237]},
    }


def estimators_ap() -> dict[str, Any]:
    """AP: the P@k-only estimators and the upper bound do not apply."""
    est = estimators_p10()
    est["measure"] = "AP"
    for name, why in (
        ("lipani2015", "defined for P@k only"),
        ("lipani2016", "defined for P@k and R@k only"),
        ("upper", "top-k measures only"),
    ):
        est["estimators"][name] = {
            "label": est["estimators"][name]["label"],
            "applicable": False,
            "why": why,
        }
        del est["not_pooled"][NOVEL]["estimates"][name]
        for run in est["runs"].values():
            run.pop(name, None)
    est["recommended_why"] = (
        "lowest mean absolute error (0.0121) of the 3 estimators that apply to AP, measured by "
        "leaving out each of the 3 groups in turn"
    )
    return est


def before_after() -> dict[str, Any]:
    """v1 -> v2 on topics 401 and 402; topic 403 is new in v2. alpha's recall drops, the novel
    run rises two ranks; beta's CI is null (not enough topics)."""
    return {
        "from": 1,
        "to": 2,
        "measure": "P@10",
        "recall_measure": "R@50",
        "mode": "trec_eval",
        "labels": ["v1", "v2"],
        "ci_level": 0.95,
        "topics": {"compared": ["401", "402"], "only_a": [], "only_b": ["403"], "neither": []},
        "topics_note": "compared on 2 topics; topic 403 is new in v2 (not in v1)",
        "kendall_tau": 0.333,
        "tau_ap": 0.25,
        "runs": {
            NOVEL: {
                "novel": True,
                "score_a": 0.2,
                "score_b": 0.26,
                "rank_a": 4,
                "rank_b": 2,
                "rank_change": 2,
                "delta": 0.06,
                "delta_ci": [0.012, 0.108],
                "delta_p": 0.00002,
                "recall_a": 0.3,
                "recall_b": 0.5,
                "recall_delta": 0.2,
                "recall_delta_ci": [0.1, 0.3],
                "recall_change": "gain",
                "new_topics": {"score_b": 0.3, "rank_b": 1, "recall_b": 0.6},
            },
            "alpha": {
                "novel": False,
                "score_a": 0.4,
                "score_b": 0.38,
                "rank_a": 1,
                "rank_b": 1,
                "rank_change": 0,
                "delta": -0.02,
                "delta_ci": [-0.05, 0.01],
                "delta_p": 0.2,
                "recall_a": 0.6,
                "recall_b": 0.5805,
                "recall_delta": -0.0195,
                "recall_delta_ci": [-0.04, 0.0],
                "recall_change": "drop",
                "new_topics": {"score_b": 0.2, "rank_b": 2, "recall_b": 0.4},
            },
            "beta": {
                "novel": False,
                "score_a": 0.3,
                "score_b": 0.25,
                "rank_a": 2,
                "rank_b": 3,
                "rank_change": -1,
                "delta": -0.05,
                "delta_ci": None,
                "delta_p": None,
                "recall_a": 0.5,
                "recall_b": 0.48,
                "recall_delta": -0.02,
                "recall_delta_ci": None,
                "recall_change": "drop",
                "new_topics": None,
            },
            "gamma": {
                "novel": False,
                "score_a": 0.25,
                "score_b": 0.24,
                "rank_a": 3,
                "rank_b": 4,
                "rank_change": -1,
                "delta": -0.01,
                "delta_ci": [-0.03, 0.01],
                "delta_p": 0.0,
                "recall_a": 0.4,
                "recall_b": 0.4,
                "recall_delta": 0.0,
                "recall_delta_ci": [0.0, 0.0],
                "recall_change": "no change",
                "new_topics": {"score_b": 0.1, "rank_b": 3, "recall_b": 0.2},
            },
        },
        "novel_gain": {NOVEL: 0.06},
        "others_recall_change": {
            "alpha": {"a": 0.6, "b": 0.5805, "delta": -0.0195, "change": "drop"},
            "beta": {"a": 0.5, "b": 0.48, "delta": -0.02, "change": "drop"},
            "gamma": {"a": 0.4, "b": 0.4, "delta": 0.0, "change": "no change"},
        },
        "mean_others_recall_change": -0.0132,
        "others_recall_summary": "recall fell for 2 of the 3 other runs on the 2 compared topics "
        "(mean -0.0132)",
    }


def loo() -> dict[str, Any]:
    return {
        "measure": "P@10",
        "depth": 10,
        "kendall_tau": 0.667,
        "tau_ap": 0.5,
        "runs": {
            "alpha": {
                "score": 0.4,
                "score_without": 0.35,
                "delta": 0.05,
                "delta_pct": 14.2857,
                "rank": 1,
                "rank_without": 1,
                "unique_relevant": 2,
            },
            "beta": {
                "score": 0.3,
                "score_without": 0.28,
                "delta": 0.02,
                "delta_pct": 7.1429,
                "rank": 2,
                "rank_without": 2,
                "unique_relevant": 1,
            },
            "gamma": {
                "score": 0.0,
                "score_without": 0.0,
                "delta": 0.0,
                "delta_pct": None,  # no % of a zero score: shown as "not enough data"
                "rank": 3,
                "rank_without": 3,
                "unique_relevant": 0,
            },
        },
        "mean_delta": 0.0233,
        "max_delta": 0.05,
        "max_delta_run": "alpha",
        "leave_out": "run",
        "mode": "trec_eval",
        "topics": TOPICS,
        "not_pooled": {NOVEL: 0.2},
    }


def old_penalty() -> dict[str, Any]:
    """What reports stored before this change carry (Webber & Park only)."""
    return {
        "estimate": True,
        "measure": "P@10",
        "method": "absolute",
        "penalty": 0.0233,
        "basis": {
            "source": "leave-one-out over the pooled runs (Webber & Park 2009)",
            "n_runs": 3,
            "measure": "P@10",
            "depth": 10,
            "leave_out": "run",
            "mode": "trec_eval",
            "n_topics": 3,
            "mean_delta": 0.0233,
            "mean_delta_pct": 72.0,  # the misleading figure: must not be shown
        },
        "runs": {NOVEL: {"score": 0.2, "estimated_penalty": 0.0233, "estimated_score": 0.2233}},
    }


def coverage() -> dict[str, Any]:
    return {
        "measure": "Judged@10",
        "k": 10,
        "mean_pooled": 1.0,
        "mean_not_pooled": 0.6,
        "runs": {
            **{t: {"mean": 1.0, "pooled": True, "per_query": {}} for t in POOLED},
            NOVEL: {"mean": 0.6, "pooled": False, "per_query": {}},
        },
    }


def efficiency() -> dict[str, Any]:
    return {
        "budgets": [0, 2, 4, 6],
        "curves": {
            "docid": [0.0, 0.5, 1.0, 1.5],
            "rank": [0.0, 1.0, 1.5, 1.5],
            "mtf": [None, None, None, None],  # nothing to draw: must not be in the legend
        },
        "depth": 10,
        "topics": 3,
    }


def result(*, measure: str = "P@10", old: bool = False, spec: str = "") -> dict[str, Any]:
    """A whole stored ``BiasReport.result``; ``old``: as stored before this change (penalty, and
    a before/after without its topics)."""
    out: dict[str, Any] = {
        "qrels_version": 2,
        "pooled": list(POOLED),
        "loo": loo(),
        "penalty": old_penalty(),
        "coverage": coverage(),
        "efficiency": efficiency(),
        "before_after": before_after(),
    }
    out["loo"]["measure"] = measure
    if old:
        for key in ("topics", "topics_note", "labels", "ci_level", "others_recall_summary"):
            out["before_after"].pop(key)
        return out
    out["topics"] = {"spec": spec, "analysed": list(TOPICS)}
    out["estimators"] = estimators_ap() if measure == "AP" else estimators_p10()
    return copy.deepcopy(out)


def reusability() -> dict[str, Any]:
    return {
        "depth": 10,
        "measure": "AP",
        "relevance_level": 1,
        "mode": "trec_eval",
        "topics": TOPICS,
        "n_runs": 4,
        "n_pooled": 3,
        "n_units": 3,
        "leave_out": "group",
        "relevant": {
            "total": 40,
            "by_one_unit": 10,
            "by_one_unit_share": 0.25,
            "by_one_run": 12,
            "by_one_run_share": 0.3,
        },
        "unique_relevant": {"g-alpha": 6, "g-beta": 3, "g-gamma": 1},
        "leave_one_out": {
            "max_drop": 0.031,
            "max_drop_unit": "g-beta",
            "mean_drop": 0.012,
            "kendall_tau": 0.81,
            "tau_ap": 0.74,
        },
        "judged": {
            "10": {"pooled": 1.0, "not_pooled": 0.6},
            "100": {"pooled": 0.42, "not_pooled": None},
        },
        "efficiency": {
            "depths": [1, 2, 3, 4, 5],
            "judged": [3, 7, 12, 18, 25],
            "relevant": [2, 4, 6, 7, 8],
            "relevant_per_judgment": [0.667, 0.5, 0.4, 0.167, 0.143],
        },
        "per_topic": {
            "401": {"relevant": 20, "judged": 80, "relevant_at_deepest": 0, "shallow": False},
            "402": {"relevant": 12, "judged": 40, "relevant_at_deepest": 3, "shallow": True},
            "403": {"relevant": 8, "judged": 30, "relevant_at_deepest": 0, "shallow": False},
        },
        "shallow_topics": ["402"],
        "expected_underestimate": [0.01, 0.03],
        "verdict": "A new system's AP is likely underestimated by 0.010-0.030; the pool is "
        "shallow for topic 402.",
        "basis": [
            "25.0% of the relevant documents were found by one group only (Voorhees 2018)",
            "leaving out one group at a time lowers its AP by 0.012 on average, at most 0.031",
        ],
    }


def shown(report: Any) -> dict[str, Any]:
    """A stored bias or reusability report's result as its admin reads it: every name shown,
    sentences as text (stored, from version 3, a sentence is its parts)."""
    from judging.evaluation.models import BiasReport
    from judging.evaluation.results import read_bias_result, read_reusability_result
    from metrics.results import render

    read = read_bias_result if isinstance(report, BiasReport) else read_reusability_result
    out: dict[str, Any] = render(read(report.result))
    return out
