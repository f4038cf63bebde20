"""A judgment keeps its text spans (the judged passage's offsets, the answer spans marked), and
its history rows too; the history guard covers the new column (judging/assessments/
immutability.py)."""

from typing import Any

from django.db import migrations, models


def no_triggers(apps: Any, schema_editor: Any) -> None:
    from judging.assessments import immutability

    immutability.uninstall(schema_editor.connection)


def triggers_before(apps: Any, schema_editor: Any) -> None:
    from judging.assessments import immutability

    immutability.uninstall(schema_editor.connection)
    immutability.install(
        schema_editor.connection,
        history_columns=immutability.HISTORY_COLUMNS_BEFORE_0014,
        kinds=False,
    )


def triggers_now(apps: Any, schema_editor: Any) -> None:
    from judging.assessments import immutability

    immutability.uninstall(schema_editor.connection)
    immutability.install(
        schema_editor.connection,
        history_columns=immutability.HISTORY_COLUMNS_BEFORE_0016,
        kinds=False,
    )


class Migration(migrations.Migration):
    dependencies = [
        ("assessments", "0013_sampled_pools"),
    ]

    operations = [
        migrations.RunPython(no_triggers, triggers_before),
        migrations.AddField(
            model_name="judgment",
            name="spans",
            field=models.JSONField(
                blank=True,
                help_text='Where in its document\'s text the judgment applies (assessments.spans): {"passage": [start, end]} for a passage, "answers": [[start, end], ...] for the spans the assessor marked as answering; None for a whole document with no span.',
                null=True,
            ),
        ),
        migrations.AddField(
            model_name="judgmentchange",
            name="spans",
            field=models.JSONField(
                blank=True, help_text="The judgment's spans after it.", null=True
            ),
        ),
        migrations.RunPython(triggers_now, no_triggers),
    ]
