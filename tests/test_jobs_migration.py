"""Migrations 0006-0008 of ``evaluation`` move every stored result's lifecycle (state, error,
when, how long) to its job (``core.Job``): stored rows keep what they said, bias parts become
parts of their report's job, and tasks recorded under the old task names run as jobs.

Its own module: a transactional test cannot share one with the module-scoped demo fixture."""

from __future__ import annotations

import pytest

from judging.campaigns.models import Campaign
from judging.core import jobs
from judging.core.models import Job, JobState, OutboxTask
from judging.evaluation.bias import BIAS_PARTS
from judging.evaluation.models import BiasPart, BiasReport, Evaluation, Reusability
from tests.test_bias_service import tiny  # noqa: F401

BEFORE = [("evaluation", "0005_evaluation_summary")]


@pytest.mark.django_db(transaction=True)
@pytest.mark.follow_ups  # reads the default bias report and reusability a new version asks for
def test_stored_results_get_jobs_with_their_states_and_old_tasks_run_as_jobs(
    tiny: Campaign,  # noqa: F811
) -> None:
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    report = BiasReport.objects.get(campaign=tiny, measure="AP")
    stored = {
        e.pk: (e.state, e.error, e.computed_at, e.seconds)
        for e in Evaluation.objects.filter(run__campaign=tiny)
    }
    assert stored and {s for s, *_ in stored.values()} == {JobState.DONE}
    reuse = Reusability.objects.get(campaign=tiny)
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    try:
        old = executor.loader.project_state(BEFORE).apps
        OldEvaluation = old.get_model("evaluation", "Evaluation")
        OldReport = old.get_model("evaluation", "BiasReport")
        OldPart = old.get_model("evaluation", "BiasPart")
        # the way back kept every row's state in its own fields
        for pk, (state, error, computed_at, seconds) in stored.items():
            row = OldEvaluation.objects.get(pk=pk)
            assert (row.state, row.error, row.computed_at, row.seconds) == (
                state,
                error,
                computed_at,
                seconds,
            )
        failed = OldEvaluation.objects.order_by("pk").first()
        OldEvaluation.objects.filter(pk=failed.pk).update(state="failed", error="ValueError: x")
        # a report asked for and not computed yet (its task still in the outbox), and a lost part
        pending = OldReport.objects.create(
            campaign_id=tiny.pk, qrels_id=report.qrels_id, kind="loo_run", measure="P@5", depth=3
        )
        assert OldPart.objects.filter(report_id=report.pk).count() == len(BIAS_PARTS)
        old_rows = [
            OutboxTask.objects.create(
                task="judging.evaluation.tasks.compute_bias_report",
                args=[pending.pk],
                key=f"bias:{pending.pk}",
            ),
            OutboxTask.objects.create(
                task="judging.evaluation.tasks.evaluate_qrels_version",
                args=[report.qrels_id],
                key=f"evaluate_qrels:{report.qrels_id}",
            ),
            OutboxTask.objects.create(
                task="judging.evaluation.tasks.compute_reusability",
                args=[10**9],
                key="reusability:gone",
            ),
        ]
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())

    for pk, (state, error, computed_at, seconds) in stored.items():
        row = Evaluation.objects.select_related("job").get(pk=pk)
        assert row.job.kind == "evaluation"
        assert row.job.key == f"evaluate_run:{row.run_id}:{row.qrels_id}:{row.mode}"
        if pk == failed.pk:
            assert (row.state, row.job.state, row.error) == ("failed", "failed", "ValueError: x")
        else:
            assert (row.state, row.error, row.computed_at, row.seconds) == (
                state,
                error,
                computed_at,
                seconds,
            )
    report = BiasReport.objects.get(pk=report.pk)
    assert (report.state, report.job.kind, report.job.key) == (
        "done",
        "bias_report",
        f"bias:{report.pk}",
    )
    parts = BiasPart.objects.filter(report=report).select_related("job")
    assert {p.job.parent_id for p in parts} == {report.job.pk}
    assert {p.job.part for p in parts} == set(BIAS_PARTS)
    assert Reusability.objects.get(pk=reuse.pk).job.kind == "reusability"
    # the old tasks: one job task each, for the same work; a task about a deleted row is closed
    rows = {r.pk: r for r in OutboxTask.objects.filter(pk__in=[r.pk for r in old_rows])}
    bias_row, eval_row, gone_row = (rows[r.pk] for r in old_rows)
    pending_report = BiasReport.objects.get(pk=pending.pk)
    assert pending_report.state == JobState.PENDING
    assert (bias_row.task, bias_row.args, bias_row.job_id) == (
        jobs.RUN_TASK,
        [pending_report.job.pk],
        pending_report.job.pk,
    )
    assert eval_row.task == jobs.RUN_TASK and eval_row.job is not None
    assert eval_row.job.kind == "evaluations"
    assert eval_row.job.args == {"qrels": report.qrels_id, "mode": "honest", "runs": None}
    assert gone_row.done_at is not None and gone_row.task.endswith("compute_reusability")
    # and they run: the pending report is computed from its parts
    jobs.compute_here(pending_report.job)
    pending_report.refresh_from_db()
    assert pending_report.state == JobState.DONE, pending_report.error
    assert jobs.run(eval_row.job.pk).state == JobState.DONE  # type: ignore[union-attr]
    # every run evaluated, the failed evaluation again (as the old task did)
    assert not Job.objects.filter(kind="evaluation").exclude(state=JobState.DONE).exists()
