"""Stored qrels versions, their rows and the judgments they rest on, kept unchanged by the database.

The models PROTECT every foreign key that reaches them (deleting a topic, campaign or annotator
that has judgments or qrels rows is refused before anything is deleted); these triggers refuse
whatever gets past the ORM (a raw ``UPDATE``, a ``DELETE`` from a shell, a cascade):

- ``assessments_qrelsentry``: no ``UPDATE``, no ``DELETE``, and no ``INSERT`` into a sealed
  version. Rows are written once, with their version: ``qrels_store`` creates the version
  unsealed, writes its rows and seals it, in one transaction, so a stored version takes no row.
- ``assessments_qrelsversion``: no ``DELETE``; an ``UPDATE`` may change nothing of what the version
  says (campaign, number, source, kind, judges, hash, note, counts, creation time, the version
  a minor version extends, its minor number and purpose) and never unseals it. ``created_by``
  may still become NULL when that account is deleted.
- ``assessments_judgmentchange`` (the judgment history, the record a published version rests
  on): no ``DELETE``; an ``UPDATE`` may only unlink a deleted judgment (``judgment_id`` to NULL).
- ``assessments_judgment`` (current grades): topic, document, annotator and campaign never change;
  the grade changes only to the grade its latest history row records, and the row is deleted
  only after an undo was recorded (the latest history row has no new grade). So every change of
  a judgment is in the history first, and a published version can always be traced to the
  judgments it was made from.

Every refusal's message starts with ``immutable:``; PostgreSQL raises it as a
``restrict_violation`` and SQLite as a constraint error, which Django raises as
``IntegrityError`` (``is_immutability_error`` recognises it).

On SQLite the triggers call ``pooljudge_guarded()``, a function this module registers on every
Django connection. :func:`unguarded` switches it off for one block (emptying a test database:
SQLite's flush deletes row by row, where PostgreSQL's ``TRUNCATE`` fires no row trigger); a
connection without the function (the ``sqlite3`` shell) is refused every change of these tables.

The triggers are installed by migration ``assessments.0005`` (the seal's by ``0010``, which adds
the column; a minor version's columns by ``0012``; a history row's spans by ``0014``) and again
after every ``migrate`` (``post_migrate``, idempotent): on SQLite a later migration that
rebuilds one of these tables drops its triggers with the old table.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.db import DatabaseError
from django.db.backends.base.base import BaseDatabaseWrapper

PREFIX = "immutable:"

ENTRY = f"{PREFIX} the rows of a stored qrels version never change"
ENTRY_INSERT = f"{PREFIX} no row is added to a stored qrels version"
VERSION_DELETE = f"{PREFIX} a stored qrels version is never deleted"
VERSION_UPDATE = f"{PREFIX} a stored qrels version never changes"
HISTORY_DELETE = f"{PREFIX} the judgment history is never deleted"
HISTORY_UPDATE = f"{PREFIX} the judgment history never changes"
JUDGMENT_IDENTITY = f"{PREFIX} a judgment keeps its campaign, topic, document and annotator"
JUDGMENT_GRADE = f"{PREFIX} the grade of a judgment changes only with its history record"
JUDGMENT_DELETE = f"{PREFIX} a judgment is deleted only by a recorded undo of its annotator"

VERSION_COLUMNS = (
    "campaign_id",
    "number",
    "source",
    "kind",
    "judges",
    "content_hash",
    "note",
    "num_judgments",
    "num_relevant",
    "created_at",
    "extends_id",
    "minor",
    "purpose",
    "design",
)
# What the version guard covered before migration 0008 added kind and judges: migration 0005
# installs the triggers as they were then (a trigger naming a column not there yet breaks the
# table rebuilds of the migrations in between).
# What migrations 0008 and 0010 guarded, before 0012 added a minor version's columns.
VERSION_COLUMNS_BEFORE_0013 = tuple(c for c in VERSION_COLUMNS if c != "design")
VERSION_COLUMNS_BEFORE_0012 = tuple(
    c for c in VERSION_COLUMNS_BEFORE_0013 if c not in ("extends_id", "minor", "purpose")
)
VERSION_COLUMNS_BEFORE_0008 = tuple(
    c for c in VERSION_COLUMNS_BEFORE_0012 if c not in ("kind", "judges")
)
HISTORY_COLUMNS = (
    "topic_id",
    "kind",
    "docid",
    "annotator_id",
    "old_grade",
    "new_grade",
    "spans",
    "undoes_id",
    "changed_at",
)
HISTORY_COLUMNS_BEFORE_0016 = tuple(c for c in HISTORY_COLUMNS if c != "kind")
HISTORY_COLUMNS_BEFORE_0014 = tuple(c for c in HISTORY_COLUMNS_BEFORE_0016 if c != "spans")
JUDGMENT_IDENTITY_COLUMNS = ("campaign_id", "topic_id", "kind", "docid", "annotator_id")

# The latest history row of the judgment OLD (by id: ids grow with time); before 0016 an item
# had no kind.
_LATEST_BEFORE_0016 = (
    "SELECT {col} FROM assessments_judgmentchange h WHERE h.topic_id = OLD.topic_id "
    "AND h.docid = OLD.docid AND h.annotator_id = OLD.annotator_id ORDER BY h.id DESC LIMIT 1"
)
_LATEST = _LATEST_BEFORE_0016.replace(
    "AND h.docid = OLD.docid", "AND h.kind = OLD.kind AND h.docid = OLD.docid"
)

SQLITE_TRIGGERS = (
    "pj_qrelsentry_no_insert",
    "pj_qrelsentry_no_update",
    "pj_qrelsentry_no_delete",
    "pj_qrelsversion_no_delete",
    "pj_qrelsversion_no_update",
    "pj_judgmentchange_no_delete",
    "pj_judgmentchange_no_update",
    "pj_judgment_identity",
    "pj_judgment_grade",
    "pj_judgment_delete",
)
POSTGRESQL_TRIGGERS = (
    "pj_qrelsentry_no_insert",
    "pj_qrelsentry_no_update",
    "pj_qrelsentry_no_delete",
    "pj_qrelsversion_guard",
    "pj_judgmentchange_guard",
    "pj_judgment_guard",
)
POSTGRESQL_FUNCTIONS = (
    "pooljudge_refuse",
    "pooljudge_qrelsentry_insert_guard",
    "pooljudge_qrelsversion_guard",
    "pooljudge_judgmentchange_guard",
    "pooljudge_judgment_guard",
)
TABLES = {
    "pj_qrelsentry_no_insert": "assessments_qrelsentry",
    "pj_qrelsentry_no_update": "assessments_qrelsentry",
    "pj_qrelsentry_no_delete": "assessments_qrelsentry",
    "pj_qrelsversion_no_delete": "assessments_qrelsversion",
    "pj_qrelsversion_no_update": "assessments_qrelsversion",
    "pj_qrelsversion_guard": "assessments_qrelsversion",
    "pj_judgmentchange_no_delete": "assessments_judgmentchange",
    "pj_judgmentchange_no_update": "assessments_judgmentchange",
    "pj_judgmentchange_guard": "assessments_judgmentchange",
    "pj_judgment_identity": "assessments_judgment",
    "pj_judgment_grade": "assessments_judgment",
    "pj_judgment_delete": "assessments_judgment",
    "pj_judgment_guard": "assessments_judgment",
}


def _item(kinds: bool) -> tuple[str, tuple[str, ...]]:
    """The latest-history query and a judgment's identity columns, with the item's kind (from
    0016) or without."""
    if kinds:
        return _LATEST, JUDGMENT_IDENTITY_COLUMNS
    return _LATEST_BEFORE_0016, tuple(c for c in JUDGMENT_IDENTITY_COLUMNS if c != "kind")


def _changed(columns: tuple[str, ...], distinct: str) -> str:
    return " OR ".join(f"NEW.{c} {distinct} OLD.{c}" for c in columns)


def _sqlite(
    version_columns: tuple[str, ...] = VERSION_COLUMNS,
    sealing: bool = True,
    history_columns: tuple[str, ...] = HISTORY_COLUMNS,
    kinds: bool = True,
) -> list[str]:
    latest_row, identity = _item(kinds)

    def trigger(name: str, event: str, when: str, message: str) -> str:
        return (
            f"CREATE TRIGGER IF NOT EXISTS {name} BEFORE {event} ON {TABLES[name]} FOR EACH ROW "
            f"WHEN pooljudge_guarded() AND ({when}) BEGIN SELECT RAISE(ABORT, '{message}'); END"
        )

    latest_grade = latest_row.format(col="h.new_grade")
    unsealed = " OR (OLD.sealed AND NOT NEW.sealed)" if sealing else ""
    seal = [
        trigger(
            "pj_qrelsentry_no_insert",
            "INSERT",
            "(SELECT v.sealed FROM assessments_qrelsversion v WHERE v.id = NEW.version_id)",
            ENTRY_INSERT,
        )
    ]
    return [
        *(seal if sealing else []),
        trigger("pj_qrelsentry_no_update", "UPDATE", "1", ENTRY),
        trigger("pj_qrelsentry_no_delete", "DELETE", "1", ENTRY),
        trigger("pj_qrelsversion_no_delete", "DELETE", "1", VERSION_DELETE),
        trigger(
            "pj_qrelsversion_no_update",
            "UPDATE",
            _changed(version_columns, "IS NOT") + unsealed,
            VERSION_UPDATE,
        ),
        trigger("pj_judgmentchange_no_delete", "DELETE", "1", HISTORY_DELETE),
        trigger(
            "pj_judgmentchange_no_update",
            "UPDATE",
            f"{_changed(history_columns, 'IS NOT')} OR (NEW.judgment_id IS NOT NULL "
            "AND NEW.judgment_id IS NOT OLD.judgment_id)",
            HISTORY_UPDATE,
        ),
        trigger(
            "pj_judgment_identity",
            "UPDATE",
            _changed(identity, "IS NOT"),
            JUDGMENT_IDENTITY,
        ),
        trigger(
            "pj_judgment_grade",
            "UPDATE",
            f"NEW.grade IS NOT OLD.grade AND ({latest_grade}) IS NOT NEW.grade",
            JUDGMENT_GRADE,
        ),
        trigger(
            "pj_judgment_delete",
            "DELETE",
            f"NOT EXISTS (SELECT 1 FROM ({latest_row.format(col='h.new_grade AS g')}) "
            "WHERE g IS NULL)",
            JUDGMENT_DELETE,
        ),
    ]


def _postgresql(
    version_columns: tuple[str, ...] = VERSION_COLUMNS,
    sealing: bool = True,
    history_columns: tuple[str, ...] = HISTORY_COLUMNS,
    kinds: bool = True,
) -> list[str]:
    """Functions with the conditions in their bodies, not in the triggers' WHEN: PostgreSQL
    refuses to alter the type of a column a WHEN clause names, which would block later
    migrations of these tables. The seal is checked once per statement, on the rows it added
    (a transition table): a COPY of a million rows joins them to their versions once."""

    def trigger(name: str, event: str, function: str) -> str:
        return (
            f"DROP TRIGGER IF EXISTS {name} ON {TABLES[name]}; "
            f"CREATE TRIGGER {name} BEFORE {event} ON {TABLES[name]} FOR EACH ROW "
            f"EXECUTE FUNCTION {function}"
        )

    def refuse(message: str) -> str:
        return f"RAISE EXCEPTION USING ERRCODE = 'restrict_violation', MESSAGE = '{message}';"

    def function(name: str, body: str) -> str:
        return (
            f"CREATE OR REPLACE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $$\n"
            f"{body}\n$$"
        )

    latest_row, identity = _item(kinds)
    latest_grade = latest_row.format(col="h.new_grade")
    unsealed = "\n     OR (OLD.sealed AND NOT NEW.sealed)" if sealing else ""
    seal = [
        function(
            "pooljudge_qrelsentry_insert_guard",
            f"""BEGIN
  IF EXISTS (SELECT 1 FROM added a JOIN assessments_qrelsversion v ON v.id = a.version_id
             WHERE v.sealed) THEN
    {refuse(ENTRY_INSERT)}
  END IF;
  RETURN NULL;
