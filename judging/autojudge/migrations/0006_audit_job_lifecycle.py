# A judge audit links to its job (core.Job): step 3 of 3, the lifecycle fields its job now
# holds (state, error, finished_at) leave the audit table; every audit has a job.

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("autojudge", "0005_jobs_of_audits"),
    ]

    operations = [
        migrations.RemoveField(model_name="judgeaudit", name="state"),
        migrations.RemoveField(model_name="judgeaudit", name="error"),
        migrations.RemoveField(model_name="judgeaudit", name="finished_at"),
        migrations.AlterField(
            model_name="judgeaudit",
            name="job",
            field=models.OneToOneField(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="%(class)s",
                to="core.job",
            ),
        ),
    ]
