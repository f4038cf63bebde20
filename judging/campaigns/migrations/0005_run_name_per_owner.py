"""Run.name: the tag as its submitter gave it, unique per submitter; Run.tag stays unique in the
campaign (a suffix when another researcher's run has the name), so a 409 never reveals another
researcher's tag. Existing runs keep their tag as their name."""

from typing import Any

from django.db import migrations, models
from django.db.models import F


def names_from_tags(apps: Any, schema_editor: Any) -> None:
    apps.get_model("campaigns", "Run").objects.update(name=F("tag"))


class Migration(migrations.Migration):
    dependencies = [("campaigns", "0004_campaign_measures")]

    operations = [
        migrations.AddField(
            model_name="run",
            name="name",
            field=models.CharField(
                default="",
                help_text="The tag as its submitter gave it (unique among their runs).",
                max_length=100,
            ),
            preserve_default=False,
        ),
        migrations.RunPython(names_from_tags, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="run",
            constraint=models.UniqueConstraint(
                fields=("campaign", "owner", "name"), name="run_name_unique_per_owner"
            ),
        ),
    ]
