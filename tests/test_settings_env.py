"""Settings come from the environment; bad values fail loudly; production passes check --deploy."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from judging.env import database_config, env_bool, env_bytes, env_int, env_url

ROOT = Path(__file__).resolve().parents[1]

PRODUCTION_ENV = {
    "DJANGO_DEBUG": "0",
    "DJANGO_SECRET_KEY": "x" * 20 + "-production-like-secret-key-for-the-deploy-check-0123456789",
    "DJANGO_ALLOWED_HOSTS": "pooljudge.example.org",
    "DATABASE_URL": "postgres://pooljudge:secret@db:5432/pooljudge",
    "CELERY_BROKER_URL": "redis://redis:6379/0",
}


def _manage(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    base = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("DJANGO_", "DATABASE_URL", "CELERY_", "POOLJUDGE_"))
    }
    base["POOLJUDGE_VAR_DIR"] = str(ROOT / "var")
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_malformed_boolean_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DJANGO_DEBUG", "maybe")
    with pytest.raises(ImproperlyConfigured, match="DJANGO_DEBUG='maybe' is not a boolean"):
        env_bool("DJANGO_DEBUG", True)


def test_a_malformed_integer_and_size_fail_loudly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POOLJUDGE_MAX_PROBLEMS", "lots")
    with pytest.raises(ImproperlyConfigured, match="POOLJUDGE_MAX_PROBLEMS='lots' is not an"):
        env_int("POOLJUDGE_MAX_PROBLEMS", 100)
    monkeypatch.setenv("POOLJUDGE_MAX_UPLOAD_BYTES", "12 parsecs")
    with pytest.raises(ImproperlyConfigured, match="is not a size"):
        env_bytes("POOLJUDGE_MAX_UPLOAD_BYTES", 1)


def test_sizes_accept_units(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("X_SIZE", "200MB")
    assert env_bytes("X_SIZE", 1) == 200 * 1024**2
    monkeypatch.setenv("X_SIZE", "1g")
    assert env_bytes("X_SIZE", 1) == 1024**3


def test_a_site_address_is_checked_and_loses_its_trailing_slash(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("POOLJUDGE_SITE_URL", "https://judge.example.org/")
    assert env_url("POOLJUDGE_SITE_URL", "http://x") == "https://judge.example.org"
    monkeypatch.delenv("POOLJUDGE_SITE_URL")
    assert env_url("POOLJUDGE_SITE_URL", "http://127.0.0.1:8000") == "http://127.0.0.1:8000"
    for bad in ("judge.example.org", "ftp://judge.example.org", "https://x.org/?a=1"):
        monkeypatch.setenv("POOLJUDGE_SITE_URL", bad)
        with pytest.raises(ImproperlyConfigured, match=r"POOLJUDGE_SITE_URL=.* is not a site"):
            env_url("POOLJUDGE_SITE_URL", "http://x")


def test_database_urls_translate_to_django_settings(tmp_path: Path) -> None:
    pg = database_config("postgres://u:p%40ss@db.local:6543/pj?sslmode=require", base_dir=tmp_path)
    assert pg["ENGINE"] == "django.db.backends.postgresql"
    assert (pg["NAME"], pg["USER"], pg["PASSWORD"], pg["HOST"], pg["PORT"]) == (
        "pj",
        "u",
        "p@ss",
        "db.local",
        "6543",
    )
    assert pg["OPTIONS"] == {"sslmode": "require"}
    lite = database_config("sqlite:///var/x.sqlite3", base_dir=tmp_path)
    assert lite["NAME"] == str(tmp_path / "var" / "x.sqlite3")


def test_an_unsupported_database_scheme_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ImproperlyConfigured, match="unsupported scheme 'mysql'"):
        database_config("mysql://root@localhost/x", base_dir=tmp_path)


def test_production_without_a_secret_key_refuses_to_start() -> None:
    env = dict(PRODUCTION_ENV)
    env.pop("DJANGO_SECRET_KEY")
    result = _manage("check", env=env)
    assert result.returncode != 0
    assert "DJANGO_SECRET_KEY must be set when DJANGO_DEBUG is off" in result.stderr


def test_a_non_redis_broker_url_is_refused() -> None:
    result = _manage("check", env={**PRODUCTION_ENV, "CELERY_BROKER_URL": "amqp://guest@x//"})
    assert result.returncode != 0
    assert "expected a redis:// or rediss:// URL" in result.stderr


def test_production_like_settings_pass_the_deploy_check() -> None:
    result = _manage("check", "--deploy", "--fail-level", "WARNING", env=PRODUCTION_ENV)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout
