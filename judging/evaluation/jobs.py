"""This app's stored computations: its entries in the job registry (``core.jobs``), loaded by
``EvaluationConfig.ready``. Each says what it reads (the key), how it computes, where its result
is stored and what makes it out of date."""

from __future__ import annotations

from judging.core.jobs import Computation, register
from judging.evaluation import bias, late, reusability, services

register(
    Computation(
        kind="evaluation",
        reads="a run, a qrels version, a mode and the campaign's measures "
        "(key evaluate_run:RUN:QRELS:MODE; the row is unique per run, version, mode, measures)",
        compute=services.evaluation_compute,  # metrics.Evaluator and metrics.measures.curve
        store=services.evaluation_store,  # Evaluation.result, summary, slices, curve
        row="evaluation.Evaluation",
        stale="never in place: another qrels version, mode or set of measures is another row",
    )
)

register(
    Computation(
        kind="evaluations",
        reads="a qrels version, a mode and runs (named, or every run of the campaign: split in "
        "parts of POOLJUDGE_EVAL_RUNS_PER_TASK runs, each a job of this kind)",
        compute=services.evaluation_batch,  # each run's Evaluation row and its own job
        store=lambda job, result: None,
        assemble=lambda job, parts: None,
        stale="never: each run's evaluation is its own row; runs added later are evaluated "
        "when they arrive",
    )
)

register(
    Computation(
        kind="bias_report",
        reads="a campaign's runs (pinned when its parts are recorded), a qrels version, a "
        "measure, a depth, a kind (leave one run or group out) and a topic subset "
        "(key bias:REPORT; the row is unique per campaign, version, kind, measure, depth, "
        "topics)",
        compute=bias.report_parts,  # one part per analysis, bias.BIAS_PARTS
        store=bias.report_store,  # BiasReport.result
        assemble=bias.report_assemble,
        row="evaluation.BiasReport",
        stale="never in place: a new qrels version is another report; runs submitted after "
        "its parts were recorded are in none of them",
    )
)

register(
    Computation(
        kind="bias_part",
        reads="its report's inputs and the runs pinned in its BiasPart row",
        compute=bias.part_compute,  # metrics.bias, bias_estimators, pooling
        store=bias.part_store,  # BiasPart.result
        row="evaluation.BiasPart",
        stale="never: a part of a stored report",
    )
)

register(
    Computation(
        kind="reusability",
        reads="a qrels version, the campaign's runs, pooled topics and pool depth "
        "(key reusability:REPORT; one row per qrels version)",
        compute=reusability.report_compute,  # metrics.bias.reusability
        store=reusability.report_store,  # Reusability.result
        row="evaluation.Reusability",
        stale="never in place: each qrels version has its own report",
    )
)

register(
    Computation(
        kind="run_penalty",
        reads="a run, a qrels version and a measure, with the campaign's runs now and the runs "
        "pooled for that version (key run-penalty:ROW; one row per run, version, measure)",
        compute=late.run_penalty_compute,  # metrics.bias.estimators, as the report's part
        store=late.run_penalty_store,  # RunPenalty.result
        stale="never in place: a late run's penalty on a version; the next version's report "
        "covers it",
        row="evaluation.RunPenalty",
    )
)
