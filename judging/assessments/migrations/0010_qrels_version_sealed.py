"""A stored qrels version is sealed: the database refuses a row added to it (issue 29, point 20).

Versions stored before are sealed (their rows are all written); the triggers are replaced by
the ones that guard the seal (see judging/assessments/immutability.py)."""

from typing import Any

from django.db import migrations, models


def reinstall_triggers(apps: Any, schema_editor: Any) -> None:
    from judging.assessments import immutability

    immutability.uninstall(schema_editor.connection)
    immutability.install(
        schema_editor.connection,
        version_columns=immutability.VERSION_COLUMNS_BEFORE_0012,
        history_columns=immutability.HISTORY_COLUMNS_BEFORE_0014,
        kinds=False,
    )


def triggers_before(apps: Any, schema_editor: Any) -> None:
    from judging.assessments import immutability

    immutability.uninstall(schema_editor.connection)
    immutability.install(
        schema_editor.connection,
        version_columns=immutability.VERSION_COLUMNS_BEFORE_0012,
        sealing=False,
        history_columns=immutability.HISTORY_COLUMNS_BEFORE_0014,
        kinds=False,
    )


class Migration(migrations.Migration):
    dependencies = [("assessments", "0009_judgment_suggestion")]

    operations = [
        migrations.RunPython(migrations.RunPython.noop, triggers_before),
        migrations.AddField(
            model_name="qrelsversion",
            name="sealed",
            field=models.BooleanField(
                default=True, help_text="All its rows are written; no row can be added."
            ),
        ),
        migrations.RunPython(reinstall_triggers, triggers_before),
    ]
