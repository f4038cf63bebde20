# A judge audit links to its job (core.Job): step 2 of 3, a job for every stored audit, its
# state mapped (queued: pending, running, done, failed), with its error and when it finished.
# Audit tasks recorded in the outbox under the old task name and not finished run the same
# work as the one job task (run_job).

from typing import Any

from django.db import migrations

RUN_TASK = "judging.core.tasks.run_job"
OLD_TASK = "judging.autojudge.tasks.compute_audit"
KIND = "judge_audit"
TO_JOB = {"queued": "pending", "running": "running", "done": "done", "failed": "failed"}
FROM_JOB = {"pending": "queued", "queued": "queued", "running": "running"}


def forward(apps: Any, schema_editor: Any) -> None:
    Job = apps.get_model("core", "Job")
    OutboxTask = apps.get_model("core", "OutboxTask")
    JudgeAudit = apps.get_model("autojudge", "JudgeAudit")
    for audit in JudgeAudit.objects.filter(job__isnull=True).iterator(chunk_size=500):
        audit.job = Job.objects.create(
            kind=KIND,
            key=f"judge-audit:{audit.pk}",
            state=TO_JOB.get(audit.state, "pending"),
            since=audit.finished_at or audit.created_at,
            error=audit.error,
            created_at=audit.created_at,
            computed_at=audit.finished_at,
        )
        audit.save(update_fields=["job"])
    for row in OutboxTask.objects.filter(done_at__isnull=True, task=OLD_TASK):
        audit = JudgeAudit.objects.filter(pk=(list(row.args) or [None])[0]).first()
        if audit is None:
            row.done_at = row.created_at
            row.error = "what it was about was deleted"
            row.save(update_fields=["done_at", "error"])
            continue
        row.task, row.args, row.job_id = RUN_TASK, [audit.job_id], audit.job_id
        row.save(update_fields=["task", "args", "job"])


def backward(apps: Any, schema_editor: Any) -> None:
    Job = apps.get_model("core", "Job")
    OutboxTask = apps.get_model("core", "OutboxTask")
    JudgeAudit = apps.get_model("autojudge", "JudgeAudit")
    for audit in JudgeAudit.objects.filter(job__isnull=False).iterator(chunk_size=500):
        job = Job.objects.get(pk=audit.job_id)
        audit.state = FROM_JOB.get(job.state, job.state)
        audit.error, audit.finished_at, audit.job = job.error, job.computed_at, None
        audit.save(update_fields=["state", "error", "finished_at", "job"])
        OutboxTask.objects.filter(done_at__isnull=True, job_id=job.pk, task=RUN_TASK).update(
            task=OLD_TASK, args=[audit.pk], job=None
        )
    Job.objects.filter(kind=KIND).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("autojudge", "0004_judgeaudit_job"),
    ]

    operations = [migrations.RunPython(forward, backward)]
