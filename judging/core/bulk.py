"""Fast inserts of many rows: ``COPY`` on PostgreSQL, ``executemany`` on SQLite.

Used for run entries and qrels entries, where ORM ``bulk_create`` would build a model object per
row. Callers must be inside a transaction; rows are tuples in ``columns`` order.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from django.db import connection, models

_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


def _copy_text(value: Any) -> str:
    """One value in PostgreSQL COPY text format."""
    if value is None:
        return "\\N"
    if isinstance(value, str):
        return value.translate(_ESCAPES)
    if isinstance(value, float):
        return repr(value)
    return str(value)


def insert_rows(
    model: type[models.Model], columns: Sequence[str], rows: Iterable[Sequence[Any]]
) -> None:
    table = connection.ops.quote_name(model._meta.db_table)
    cols = ", ".join(connection.ops.quote_name(c) for c in columns)
    # COPY goes through the driver's own cursor: wrapped, its errors are Django's (an
    # IntegrityError from a trigger, as from any other write)
    with connection.cursor() as cursor, connection.wrap_database_errors:
        if connection.vendor == "postgresql":
            raw = cursor.cursor  # the psycopg 3 cursor under Django's wrapper
            with raw.copy(f"COPY {table} ({cols}) FROM STDIN") as copy:
                # Format the COPY text ourselves in large blocks: write_row per row costs
                # several microseconds each, which dominates for million-row runs.
                block: list[str] = []
                for row in rows:
                    block.append("\t".join(map(_copy_text, row)))
                    if len(block) >= 100_000:
                        copy.write("\n".join(block) + "\n")
                        block.clear()
                if block:
                    copy.write("\n".join(block) + "\n")
        else:
            marks = ", ".join(["%s"] * len(columns))
            batch: list[Sequence[Any]] = []
            sql = f"INSERT INTO {table} ({cols}) VALUES ({marks})"
            for row in rows:
                batch.append(row)
                if len(batch) >= 50_000:
                    cursor.executemany(sql, batch)
                    batch.clear()
            if batch:
                cursor.executemany(sql, batch)


def statistics_refresh(*tables: type[models.Model]) -> None:
    """``ANALYZE`` the models' tables on PostgreSQL (nothing on SQLite), as PostgreSQL advises
    after a bulk load ("Populating a Database": the planner otherwise works from the statistics
    of the tables as they were before). Autovacuum analyses a table about a minute after a tenth
    of it changed; a loader that writes faster (the demo's simulated assessor, dozens of
    judgments a second) leaves the planner estimating one row where there are a thousand, and
    choosing nested loops that rescan a whole table per row. Allowed inside a transaction; a
    table the database user does not own is skipped with a warning, not an error."""
    if connection.vendor != "postgresql" or not tables:
        return
    names = ", ".join(connection.ops.quote_name(m._meta.db_table) for m in tables)
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {names}")
