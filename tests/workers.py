"""Start a real Celery worker process against the test database and the Redis broker."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

from django.conf import settings
from django.db import connection

from tests.conftest import need_service

ROOT = Path(__file__).resolve().parents[1]
TEST_QUEUE = f"pooljudge-test-{os.getpid()}-{uuid.uuid4().hex[:6]}"


def broker_available() -> tuple[bool, str]:
    url = settings.CELERY_BROKER_URL
    if not settings.CELERY_BROKER_CONFIGURED:
        return False, "CELERY_BROKER_URL is not set (no Redis broker for a real worker)"
    try:
        import redis

        redis.Redis.from_url(url, socket_connect_timeout=2).ping()
    except Exception as exc:  # any failure to reach the broker means: no broker here
        return False, f"the Redis broker at {url} does not answer: {exc}"
    return True, ""


def require_broker() -> None:
    ok, reason = broker_available()
    need_service(ok, reason)


def test_database_url() -> str:
    """A DATABASE_URL for the database the tests are using right now (the test database)."""
    s = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{Path(s['NAME']).resolve()}"
    auth = quote(s["USER"] or "")
    if s.get("PASSWORD"):
        auth += ":" + quote(s["PASSWORD"])
    host = s["HOST"] or "127.0.0.1"
    port = f":{s['PORT']}" if s.get("PORT") else ""
    return f"postgres://{auth}@{host}{port}/{s['NAME']}"


@contextmanager
def celery_worker(
    *, queue: str | None = None, concurrency: int = 1, env: dict[str, str] | None = None
) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """Run ``celery worker`` on its own queue; yields (process, queue). Stops it afterwards."""
    require_broker()
    # One queue per test process: Celery caches its router, so the route must not change.
    queue = queue or TEST_QUEUE
    child_env = {k: v for k, v in os.environ.items() if k != "CELERY_TASK_ALWAYS_EAGER"}
    child_env.update(
        DATABASE_URL=test_database_url(),
        CELERY_BROKER_URL=settings.CELERY_BROKER_URL,
        CELERY_TASK_DEFAULT_QUEUE=queue,
        DJANGO_SETTINGS_MODULE="judging.settings",
        **(env or {}),
    )
    log = open(ROOT / "var" / f"worker-{queue}.log", "wb")  # noqa: SIM115 (closed below)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "judging",
            "worker",
            "-Q",
            queue,
            "--pool",
            "prefork",
            "--concurrency",
            str(concurrency),
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
            "--loglevel",
            "INFO",
        ],
        cwd=ROOT,
        env=child_env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    previous_eager = settings.CELERY_TASK_ALWAYS_EAGER
    from judging.celery import app

    previous_routes = app.conf.task_routes
    app.conf.task_always_eager = False
    # Everything this test process sends goes to this worker's own queue.
    app.conf.task_routes = {"*": {"queue": queue}}
    try:
        yield proc, queue
    finally:
        app.conf.task_always_eager = previous_eager
        app.conf.task_routes = previous_routes
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        log.close()


def wait_for(predicate: object, *, timeout: float = 60.0, interval: float = 0.2) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return True
        time.sleep(interval)
    return False
