"""A qrels version may be sampled (issue 32, point 3): its design, and each row's stratum, with
grade -1 for a pooled document not sampled. The version guard covers ``design`` too (see
judging/assessments/immutability.py)."""

from typing import Any

from django.db import migrations, models


def no_triggers(apps: Any, schema_editor: Any) -> None:
    """Off while the tables change (SQLite may rebuild them; a trigger naming a table breaks
    the rebuild)."""
    from judging.assessments import immutability

    immutability.uninstall(schema_editor.connection)


def triggers_now(apps: Any, schema_editor: Any) -> None:
    from judging.assessments import immutability

    immutability.uninstall(schema_editor.connection)
    immutability.install(
        schema_editor.connection,
        history_columns=immutability.HISTORY_COLUMNS_BEFORE_0014,
        kinds=False,
    )


def triggers_before(apps: Any, schema_editor: Any) -> None:
    from judging.assessments import immutability

    immutability.uninstall(schema_editor.connection)
    immutability.install(
        schema_editor.connection,
        version_columns=immutability.VERSION_COLUMNS_BEFORE_0013,
        history_columns=immutability.HISTORY_COLUMNS_BEFORE_0014,
        kinds=False,
    )


class Migration(migrations.Migration):
    dependencies = [("assessments", "0012_qrels_minor_versions")]

    operations = [
        migrations.RunPython(no_triggers, triggers_before),
        migrations.AddField(
            model_name="qrelsentry",
            name="stratum",
            field=models.CharField(
                blank=True,
                default="",
                db_default="",
                help_text="A sampled version's stratum.",
                max_length=8,
            ),
        ),
        migrations.AddField(
            model_name="qrelsversion",
            name="design",
            field=models.JSONField(
                blank=True,
                default=dict,
                help_text="A sampled version's design: {'pool': id, 'strategy', 'params', "
                "'strata': {stratum: {'pooled', 'sampled', 'rate'}}} (empty: complete "
                "judgments).",
            ),
        ),
        migrations.AlterField(
            model_name="qrelsentry",
            name="grade",
            field=models.IntegerField(help_text="-1 in a sampled version: pooled, not sampled."),
        ),
        migrations.RunPython(triggers_now, no_triggers),
    ]
