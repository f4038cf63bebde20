# Every stored result links to its job (core.Job): step 1 of 3, the links (empty).

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("core", "0003_jobs"),
        ("evaluation", "0005_evaluation_summary"),
    ]

    operations = [
        migrations.AddField(
            model_name="biaspart",
            name="job",
            field=models.OneToOneField(
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="%(class)s",
                to="core.job",
            ),
        ),
        migrations.AddField(
            model_name="biasreport",
            name="job",
            field=models.OneToOneField(
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="%(class)s",
                to="core.job",
            ),
        ),
        migrations.AddField(
            model_name="evaluation",
            name="job",
            field=models.OneToOneField(
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="%(class)s",
                to="core.job",
            ),
        ),
        migrations.AddField(
            model_name="reusability",
            name="job",
            field=models.OneToOneField(
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="%(class)s",
                to="core.job",
            ),
        ),
    ]
