"""docker-compose.yml and .env.example describe a working production deployment."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def test_compose_runs_postgres_redis_gunicorn_and_a_worker() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = compose["services"]
    assert {"db", "redis", "web", "worker", "migrate"} <= set(services)
    assert services["db"]["image"].startswith("postgres")
    assert services["redis"]["image"].startswith("redis")
    assert services["worker"]["command"][:3] == ["celery", "-A", "judging"]
    assert services["web"]["environment"]["DATABASE_URL"].startswith("postgres://")
    assert services["web"]["environment"]["CELERY_BROKER_URL"].startswith("redis://")
    assert 'CMD ["gunicorn", "judging.wsgi:application"' in (ROOT / "Dockerfile").read_text()


def _example_environment() -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("DJANGO_", "DATABASE_URL", "CELERY_", "POOLJUDGE_"))
    }
    for line in (ROOT / ".env.example").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            key, _, value = line.partition("=")
            env[key] = value
    env["DATABASE_URL"] = "postgres://pooljudge:x@db:5432/pooljudge"
    env["CELERY_BROKER_URL"] = "redis://redis:6379/0"
    env["POOLJUDGE_VAR_DIR"] = str(ROOT / "var")
    return env


def _deploy_check(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_example_environment_with_a_real_secret_passes_the_deploy_check() -> None:
    env = {**_example_environment(), "DJANGO_SECRET_KEY": secrets.token_urlsafe(64)}
    result = _deploy_check(env)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_example_environment_as_it_is_does_not_start() -> None:
    result = _deploy_check(_example_environment())  # its placeholder secret is refused
    assert result.returncode != 0
    assert "DJANGO_SECRET_KEY is unfit for production" in result.stderr