END""",
        ),
        f"DROP TRIGGER IF EXISTS pj_qrelsentry_no_insert ON {TABLES['pj_qrelsentry_no_insert']}; "
        f"CREATE TRIGGER pj_qrelsentry_no_insert AFTER INSERT ON "
        f"{TABLES['pj_qrelsentry_no_insert']} REFERENCING NEW TABLE AS added FOR EACH STATEMENT "
        "EXECUTE FUNCTION pooljudge_qrelsentry_insert_guard()",
    ]
    return [
        *(seal if sealing else []),
        function(
            "pooljudge_refuse",
            "BEGIN\n  RAISE EXCEPTION USING ERRCODE = 'restrict_violation', "
            "MESSAGE = TG_ARGV[0];\nEND",
        ),
        function(
            "pooljudge_qrelsversion_guard",
            f"""BEGIN
  IF TG_OP = 'DELETE' THEN
    {refuse(VERSION_DELETE)}
  END IF;
  IF {_changed(version_columns, "IS DISTINCT FROM")}{unsealed} THEN
    {refuse(VERSION_UPDATE)}
  END IF;
  RETURN NEW;
END""",
        ),
        function(
            "pooljudge_judgmentchange_guard",
            f"""BEGIN
  IF TG_OP = 'DELETE' THEN
    {refuse(HISTORY_DELETE)}
  END IF;
  IF {_changed(history_columns, "IS DISTINCT FROM")}
     OR (NEW.judgment_id IS NOT NULL AND NEW.judgment_id IS DISTINCT FROM OLD.judgment_id) THEN
    {refuse(HISTORY_UPDATE)}
  END IF;
  RETURN NEW;
