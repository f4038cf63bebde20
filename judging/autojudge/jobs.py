"""This app's stored computations: its entries in the job registry (``core.jobs``), loaded by
``AutojudgeConfig.ready``. Each says what it reads (the key), how it computes, where its result
is stored and what makes it out of date."""

from __future__ import annotations

from judging.autojudge import audit
from judging.core.jobs import Computation, register

register(
    Computation(
        kind="judge_audit",
        reads="a judge version's labels, a human qrels version, a pool version and the "
        "campaign's runs (key judge-audit:AUDIT; the row is unique per judge, qrels, pool)",
        compute=audit.audit_compute,  # metrics.judges.audit, families, probes
        store=audit.audit_store,  # JudgeAudit.result
        stale="asked again: labels or runs added later are read by the next computation",
    )
)
