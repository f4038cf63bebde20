# A judge calibration links to its job (core.Job): step 3 of 3, the lifecycle fields its job
# now holds (state, error, finished_at) leave the calibration table; every one has a job.

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("autojudge", "0008_jobs_of_calibrations"),
    ]

    operations = [
        migrations.RemoveField(model_name="judgecalibration", name="state"),
        migrations.RemoveField(model_name="judgecalibration", name="error"),
        migrations.RemoveField(model_name="judgecalibration", name="finished_at"),
        migrations.AlterField(
            model_name="judgecalibration",
            name="job",
            field=models.OneToOneField(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="%(class)s",
                to="core.job",
            ),
        ),
    ]
