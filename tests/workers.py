"""Start a real Celery worker process against the test database and the Redis broker, and a
private ``redis-server`` that a test may stop and start (the shared one is never stopped)."""

from __future__ import annotations

import itertools
import os
import shutil
import socket
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
_STARTED = itertools.count(1)
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


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class PrivateRedis:
    """A ``redis-server`` of this test on a free port, with no persistence (like production's):
    ``stop()`` loses what it held, ``start()`` brings it back on the same port."""

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        import redis

        self.proc = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        client = redis.Redis.from_url(self.url, socket_connect_timeout=1)

        def answers() -> bool:
            try:
                return bool(client.ping())
            except redis.RedisError:
                return False

        if not wait_for(answers, timeout=10, interval=0.05):
            self.stop()
            raise RuntimeError(f"redis-server on port {self.port} did not start")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None


@contextmanager
def private_redis() -> Iterator[PrivateRedis]:
    """A private Redis, stopped at the end whatever happened."""
    need_service(shutil.which("redis-server") is not None, "redis-server is not installed")
    server = PrivateRedis()
    server.start()
    try:
        yield server
    finally:
        server.stop()


def _reset_broker_connections() -> None:
    from kombu import pools

    from judging.celery import app

    pools.reset()  # kombu keeps pools per connection: drop them, they point at the old URL
    app._pool = None  # type: ignore[attr-defined]
    app.amqp._producer_pool = None  # type: ignore[attr-defined]


def _flush_router() -> None:
    """Celery builds its router once, at the first send: make it read ``task_routes`` again (a
    test that sent earlier, e.g. to an unreachable broker, would route to the default queue)."""
    from judging.celery import app

    app.amqp.flush_routes()
    app.amqp.__dict__.pop("router", None)


@contextmanager
def sending_to(url: str) -> Iterator[None]:
    """This test process sends its tasks to the broker at ``url`` (not inline) while the block
    runs; a worker of ``celery_worker(broker_url=url)`` receives them."""
    from judging.celery import app

    previous = app.conf.broker_write_url, app.conf.task_always_eager
    _reset_broker_connections()
    # (broker_url cannot be changed once Django's setting is read; the write URL can)
    app.conf["broker_write_url"] = url
    app.conf.task_always_eager = False
    try:
        yield
    finally:
        _reset_broker_connections()
        app.conf["broker_write_url"], app.conf.task_always_eager = previous


@contextmanager
def celery_worker(
    *,
    queue: str | None = None,
    concurrency: int = 1,
    env: dict[str, str] | None = None,
    broker_url: str | None = None,
) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """Run ``celery worker`` on its own queue; yields (process, queue). Stops it afterwards.

    Without ``broker_url`` it uses the configured broker (the shared Redis, required)."""
    if broker_url is None:
        require_broker()
    # One queue per test process (the router is flushed when a worker starts and stops).
    queue = queue or TEST_QUEUE
    child_env = {k: v for k, v in os.environ.items() if k != "CELERY_TASK_ALWAYS_EAGER"}
    child_env.update(
        DATABASE_URL=test_database_url(),
        CELERY_BROKER_URL=broker_url or settings.CELERY_BROKER_URL,
        CELERY_TASK_DEFAULT_QUEUE=queue,
        DJANGO_SETTINGS_MODULE="judging.settings",
        **(env or {}),
    )
    name = f"worker-{queue}-{next(_STARTED)}.log"  # one log per worker started
    log = open(ROOT / "var" / name, "wb")  # noqa: SIM115 (closed below)
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
    _flush_router()
    try:
        yield proc, queue
    finally:
        app.conf.task_always_eager = previous_eager
        app.conf.task_routes = previous_routes
        _flush_router()
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