END""",
        ),
        function(
            "pooljudge_judgment_guard",
            f"""DECLARE
  found boolean;
  latest integer;
BEGIN
  IF TG_OP = 'UPDATE' THEN
    IF {_changed(identity, "IS DISTINCT FROM")} THEN
      {refuse(JUDGMENT_IDENTITY)}
    END IF;
    IF NEW.grade IS DISTINCT FROM OLD.grade THEN
      latest := ({latest_grade});
      IF latest IS DISTINCT FROM NEW.grade THEN
        {refuse(JUDGMENT_GRADE)}
      END IF;
    END IF;
    RETURN NEW;
  END IF;
  SELECT true, h.new_grade INTO found, latest FROM assessments_judgmentchange h
    WHERE h.topic_id = OLD.topic_id{" AND h.kind = OLD.kind" if kinds else ""}
      AND h.docid = OLD.docid AND h.annotator_id = OLD.annotator_id
    ORDER BY h.id DESC LIMIT 1;
  IF found IS NULL OR latest IS NOT NULL THEN
    {refuse(JUDGMENT_DELETE)}
  END IF;
  RETURN OLD;
END""",
        ),
        trigger("pj_qrelsentry_no_update", "UPDATE", f"pooljudge_refuse('{ENTRY}')"),
        trigger("pj_qrelsentry_no_delete", "DELETE", f"pooljudge_refuse('{ENTRY}')"),
        trigger("pj_qrelsversion_guard", "UPDATE OR DELETE", "pooljudge_qrelsversion_guard()"),
        trigger("pj_judgmentchange_guard", "UPDATE OR DELETE", "pooljudge_judgmentchange_guard()"),
        trigger("pj_judgment_guard", "UPDATE OR DELETE", "pooljudge_judgment_guard()"),
    ]


def install(
    connection: BaseDatabaseWrapper,
    version_columns: tuple[str, ...] = VERSION_COLUMNS,
    *,
    sealing: bool = True,
    history_columns: tuple[str, ...] = HISTORY_COLUMNS,
    kinds: bool = True,
) -> None:
    """Create the triggers (and PostgreSQL's functions) if missing; safe to run again.
    ``version_columns``: what the qrels version guard covers, ``sealing``: whether the seal
    is guarded, ``history_columns``: what the history guard covers (a migration passes what its
    time had: the column ``sealed`` came in 0010, a history row's ``spans`` in 0014, an item's
    ``kind``, which ``kinds`` adds to the judgment's identity and history, in 0016)."""
    statements = {"sqlite": _sqlite, "postgresql": _postgresql}.get(connection.vendor)
    if statements is None:
        return
    if connection.vendor == "sqlite":
        register_sqlite_function(connection)
    with connection.cursor() as cursor:
        for sql in statements(version_columns, sealing, history_columns, kinds):
            cursor.execute(sql)


def uninstall(connection: BaseDatabaseWrapper) -> None:
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            for name in SQLITE_TRIGGERS:
                cursor.execute(f"DROP TRIGGER IF EXISTS {name}")
        elif connection.vendor == "postgresql":
            for name in POSTGRESQL_TRIGGERS:
                cursor.execute(f"DROP TRIGGER IF EXISTS {name} ON {TABLES[name]}")
            for function in POSTGRESQL_FUNCTIONS:
                cursor.execute(f"DROP FUNCTION IF EXISTS {function}()")


def expected(vendor: str) -> set[str]:
    """The triggers :func:`install` creates on this database."""
    return set({"sqlite": SQLITE_TRIGGERS, "postgresql": POSTGRESQL_TRIGGERS}.get(vendor, ()))


def installed(connection: BaseDatabaseWrapper) -> set[str]:
    """The names of this module's triggers present in the database."""
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")
        elif connection.vendor == "postgresql":
            cursor.execute("SELECT tgname FROM pg_trigger WHERE NOT tgisinternal")
        else:
            return set()
        return {row[0] for row in cursor.fetchall()} & expected(connection.vendor)


_state = threading.local()


def _guarded() -> int:
    return 0 if getattr(_state, "off", False) else 1


def register_sqlite_function(connection: BaseDatabaseWrapper, **_: Any) -> None:
    """``connection_created`` receiver: give a SQLite connection ``pooljudge_guarded()``."""
    if connection.vendor == "sqlite" and connection.connection is not None:
        connection.connection.create_function("pooljudge_guarded", 0, _guarded)


@contextmanager
def unguarded() -> Iterator[None]:
    """Switch the SQLite triggers off in this thread for the block (emptying a test database);
    PostgreSQL's are not affected."""
    before = getattr(_state, "off", False)
    _state.off = True
    try:
        yield
    finally:
        _state.off = before


def is_immutability_error(exc: BaseException) -> bool:
    """Whether a database error is one of these triggers' refusals."""
    return isinstance(exc, DatabaseError) and PREFIX in str(exc)


def message_of(exc: BaseException) -> str:
    """The refusal's sentence, without the database's decoration."""
    text = str(exc)
    start = text.find(PREFIX)
    line = text[start:].splitlines()[0] if start >= 0 else text
    return line.strip()
