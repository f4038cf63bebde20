"""The regression check of a run against a baseline run from STORED evaluations (the API's
``GET /api/v1/runs/<id>/check/``): the figures of :func:`metrics.evaluation.check.check_values` on
the per-query values the honest evaluations of both runs under one qrels version hold
(:func:`judging.evaluation.selectors.per_query_values`). Nothing here computes an evaluation or
writes a row: when either evaluation is not done, the answer says so and how to ask for it.

Decisions (documented in docs/guide/api.md):

- both runs must be visible to the user (``Run.objects.visible_to``: researchers their own
  runs, admins every run) and in the same campaign; the baseline is named by its id, or by its
  name as the user sees it (their run's name; an admin: its tag), among the campaign's runs;
- the measures are the campaign's (per-query values are stored for those only); none asked:
  all the campaign's measures but counts and Judged/Unjudged;
- the judged fraction of each run beside a measure is its stored companion (``Judged@k`` at the
  measure's cut-off, ``Judged`` of the whole ranking for AP, RR, nDCG, Rprec, bpref), averaged
  over the evaluation's queries, which are the same for both runs (one qrels version, honest
  mode); a measure without a stored companion (infAP) shows none;
- state ``pending`` (an evaluation is being computed) when nothing is missing; ``missing`` (never
  computed: POST ``/api/v1/runs/<id>/evaluations/``) or ``failed`` otherwise.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from django.db.models import Q

from judging.assessments.models import QrelsVersion
from judging.campaigns.models import Run, has_control_characters
from judging.campaigns.selectors import run_label
from judging.core.errors import InvalidInput, NotFound
from judging.core.models import JobState
from judging.core.roles import UserLike
from judging.evaluation.models import EvalMode
from judging.evaluation.results import upgraded_evaluation
from judging.evaluation.selectors import common_queries, per_query_values, run_evaluation
from metrics.evaluation.check import (
    DEFAULT_JUDGED_TOLERANCE,
    DEFAULT_MIN_JUDGED,
    check_values,
    judged_measure,
    parse_max_drop,
)
from metrics.measures.names import parse_measure, parse_measures
from metrics.problems import Problem
from metrics.stats.multiple import CORRECTIONS

TESTS = ("t", "randomization", "bootstrap")
BASELINE_MAX_LENGTH = 255  # Run.tag's and Run.name's max_length


def baseline_run(run: Run, ref: str, user: UserLike) -> Run:
    """The baseline named by ``ref``: a run id (all digits), or a run's name as ``user`` sees it
    (their own run's name; an admin: its tag) in ``run``'s campaign. One the user may not see is
    a 404; one of another campaign, or ``run`` itself, a 400."""
    ref = (ref or "").strip()
    if not ref:
        raise InvalidInput(
            "baseline: give the baseline run's id or name",
            [Problem.at("baseline", "required: a run id or the name of one of your runs")],
        )
    if len(ref) > BASELINE_MAX_LENGTH or has_control_characters(ref):
        raise InvalidInput(
            "baseline: not a run id or name",
            [
                Problem.at(
                    "baseline",
                    f"at most {BASELINE_MAX_LENGTH} characters, without control characters",
                )
            ],
        )
    visible = Run.objects.visible_to(user)
    found: Run | None
    if ref.isdigit() and len(ref) < 19:
        found = visible.filter(pk=int(ref)).first()
    else:
        candidates = visible.filter(campaign_id=run.campaign_id).filter(Q(tag=ref) | Q(name=ref))
        named = [r for r in candidates if run_label(r, user) == ref]
        found = named[0] if len(named) == 1 else None
    if found is None:
        raise NotFound(f"no run {ref[:40]!r} among the runs you may see")
    if found.campaign_id != run.campaign_id:
        raise InvalidInput(
            "baseline: another campaign's run",
            [Problem.at("baseline", f"run {found.pk} is not in campaign {run.campaign_id}")],
        )
    if found.pk == run.pk:
        raise InvalidInput(
            "baseline: the run itself",
            [Problem.at("baseline", "a run checked against itself always passes")],
        )
    return found


def _float(raw: str | None, name: str, default: float, *, open_interval: bool = False) -> float:
    """A number in [0, 1] (``open_interval``: in (0, 1)) from the query string, else a 400."""
    if raw is None or raw == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    inside = 0.0 < value < 1.0 if open_interval else 0.0 <= value <= 1.0
    if not inside:
        bounds = "strictly between 0 and 1" if open_interval else "between 0 and 1"
        raise InvalidInput(
            f"{name}: {raw[:40]!r} is out of range", [Problem.at(name, f"a number {bounds}")]
        )
    return value


def check_params(params: Any) -> dict[str, Any]:
    """The check's settings from a query string: max_drop (required, ``0.01`` or ``2%``), test,
    alpha, correction, judged_tolerance, min_judged; a 400 naming each bad one."""
    raw_drop = params.get("max_drop")
    if not raw_drop:
        raise InvalidInput(
            "max_drop: required",
            [Problem.at("max_drop", "the largest drop allowed: 0.01 (absolute) or 2% (relative)")],
        )
    try:
        max_drop, relative = parse_max_drop(str(raw_drop))
    except ValueError as exc:
        raise InvalidInput(f"max_drop: {exc}", [Problem.at("max_drop", str(exc))]) from None
    test = params.get("test") or "t"
    if test not in TESTS:
        raise InvalidInput(
            "unknown test",
            [Problem.at("test", f"test {test[:40]!r} is not one of {', '.join(TESTS)}")],
        )
    correction = params.get("correction") or "none"
    if correction not in CORRECTIONS:
        raise InvalidInput(
            "unknown correction",
            [
                Problem.at(
                    "correction", f"{correction[:40]!r} is not one of {', '.join(CORRECTIONS)}"
                )
            ],
        )
    return {
        "max_drop": max_drop,
        "relative": relative,
        "test": test,
        "correction": correction,
        "alpha": _float(params.get("alpha"), "alpha", 0.05, open_interval=True),
        "judged_tolerance": _float(
            params.get("judged_tolerance"), "judged_tolerance", DEFAULT_JUDGED_TOLERANCE
        ),
        "min_judged": _float(params.get("min_judged"), "min_judged", DEFAULT_MIN_JUDGED),
    }


def _measures(campaign_measures: list[str], asked: list[str]) -> list[str]:
    """The asked measures, each once (any spelling), or the campaign's default set."""
    if not asked:
        return [m.name for m in parse_measures(campaign_measures) if judged_measure(m) is not None]
    out: list[str] = []
    for text in asked:
        try:
            name = parse_measure(text).name
        except ValueError:
            name = text  # per_query_values names the campaign's measures in its 400
        if name not in out:
            out.append(name)
    return out


def _request(run: Run, version: QrelsVersion) -> dict[str, Any]:
    return {
        "method": "POST",
        "url": f"/api/v1/runs/{run.pk}/evaluations/",
        "body": {"qrels": version.number, "mode": EvalMode.HONEST},
    }


def regression_check(
    *,
    run: Run,
    baseline: Run,
    version: QrelsVersion,
    measures: list[str],
    user: UserLike,
    params: dict[str, Any],
) -> dict[str, Any]:
    """The check as the API answers it: ``state`` ``done`` with ``passed``, ``verdict``,
    ``summary`` and a row per measure (:meth:`metrics.evaluation.check.CheckResult.to_dict`); else
    the state (``pending``, ``missing``, ``failed``) of each run's evaluation and how to ask for a
    missing one. Always the qrels version's number and content hash."""
    campaign = run.campaign
    head: dict[str, Any] = {
        "campaign": campaign.pk,
        "run_id": run.pk,
        "baseline_id": baseline.pk,
        "qrels_version": version.number,
        "qrels_kind": version.kind_label,
        "qrels_hash": version.content_hash,
        "mode": EvalMode.HONEST,
    }
    names = _measures(list(campaign.measures), measures)
    if not names:
        raise InvalidInput(
            "measure: the campaign has no measure to check by default",
            [Problem.at("measure", f"name one of {', '.join(campaign.measures)}")],
        )
    values: dict[str, dict[str, dict[str, float]]] = {}
    label = {run.pk: run_label(run, user), baseline.pk: run_label(baseline, user)}
    for name in names:  # each is validated (a 400 naming the campaign's measures) first
        canonical, per_query, _ = per_query_values(
            campaign=campaign, version=version, measure=name, user=user, runs=[run, baseline]
        )
        values[canonical] = per_query
    evaluations = {r.pk: run_evaluation(r, version, EvalMode.HONEST) for r in (run, baseline)}
    states = {pk: ev.state if ev is not None else "missing" for pk, ev in evaluations.items()}
    if any(s != JobState.DONE for s in states.values()):
        worst = next(
            (s for s in ("missing", JobState.FAILED, JobState.PENDING) if s in states.values()),
            JobState.PENDING,
        )
        rows = []
        for r in (run, baseline):
            ev = evaluations[r.pk]
            row: dict[str, Any] = {"run": label[r.pk], "run_id": r.pk, "state": states[r.pk]}
            if ev is not None and ev.error:
                row["error"] = ev.error
            if states[r.pk] in ("missing", JobState.FAILED):
                row["request"] = _request(r, version)
            rows.append(row)
        detail = {
            "missing": "an evaluation was never computed: POST the request shown to compute "
            "it, then ask again",
            JobState.FAILED: "an evaluation failed: POST the request shown to retry it",
            JobState.PENDING: "an evaluation is being computed: ask again shortly",
        }[worst]
        return {
            **head,
            "run": label[run.pk],
            "baseline": label[baseline.pk],
            "state": worst,
            "passed": None,
            "detail": detail,
            "evaluations": rows,
        }
    results = {
        pk: upgraded_evaluation(ev.result) if ev is not None else {}
        for pk, ev in evaluations.items()
    }
    judged: dict[str, tuple[str | None, float | None, float | None]] = {}
    for name in values:
        stored = [
            (results[pk] or {}).get("measures", {}).get(name, {}).get("judged")
            for pk in (run.pk, baseline.pk)
        ]
        if all(isinstance(s, dict) and s.get("value") is not None for s in stored):
            judged[name] = (stored[0]["measure"], stored[0]["value"], stored[1]["value"])
    queries = common_queries(next(iter(values.values())))
    try:
        result = check_values(
            {m: v.get(label[run.pk], {}) for m, v in values.items()},
            {m: v.get(label[baseline.pk], {}) for m, v in values.items()},
            queries=queries,
            judged=judged,
            run_name=label[run.pk],
            baseline_name=label[baseline.pk],
            **params,
        )
    except ValueError as exc:  # too few scored topics in common for the test asked
        raise InvalidInput(
            f"the runs cannot be compared: {exc}", [Problem.at("baseline", str(exc))]
        ) from None
    # what each evaluation says of its queries (excluded, unanswered), as the CLI says it
    said = [list((results[pk] or {}).get("excluded_summary") or []) for pk in (run.pk, baseline.pk)]
    both = [s for s in said[1] if s in said[0]]
    notes = both + [f"run: {s}" for s in said[0] if s not in both]
    notes += [f"baseline: {s}" for s in said[1] if s not in both]
    result = replace(
        result,
        unanswered_run=len((results[run.pk] or {}).get("unanswered") or []),
        unanswered_baseline=len((results[baseline.pk] or {}).get("unanswered") or []),
        notes=notes,
    )
    return {**head, "state": JobState.DONE, **result.to_dict()}
