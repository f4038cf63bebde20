# A campaign's run pooling replaces its default_pooled flag: a campaign that did not pool new
# runs by default is closed, one that did is auto (open until its first pool version); topics
# may have no title (created from the ids in qrels or runs).

from typing import Any

from django.db import migrations, models


def forwards(apps: Any, schema_editor: Any) -> None:
    Campaign = apps.get_model("campaigns", "Campaign")
    Campaign.objects.filter(default_pooled=False).update(run_pooling="closed")


def backwards(apps: Any, schema_editor: Any) -> None:
    Campaign = apps.get_model("campaigns", "Campaign")
    Campaign.objects.filter(run_pooling="closed").update(default_pooled=False)


class Migration(migrations.Migration):
    dependencies = [
        ("campaigns", "0008_run_read_warnings_stored"),
    ]

    operations = [
        migrations.AddField(
            model_name="campaign",
            name="run_pooling",
            field=models.CharField(
                choices=[
                    ("auto", "Open until the first pool version, then closed"),
                    ("open", "Open: new runs are pooled unless an admin says otherwise"),
                    ("closed", "Closed: new runs are not pooled until an admin includes them"),
                ],
                default="auto",
                help_text="Whether newly submitted runs contribute to the next pool: open, closed, or auto (open until the campaign's first pool version, closed after it, so a run that arrives once judging has begun does not reshape the pool without an admin's say).",
                max_length=10,
            ),
        ),
        migrations.RunPython(forwards, backwards),
        migrations.RemoveField(
            model_name="campaign",
            name="default_pooled",
        ),
        migrations.AlterField(
            model_name="topic",
            name="title",
            field=models.CharField(blank=True, max_length=1000),
        ),
    ]
