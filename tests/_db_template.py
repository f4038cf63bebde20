"""The test databases on PostgreSQL as copies of one migrated template.

Migrating a database costs about 13 s of Django's migration state (more on a loaded machine), and
each test process (``pytest -n 2``: two) would migrate its own. Instead the first process to need
a database migrates a template, ``test_<NAME>_tpl_<digest>``, and every test database is created
from it (Django's ``TEST["TEMPLATE"]``: ``CREATE DATABASE ... TEMPLATE``, a fraction of a second);
Django's ``migrate`` then finds every migration applied and runs only the ``post_migrate``
handlers (content types, permissions, the immutability triggers), as on any database.

The digest is of Django's version and of the text of every migration file, so a template is
kept for later runs while the migrations are the same, and a changed or new migration makes a
new one (the older templates of the same name are dropped then). A template takes no connection
(``ALLOW_CONNECTIONS false``): nothing can change it, and copying it never waits for a session.
"""

from __future__ import annotations

import fcntl
import hashlib
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

__all__ = ["use_a_migrated_template"]


def use_a_migrated_template() -> None:
    """Point the default database's ``TEST["TEMPLATE"]`` at a migrated template, made if missing
    (PostgreSQL only; a template named in the settings is left as it is)."""
    from django.db import connection

    test = connection.settings_dict.setdefault("TEST", {})
    if connection.vendor != "postgresql" or test.get("TEMPLATE") or test.get("MIGRATE") is False:
        return
    prefix = f"test_{connection.settings_dict['NAME']}"[:40] + "_tpl_"
    name = prefix + _migrations_digest()
    with _locked(name):
        if not _exists(connection, name):
            _build(connection, name, prefix)
    test["TEMPLATE"] = name


def _migrations_digest() -> str:
    import django
    from django.db.migrations.loader import MigrationLoader

    digest = hashlib.sha256(django.get_version().encode())
    migrations = MigrationLoader(None, ignore_no_migrations=True).disk_migrations
    for key in sorted(migrations):
        module = sys.modules[type(migrations[key]).__module__]
        digest.update(repr(key).encode())
        digest.update(Path(str(module.__file__)).read_bytes())
    return digest.hexdigest()[:16]


@contextmanager
def _locked(name: str) -> Iterator[None]:
    """One process at a time checks for the template and makes it (the test processes of a run,
    and of concurrent runs on this machine)."""
    with (Path(tempfile.gettempdir()) / f"pooljudge-{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _exists(connection: Any, name: str) -> bool:
    with connection._nodb_cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name])
        return cursor.fetchone() is not None


def _build(connection: Any, name: str, prefix: str) -> None:
    """Migrate a new database as Django's test runner would, then make it the template (renamed
    only once complete: an interrupted build leaves no template behind)."""
    from django.core.management import call_command
    from django.db import DatabaseError

    quote = connection.ops.quote_name
    building = f"{name}_new"
    with connection._nodb_cursor() as cursor:
        cursor.execute(f"DROP DATABASE IF EXISTS {quote(building)}")
        cursor.execute(f"CREATE DATABASE {quote(building)}")
    original = connection.settings_dict["NAME"]
    connection.close()
    connection.settings_dict["NAME"] = building
    try:
        call_command(
            "migrate", verbosity=0, interactive=False, database=connection.alias, run_syncdb=True
        )
    finally:
        connection.close()
        connection.settings_dict["NAME"] = original
    with connection._nodb_cursor() as cursor:
        cursor.execute("SELECT datname FROM pg_database")
        older = [n for (n,) in cursor.fetchall() if n.startswith(prefix) and n != building]
        for old in older:
            # left when a concurrent run of other migrations is copying it
            with suppress(DatabaseError):
                cursor.execute(f"DROP DATABASE {quote(old)}")
        cursor.execute(f"ALTER DATABASE {quote(building)} RENAME TO {quote(name)}")
        cursor.execute(f"ALTER DATABASE {quote(name)} WITH ALLOW_CONNECTIONS false")
