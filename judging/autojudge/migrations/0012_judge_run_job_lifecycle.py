# A judge run links to its job (core.Job): step 3 of 3, the lifecycle fields its job now holds
# (state, error, heartbeat_at, finished_at) leave the run table; every run has a job.

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("autojudge", "0011_jobs_of_judge_runs"),
    ]

    operations = [
        migrations.RemoveField(model_name="judgerun", name="state"),
        migrations.RemoveField(model_name="judgerun", name="error"),
        migrations.RemoveField(model_name="judgerun", name="heartbeat_at"),
        migrations.RemoveField(model_name="judgerun", name="finished_at"),
        migrations.AlterField(
            model_name="judgerun",
            name="job",
            field=models.OneToOneField(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="%(class)s",
                to="core.job",
            ),
        ),
    ]
