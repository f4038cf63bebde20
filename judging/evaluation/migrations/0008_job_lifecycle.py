# Every stored result links to its job (core.Job): step 3 of 3, the lifecycle fields the jobs
# now hold (state, error, computed_at, seconds) leave the result tables; every row has a job.

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("evaluation", "0007_jobs_of_stored_results"),
    ]

    operations = [
        migrations.RemoveField(model_name="biaspart", name="state"),
        migrations.RemoveField(model_name="biaspart", name="error"),
        migrations.RemoveField(model_name="biaspart", name="computed_at"),
        migrations.RemoveField(model_name="biaspart", name="seconds"),
        migrations.RemoveField(model_name="biasreport", name="state"),
        migrations.RemoveField(model_name="biasreport", name="error"),
        migrations.RemoveField(model_name="biasreport", name="computed_at"),
        migrations.RemoveField(model_name="biasreport", name="seconds"),
        migrations.RemoveField(model_name="evaluation", name="state"),
        migrations.RemoveField(model_name="evaluation", name="error"),
        migrations.RemoveField(model_name="evaluation", name="computed_at"),
        migrations.RemoveField(model_name="evaluation", name="seconds"),
        migrations.RemoveField(model_name="reusability", name="state"),
        migrations.RemoveField(model_name="reusability", name="error"),
        migrations.RemoveField(model_name="reusability", name="computed_at"),
        migrations.RemoveField(model_name="reusability", name="seconds"),
        migrations.AlterField(
            model_name="biaspart",
            name="job",
            field=models.OneToOneField(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="%(class)s",
                to="core.job",
            ),
        ),
        migrations.AlterField(
            model_name="biasreport",
            name="job",
            field=models.OneToOneField(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="%(class)s",
                to="core.job",
            ),
        ),
        migrations.AlterField(
            model_name="evaluation",
            name="job",
            field=models.OneToOneField(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="%(class)s",
                to="core.job",
            ),
        ),
        migrations.AlterField(
            model_name="reusability",
            name="job",
            field=models.OneToOneField(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="%(class)s",
                to="core.job",
            ),
        ),
    ]
