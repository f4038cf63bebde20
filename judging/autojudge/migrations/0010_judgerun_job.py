# A judge run links to its job (core.Job): step 1 of 3, the link (empty).

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("autojudge", "0009_calibration_job_lifecycle"),
    ]

    operations = [
        migrations.AddField(
            model_name="judgerun",
            name="job",
            field=models.OneToOneField(
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="%(class)s",
                to="core.job",
            ),
        ),
    ]
