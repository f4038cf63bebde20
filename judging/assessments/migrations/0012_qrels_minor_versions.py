"""A qrels version may be a minor version: its base's rows and a few more, for one stated purpose
(a top-up of a run, issue 31 point 4). The version guard covers the new columns too (see
judging/assessments/immutability.py)."""

from typing import Any

import django.db.models.deletion
from django.db import migrations, models


def reinstall_triggers(apps: Any, schema_editor: Any) -> None:
    from judging.assessments import immutability

    immutability.uninstall(schema_editor.connection)
    immutability.install(
        schema_editor.connection,
        version_columns=immutability.VERSION_COLUMNS_BEFORE_0013,
        history_columns=immutability.HISTORY_COLUMNS_BEFORE_0014,
        kinds=False,
    )


def no_triggers(apps: Any, schema_editor: Any) -> None:
    """Off while the table changes: SQLite rebuilds it to add a foreign key, and a trigger that
    names the table breaks the rebuild."""
    from judging.assessments import immutability

    immutability.uninstall(schema_editor.connection)


def triggers_before(apps: Any, schema_editor: Any) -> None:
    from judging.assessments import immutability

    immutability.uninstall(schema_editor.connection)
    immutability.install(
        schema_editor.connection,
        version_columns=immutability.VERSION_COLUMNS_BEFORE_0012,
        history_columns=immutability.HISTORY_COLUMNS_BEFORE_0014,
        kinds=False,
    )


class Migration(migrations.Migration):
    dependencies = [("assessments", "0011_topups")]

    operations = [
        migrations.RunPython(no_triggers, triggers_before),
        migrations.AddField(
            model_name="qrelsversion",
            name="extends",
            field=models.ForeignKey(
                blank=True,
                help_text="The version this minor version adds rows to (none: a major version).",
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="assessments.qrelsversion",
            ),
        ),
        migrations.AddField(
            model_name="qrelsversion",
            name="minor",
            field=models.PositiveSmallIntegerField(
                default=0, help_text="1, 2, ... for the minor versions of the version it extends."
            ),
        ),
        migrations.AddField(
            model_name="qrelsversion",
            name="purpose",
            field=models.CharField(
                blank=True, help_text="What a minor version's added rows are for.", max_length=200
            ),
        ),
        migrations.RunPython(reinstall_triggers, no_triggers),
    ]
