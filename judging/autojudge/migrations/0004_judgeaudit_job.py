# A judge audit links to its job (core.Job): step 1 of 3, the link (empty).

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("core", "0003_jobs"),
        ("autojudge", "0003_judgecalibration"),
    ]

    operations = [
        migrations.AddField(
            model_name="judgeaudit",
            name="job",
            field=models.OneToOneField(
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="%(class)s",
                to="core.job",
            ),
        ),
    ]
