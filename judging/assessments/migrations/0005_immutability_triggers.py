"""Database triggers that keep stored qrels versions, their rows and the judgment history
unchanged (SQLite and PostgreSQL; see judging/assessments/immutability.py)."""

from typing import Any

from django.db import migrations


def install(apps: Any, schema_editor: Any) -> None:
    from judging.assessments import immutability

    immutability.install(
        schema_editor.connection,
        version_columns=immutability.VERSION_COLUMNS_BEFORE_0008,
        sealing=False,  # the seal's column comes in 0010
        history_columns=immutability.HISTORY_COLUMNS_BEFORE_0014,
        kinds=False,
    )


def uninstall(apps: Any, schema_editor: Any) -> None:
    from judging.assessments import immutability

    immutability.uninstall(schema_editor.connection)


class Migration(migrations.Migration):
    dependencies = [("assessments", "0004_protect_qrels_and_judgments")]

    operations = [migrations.RunPython(install, uninstall)]
