# A judge calibration links to its job (core.Job): step 1 of 3, the link (empty).

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("autojudge", "0006_audit_job_lifecycle"),
    ]

    operations = [
        migrations.AddField(
            model_name="judgecalibration",
            name="job",
            field=models.OneToOneField(
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="%(class)s",
                to="core.job",
            ),
        ),
    ]
