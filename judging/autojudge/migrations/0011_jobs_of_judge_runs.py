# A judge run links to its job (core.Job): step 2 of 3, a job for every stored run, its state
# mapped (queued: pending, running, done, failed), with its error, last beat and when it
# finished. Run tasks recorded in the outbox under the old task name and not finished run the
# same work as the one job task (run_job).

from typing import Any

from django.db import migrations

RUN_TASK = "judging.core.tasks.run_job"
OLD_TASK = "judging.autojudge.tasks.run_judge"
KIND = "judge_run"
TO_JOB = {"queued": "pending", "running": "running", "done": "done", "failed": "failed"}
FROM_JOB = {"pending": "queued", "queued": "queued", "running": "running"}
FIELDS = ("state", "error", "heartbeat_at", "finished_at")


def forward(apps: Any, schema_editor: Any) -> None:
    Job = apps.get_model("core", "Job")
    OutboxTask = apps.get_model("core", "OutboxTask")
    JudgeRun = apps.get_model("autojudge", "JudgeRun")
    for run in JudgeRun.objects.filter(job__isnull=True).iterator(chunk_size=500):
        run.job = Job.objects.create(
            kind=KIND,
            key=f"judge-run:{run.pk}",
            state=TO_JOB.get(run.state, "pending"),
            since=run.finished_at or run.started_at or run.created_at,
            progress=run.done / run.total if run.total else None,
            error=run.error,
            attempts=1 if run.started_at else 0,
            heartbeat_at=run.heartbeat_at,
            created_at=run.created_at,
            computed_at=run.finished_at,
        )
        run.save(update_fields=["job"])
    for row in OutboxTask.objects.filter(done_at__isnull=True, task=OLD_TASK):
        run = JudgeRun.objects.filter(pk=(list(row.args) or [None])[0]).first()
        if run is None:
            row.done_at = row.created_at
            row.error = "what it was about was deleted"
            row.save(update_fields=["done_at", "error"])
            continue
        row.task, row.args, row.job_id = RUN_TASK, [run.job_id], run.job_id
        row.save(update_fields=["task", "args", "job"])


def backward(apps: Any, schema_editor: Any) -> None:
    Job = apps.get_model("core", "Job")
    OutboxTask = apps.get_model("core", "OutboxTask")
    JudgeRun = apps.get_model("autojudge", "JudgeRun")
    for run in JudgeRun.objects.filter(job__isnull=False).iterator(chunk_size=500):
        job = Job.objects.get(pk=run.job_id)
        run.state = FROM_JOB.get(job.state, job.state)
        run.error, run.heartbeat_at, run.finished_at = job.error, job.heartbeat_at, job.computed_at
        run.job = None
        run.save(update_fields=[*FIELDS, "job"])
        OutboxTask.objects.filter(done_at__isnull=True, job_id=job.pk, task=RUN_TASK).update(
            task=OLD_TASK, args=[run.pk], job=None
        )
    Job.objects.filter(kind=KIND).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("autojudge", "0010_judgerun_job"),
    ]

    operations = [migrations.RunPython(forward, backward)]
