"""This app's stored computations: its entries in the job registry (``core.jobs``), loaded by
``AutojudgeConfig.ready``. Each says what it reads (the key), how it computes, where its result
is stored and what makes it out of date."""

from __future__ import annotations

from judging.autojudge import audit, meta_eval, services
from judging.core.jobs import Computation, register

register(
    Computation(
        kind="judge_audit",
        reads="a judge version's labels, a human qrels version, a pool version and the "
        "campaign's runs (key judge-audit:AUDIT; the row is unique per judge, qrels, pool)",
        compute=audit.audit_compute,  # metrics.judges.audit, families, probes
        store=audit.audit_store,  # JudgeAudit.result
        row="autojudge.JudgeAudit",
        stale="asked again: labels or runs added later are read by the next computation",
    )
)

register(
    Computation(
        kind="judge_calibration",
        reads="an embedding judge version, a human qrels version, a pool version's documents "
        "and their texts, a sample size and seed (key judge-calibration:CALIBRATION; a new row "
        "each time one is asked for while none of the same is live)",
        compute=services.calibration_compute,  # metrics.judges.calibration via the model
        store=services.calibration_store,  # JudgeCalibration.calibrated, the judge's next version
        row="autojudge.JudgeCalibration",
        stale="never in place: its result is a new judge version; another calibration is asked "
        "for anew",
    )
)

register(
    Computation(
        kind="judge_run",
        reads="a judge version and a pool version's documents and texts, a top-up's, or (no "
        "pool, no top-up) the answer runs' items of the run's kind and bank "
        "(autojudge.answer_labels) (key judge-run:RUN; a new row each time one is asked for "
        "while none over the same pool, or kind and bank, is live)",
        compute=services.judge_run_compute,  # the judge's labeller; counts saved per batch
        store=lambda job, result: None,  # the labels (AutoLabel, its cache) and JudgeRun's counts
        row="autojudge.JudgeRun",
        stale="never in place: a run labels what its judge version has not graded yet",
    )
)

register(
    Computation(
        kind="meta_evaluation",
        reads="every judge's labels on a pool version, a human qrels version, the campaign's "
        "runs and a measure (key meta-evaluation:META; the row is unique per qrels, pool and "
        "measure)",
        compute=meta_eval.meta_compute,  # metrics.judges.meta and meta_labels
        store=meta_eval.meta_store,  # MetaEvaluation.result
        row="autojudge.MetaEvaluation",
        stale="asked again: judges, labels or runs added later are read by the next computation",
    )
)
