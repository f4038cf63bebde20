# A judge calibration links to its job (core.Job): step 2 of 3, a job for every stored
# calibration, its state mapped (queued: pending, running, done, failed), with its error and
# when it finished. Calibration tasks recorded in the outbox under the old task name and not
# finished run the same work as the one job task (run_job).

from typing import Any

from django.db import migrations

RUN_TASK = "judging.core.tasks.run_job"
OLD_TASK = "judging.autojudge.tasks.calibrate_judge"
KIND = "judge_calibration"
TO_JOB = {"queued": "pending", "running": "running", "done": "done", "failed": "failed"}
FROM_JOB = {"pending": "queued", "queued": "queued", "running": "running"}


def forward(apps: Any, schema_editor: Any) -> None:
    Job = apps.get_model("core", "Job")
    OutboxTask = apps.get_model("core", "OutboxTask")
    JudgeCalibration = apps.get_model("autojudge", "JudgeCalibration")
    rows = JudgeCalibration.objects.filter(job__isnull=True)
    for calibration in rows.iterator(chunk_size=500):
        calibration.job = Job.objects.create(
            kind=KIND,
            key=f"judge-calibration:{calibration.pk}",
            state=TO_JOB.get(calibration.state, "pending"),
            since=calibration.finished_at or calibration.created_at,
            error=calibration.error,
            created_at=calibration.created_at,
            computed_at=calibration.finished_at,
        )
        calibration.save(update_fields=["job"])
    for row in OutboxTask.objects.filter(done_at__isnull=True, task=OLD_TASK):
        calibration = JudgeCalibration.objects.filter(pk=(list(row.args) or [None])[0]).first()
        if calibration is None:
            row.done_at = row.created_at
            row.error = "what it was about was deleted"
            row.save(update_fields=["done_at", "error"])
            continue
        row.task, row.args, row.job_id = RUN_TASK, [calibration.job_id], calibration.job_id
        row.save(update_fields=["task", "args", "job"])


def backward(apps: Any, schema_editor: Any) -> None:
    Job = apps.get_model("core", "Job")
    OutboxTask = apps.get_model("core", "OutboxTask")
    JudgeCalibration = apps.get_model("autojudge", "JudgeCalibration")
    rows = JudgeCalibration.objects.filter(job__isnull=False)
    for calibration in rows.iterator(chunk_size=500):
        job = Job.objects.get(pk=calibration.job_id)
        calibration.state = FROM_JOB.get(job.state, job.state)
        calibration.error, calibration.finished_at = job.error, job.computed_at
        calibration.job = None
        calibration.save(update_fields=["state", "error", "finished_at", "job"])
        OutboxTask.objects.filter(done_at__isnull=True, job_id=job.pk, task=RUN_TASK).update(
            task=OLD_TASK, args=[calibration.pk], job=None
        )
    Job.objects.filter(kind=KIND).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("autojudge", "0007_judgecalibration_job"),
    ]

    operations = [migrations.RunPython(forward, backward)]
