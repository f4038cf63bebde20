# Every stored result links to its job (core.Job): step 2 of 3, a job for every stored row, its
# state mapped (pending, done, failed: the same words), with its error, when and how long; the
# bias parts' jobs are parts of their report's job. Tasks recorded in the outbox under the old
# task names and not finished run the same work as the one job task (run_job).

from typing import Any

from django.db import migrations

RUN_TASK = "judging.core.tasks.run_job"
OLD = "judging.evaluation.tasks."
FIELDS = ("state", "error", "computed_at", "seconds")


def _job(Job: Any, kind: str, key: str, row: Any, **extra: Any) -> Any:
    since = row.computed_at or row.created_at
    return Job.objects.create(
        kind=kind,
        key=key,
        state=row.state,
        since=since,
        error=row.error,
        created_at=row.created_at,
        computed_at=row.computed_at,
        seconds=row.seconds,
        **extra,
    )


def forward(apps: Any, schema_editor: Any) -> None:
    Job = apps.get_model("core", "Job")
    OutboxTask = apps.get_model("core", "OutboxTask")
    Evaluation = apps.get_model("evaluation", "Evaluation")
    BiasReport = apps.get_model("evaluation", "BiasReport")
    BiasPart = apps.get_model("evaluation", "BiasPart")
    Reusability = apps.get_model("evaluation", "Reusability")
    for ev in Evaluation.objects.filter(job__isnull=True).iterator(chunk_size=500):
        key = f"evaluate_run:{ev.run_id}:{ev.qrels_id}:{ev.mode}"
        ev.job = _job(Job, "evaluation", key, ev)
        ev.save(update_fields=["job"])
    for report in BiasReport.objects.filter(job__isnull=True).iterator(chunk_size=500):
        report.job = _job(Job, "bias_report", f"bias:{report.pk}", report)
        report.save(update_fields=["job"])
    for part in BiasPart.objects.filter(job__isnull=True).iterator(chunk_size=500):
        parent = BiasReport.objects.get(pk=part.report_id).job
        part.job = _job(
            Job,
            "bias_part",
            f"bias:{part.report_id}:part:{part.name}",
            part,
            parent=parent,
            part=part.name,
        )
        part.save(update_fields=["job"])
    for report in Reusability.objects.filter(job__isnull=True).iterator(chunk_size=500):
        report.job = _job(Job, "reusability", f"reusability:{report.pk}", report)
        report.save(update_fields=["job"])
    # unfinished tasks of the old names: the same work as a job
    for row in OutboxTask.objects.filter(done_at__isnull=True, task__startswith=OLD):
        job = _old_task_job(apps, row.task[len(OLD) :], list(row.args), row.key)
        if job is None:
            row.done_at = row.created_at
            row.error = "what it was about was deleted"
            row.save(update_fields=["done_at", "error"])
            continue
        row.task, row.args, row.job = RUN_TASK, [job.pk], job
        row.save(update_fields=["task", "args", "job"])


def _old_task_job(apps: Any, name: str, args: list[Any], key: str) -> Any:
    Job = apps.get_model("core", "Job")
    if name in ("evaluate_run", "evaluate_qrels_version", "evaluate_runs_part"):
        if name == "evaluate_run":
            run_id, qrels_id, *rest = args
            runs: Any = [run_id]
        elif name == "evaluate_runs_part":
            qrels_id, runs, *rest = args
        else:
            qrels_id, *rest = args
            runs = None
        mode = rest[0] if rest else "honest"
        return Job.objects.create(
            kind="evaluations", key=key, args={"qrels": qrels_id, "mode": mode, "runs": runs}
        )
    model = {
        "compute_bias_report": "BiasReport",
        "assemble_bias_report": "BiasReport",
        "compute_reusability": "Reusability",
        "compute_bias_part": "BiasPart",
    }.get(name)
    if model is None:
        return None
    Model = apps.get_model("evaluation", model)
    if model == "BiasPart":
        row = Model.objects.filter(report_id=args[0], name=args[1]).first()
    else:
        row = Model.objects.filter(pk=args[0]).first()
    return None if row is None else Job.objects.get(pk=row.job_id)


def backward(apps: Any, schema_editor: Any) -> None:
    Job = apps.get_model("core", "Job")
    for name in ("Evaluation", "BiasReport", "BiasPart", "Reusability"):
        Model = apps.get_model("evaluation", name)
        for row in Model.objects.filter(job__isnull=False).iterator(chunk_size=500):
            job = Job.objects.get(pk=row.job_id)
            row.state = job.state if job.state in ("done", "failed") else "pending"
            row.error, row.computed_at, row.seconds = job.error, job.computed_at, job.seconds
            row.job = None
            row.save(update_fields=[*FIELDS, "job"])
    Job.objects.filter(
        kind__in=("evaluation", "evaluations", "bias_report", "bias_part", "reusability")
    ).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("evaluation", "0006_job_links"),
    ]

    operations = [migrations.RunPython(forward, backward)]
