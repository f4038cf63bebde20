"""Fast inserts of many rows: ``COPY`` on PostgreSQL, ``executemany`` on SQLite.

Used for run entries and qrels entries, where ORM ``bulk_create`` would build a model object per
row. Callers must be inside a transaction; rows are tuples in ``columns`` order.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from django.db import connection, models


def insert_rows(
    model: type[models.Model], columns: Sequence[str], rows: Iterable[Sequence[Any]]
) -> None:
    table = connection.ops.quote_name(model._meta.db_table)
    cols = ", ".join(connection.ops.quote_name(c) for c in columns)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            raw = cursor.cursor  # the psycopg 3 cursor under Django's wrapper
            with raw.copy(f"COPY {table} ({cols}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
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
