"""The judging queue under load: annotators leasing and judging through gunicorn + PostgreSQL.

    python benchmarks/judging_load.py [--seconds 60] [--clients 32 64] [--think 0] [--db NAME]

For each ``--clients`` count, on a fresh database: creates (drops first) the database ``--db``
(default ``pooljudge_loadbench``), migrates it, sets up a campaign of 40 topics x 200 pooled
documents with text (overlap 0.1) and one annotator with an API token per client, starts
``gunicorn judging.wsgi:application`` on 127.0.0.1 (DEBUG off; by default as the Dockerfile runs
it: 4 sync workers; ``--worker-class gthread`` for 4 workers x 2 threads), then runs the
annotator clients: each keeps one HTTP/1.1 keep-alive connection and loops ``POST
/campaigns/{id}/leases/`` -> ``POST /leases/{id}/judgment/`` (with ``--think`` seconds between
the two) for ``--seconds``. Clients are threads spread over a few processes, so that the client
side's GIL does not inflate the latencies. Uses the project's ``.venv`` if there is one, else
the interpreter running the script.

Prints judgments per second, lease and judgment latency percentiles, status counts and errors,
then checks the database: one Judgment per accepted submit, no item judged twice by anybody;
last, one table row per client count (p50/p95 of lease and judgment, throughput, errors, check).
Exits 1 on any error or failed check.

With no think time the clients form a closed loop that saturates the two cores, so latency is
clients / throughput (Little's law); ``--think`` models annotators reading the document.
Loopback only; PostgreSQL at --pg (default postgres://postgres@127.0.0.1:5432).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# The project's .venv, else the interpreter running this script (a shared venv elsewhere).
_BIN = ROOT / ".venv" / "bin" if (ROOT / ".venv" / "bin" / "python").exists() else None
PYTHON = _BIN / "python" if _BIN else Path(sys.executable)
GUNICORN = (_BIN or Path(sys.executable).parent) / "gunicorn"


def server_env(pg: str, db: str) -> dict[str, str]:
    return {
        **os.environ,
        "DATABASE_URL": f"{pg}/{db}",
        "DJANGO_DEBUG": "0",
        "DJANGO_SECRET_KEY": "loadbench-only-" + "k" * 60,
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
        "DJANGO_SECURE_SSL_REDIRECT": "0",
        "DJANGO_SESSION_COOKIE_SECURE": "0",
        "DJANGO_CSRF_COOKIE_SECURE": "0",
        "DJANGO_SECURE_HSTS_SECONDS": "0",
        "CELERY_BROKER_URL": "",
        "CELERY_TASK_ALWAYS_EAGER": "1",
        "DJANGO_SETTINGS_MODULE": "judging.settings",
    }


def recreate_database(pg: str, db: str) -> None:
    import psycopg

    with psycopg.connect(f"{pg}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{db}"')


def set_up(topics: int, docs: int, clients: int, overlap: float) -> tuple[int, list[str]]:
    """The campaign (pool built) and the annotators' tokens, in this process's Django."""
    import django

    sys.path.insert(0, str(ROOT))
    django.setup()
    from django.contrib.auth import get_user_model
    from django.db import connection
    from rest_framework.authtoken.models import Token

    from judging.assessments.models import JudgingSlot
    from judging.campaigns.models import Document, Topic
    from judging.campaigns.services import campaign_create
    from judging.core.roles import grant
    from judging.workflows.pools import pool_requested
    from judging.workflows.runs import run_submitted

    admin = get_user_model().objects.create_user("bench-admin", is_staff=True)
    campaign = campaign_create(name="Load benchmark", created_by=admin)
    qids = [str(500 + n) for n in range(topics)]
    Topic.objects.bulk_create(
        Topic(campaign=campaign, qid=q, title=f"topic {q}", description=f"what {q} is about")
        for q in qids
    )
    ranked = {q: [f"{q}-doc{i:04d}" for i in range(docs)] for q in qids}
    for n in range(2):
        results = {
            q: {d: float(docs - i) for i, d in enumerate(ds if n == 0 else ds[::-1])}
            for q, ds in ranked.items()
        }
        run_submitted(campaign=campaign, owner=admin, tag=f"sys{n}", results=results, pooled=True)
    body = " ".join(["some words of a fairly ordinary news article"] * 40)
    Document.objects.bulk_create(
        (
            Document(campaign=campaign, docid=d, title=f"title {d}", text=f"{d}: {body}")
            for ds in ranked.values()
            for d in ds
        ),
        batch_size=2000,
    )
    campaign.pool_depth = docs
    campaign.overlap = overlap
    campaign.save()
    version, _ = pool_requested(campaign=campaign)  # built by the eager task after commit
    version.refresh_from_db()
    if version.num_documents != topics * docs:
        raise SystemExit(f"the pool build failed: {version.state} {version.error}")
    tokens = []
    for n in range(clients):
        user = get_user_model().objects.create_user(f"bench-annotator-{n:02d}")
        grant(user, "annotator")
        tokens.append(Token.objects.create(user=user).key)
    slots = JudgingSlot.objects.filter(campaign=campaign).count()
    print(f"campaign {campaign.pk}: {topics} topics x {docs} documents, {slots} slots to judge")
    with connection.cursor() as cur:
        cur.execute("ANALYZE")
    connection.close()
    return campaign.pk, tokens


def start_gunicorn(
    env: dict[str, str], port: int, workers: int, threads: int, worker_class: str
) -> Any:
    log = open(f"/tmp/judging_load_gunicorn_{port}.log", "w")  # noqa: SIM115 (lives with the server)
    extra = ["--threads", str(threads), "--keep-alive", "75"] if worker_class == "gthread" else []
    proc = subprocess.Popen(
        [
            str(GUNICORN),
            "judging.wsgi:application",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            str(workers),
            "-k",
            worker_class,
            *extra,
            "--access-logfile",
            "-" if os.environ.get("BENCH_ACCESS_LOG") else "/dev/null",
        ],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    return proc


def wait_ready(port: int, token: str, timeout: float = 120.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/api/v1/me/", headers={"Authorization": f"Token {token}"})
            if conn.getresponse().status == 200:
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise SystemExit(f"gunicorn did not come up; see /tmp/judging_load_gunicorn_{port}.log")


def warm_up(port: int, token: str, campaign: int, connections: int = 24) -> None:
    """Load every worker's URLconf, views and database connections before measuring (each
    gunicorn worker imports lazily on its first request)."""

    def hit() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        for _ in range(5):
            conn.request(
                "GET",
                f"/api/v1/campaigns/{campaign}/",
                headers={"Authorization": f"Token {token}", "Accept": "application/json"},
            )
            conn.getresponse().read()
        conn.close()

    threads = [threading.Thread(target=hit) for _ in range(connections)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def annotator(
    port: int, token: str, campaign: int, seconds: float, think: float, seed: int
) -> dict[str, Any]:
    """One annotator: lease, (think,) judge, until time is up or nothing is left."""
    import random

    rng = random.Random(seed)
    headers = {
        "Authorization": f"Token {token}",
        "Accept": "application/json",
        "Content-Type": "application/json",
    }
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    out: dict[str, Any] = {
        "first": [],
        "lease": [],
        "judge": [],
        "status": Counter(),
        "errors": [],
    }

    def call(method: str, path: str, body: bytes | None) -> tuple[int, bytes, float]:
        nonlocal conn
        t0 = time.perf_counter()
        try:
            conn.request(method, path, body=body, headers=headers)
            r = conn.getresponse()
            data = r.read()
        except (OSError, http.client.HTTPException) as exc:
            out["errors"].append(f"{method} {path}: {type(exc).__name__}: {exc}")
            conn.close()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            return 0, b"", time.perf_counter() - t0
        return r.status, data, time.perf_counter() - t0

    end = time.monotonic() + seconds
    time.sleep(rng.uniform(0, think))  # annotators do not all arrive in the same millisecond
    while time.monotonic() < end:
        status, data, took = call("POST", f"/api/v1/campaigns/{campaign}/leases/", b"")
        out["status"][f"lease {status}"] += 1
        if status == 204:
            break
        if status != 201:
            out["errors"].append(f"lease {status}: {data[:200]!r}")
            continue
        # the first lease also hands the annotator a topic
        out["first" if not out["first"] else "lease"].append(took)
        lease = json.loads(data)["id"]
        if think:
            time.sleep(think * rng.uniform(0.5, 1.5))
        body = json.dumps({"grade": rng.choice([0, 1, 2, 3]), "active_seconds": think}).encode()
        status, data, took = call("POST", f"/api/v1/leases/{lease}/judgment/", body)
        out["status"][f"judge {status}"] += 1
        if status != 201:
            out["errors"].append(f"judge {status}: {data[:200]!r}")
            continue
        out["judge"].append(took)
    conn.close()
    return out


def client_process(
    port: int, tokens: list[str], campaign: int, seconds: float, think: float, first: int
) -> dict[str, Any]:
    results: list[dict[str, Any]] = []
    lock = threading.Lock()

    def run(n: int, token: str) -> None:
        r = annotator(port, token, campaign, seconds, think, seed=first + n)
        with lock:
            results.append(r)

    threads = [threading.Thread(target=run, args=(n, t)) for n, t in enumerate(tokens)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    merged: dict[str, Any] = {
        "first": [],
        "lease": [],
        "judge": [],
        "status": Counter(),
        "errors": [],
    }
    for r in results:
        for key in ("first", "lease", "judge", "errors"):
            merged[key] += r[key]
        merged["status"] += r["status"]
    return merged


def quantile(values: list[float], q: int) -> float:
    """The q-th percentile in ms (0 without at least two values)."""
    if len(values) < 2:
        return 0.0
    return 1000 * statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def percentiles(values: list[float]) -> str:
    if len(values) < 2:
        return "n/a"
    return (
        f"p50 {quantile(values, 50):.1f} ms, p95 {quantile(values, 95):.1f} ms, "
        f"p99 {quantile(values, 99):.1f} ms, max {1000 * max(values):.1f} ms"
    )


def check_database(campaign: int, accepted: int) -> list[str]:
    from django.db import connection
    from django.db.models import Count

    from judging.assessments.models import JudgingSlot, Judgment, JudgmentChange

    problems = []
    judgments = Judgment.objects.filter(campaign_id=campaign).count()
    if judgments != accepted:
        problems.append(f"{judgments} Judgment rows for {accepted} accepted submits")
    judged_slots = JudgingSlot.objects.filter(campaign_id=campaign, judged_at__isnull=False)
    if judged_slots.count() != judgments:
        problems.append(f"{judged_slots.count()} judged slots for {judgments} judgments")
    changes = JudgmentChange.objects.filter(topic__campaign_id=campaign).count()
    if changes != judgments:
        problems.append(f"{changes} history rows for {judgments} judgments")
    doubled = (
        Judgment.objects.filter(campaign_id=campaign)
        .values("topic_id", "docid", "annotator_id")
        .annotate(n=Count("pk"))
        .filter(n__gt=1)
        .count()
    )
    if doubled:
        problems.append(f"{doubled} items judged twice by one annotator")
    connection.close()
    return problems


def server_pids(master: int, pg: str, db: str) -> list[int]:
    """The gunicorn workers and the PostgreSQL backends serving the benchmark's database."""
    import psycopg

    try:
        children = Path(f"/proc/{master}/task/{master}/children").read_text().split()
    except OSError:
        children = []
    with psycopg.connect(f"{pg}/postgres", autocommit=True) as conn:
        rows = conn.execute("SELECT pid FROM pg_stat_activity WHERE datname = %s", [db]).fetchall()
    return [int(c) for c in children] + [int(r[0]) for r in rows]


def cpu_seconds(pids: list[int]) -> dict[int, float]:
    """User + system CPU seconds of each process (those this machine can see in /proc)."""
    ticks = os.sysconf("SC_CLK_TCK")
    out = {}
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        out[pid] = (int(fields[11]) + int(fields[12])) / ticks
    return out


def run_once(args: argparse.Namespace, clients: int) -> dict[str, Any]:
    """One measurement on a fresh database: set up, serve, load, check. Returns the figures."""
    env = server_env(args.pg, args.db)
    recreate_database(args.pg, args.db)
    subprocess.run(
        [str(PYTHON), "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=env, check=True
    )
    os.environ.update(env)
    campaign, tokens = set_up(args.topics, args.docs, clients, args.overlap)

    server = start_gunicorn(env, args.port, args.workers, args.threads, args.worker_class)
    try:
        wait_ready(args.port, tokens[0])
        warm_up(args.port, tokens[0], campaign)
        threads = f" x {args.threads} threads" if args.worker_class == "gthread" else ""
        print(
            f"gunicorn: {args.workers} workers{threads} ({args.worker_class}); "
            f"{clients} clients in {args.client_processes} processes, "
            f"think {args.think} s, {args.seconds:.0f} s"
        )
        per = -(-clients // args.client_processes)
        groups = [tokens[i : i + per] for i in range(0, len(tokens), per)]
        cpu_before = cpu_seconds(server_pids(server.pid, args.pg, args.db))
        t0 = time.monotonic()
        with ProcessPoolExecutor(len(groups)) as pool:
            futures = [
                pool.submit(
                    client_process, args.port, g, campaign, args.seconds, args.think, i * per
                )
                for i, g in enumerate(groups)
            ]
            parts = [f.result() for f in futures]
        elapsed = time.monotonic() - t0
        cpu_after = cpu_seconds(server_pids(server.pid, args.pg, args.db))
    finally:
        server.terminate()
        server.wait(timeout=30)

    firsts = [x for p in parts for x in p["first"]]
    leases = [x for p in parts for x in p["lease"]]
    judges = [x for p in parts for x in p["judge"]]
    status: Counter[str] = sum((p["status"] for p in parts), Counter())
    errors = [e for p in parts for e in p["errors"]]
    print(f"elapsed {elapsed:.1f} s; judgments {len(judges)} ({len(judges) / elapsed:.1f}/s)")
    # CPU the server side spent (gunicorn workers + PostgreSQL backends): on a shared machine
    # this moves far less with the other jobs' load than latencies and throughput do.
    cpu = sum(t - cpu_before.get(pid, 0.0) for pid, t in cpu_after.items())
    cpu_per = 1000 * cpu / max(len(judges), 1)
    print(f"server CPU {cpu:.1f} s: {cpu_per:.1f} ms per lease + judgment")
    print(f"first lease (topic handed out): {percentiles(firsts)}")
    print(f"lease    latency: {percentiles(leases)}")
    print(f"judgment latency: {percentiles(judges)}")
    print(f"statuses: {dict(sorted(status.items()))}")
    print(f"errors: {len(errors)}")
    for e in errors[:10]:
        print(f"  {e}")
    problems = check_database(campaign, status["judge 201"])
    print("database check: " + ("ok" if not problems else "; ".join(problems)))
    return {
        "clients": clients,
        "rate": len(judges) / elapsed,
        "lease": (quantile(leases, 50), quantile(leases, 95)),
        "judge": (quantile(judges, 50), quantile(judges, 95)),
        "cpu": cpu_per,
        "errors": len(errors),
        "check": "ok" if not problems else "FAILED",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument(
        "--clients", type=int, nargs="+", default=[32, 64], help="one run per count"
    )
    parser.add_argument("--client-processes", type=int, default=8)
    parser.add_argument("--think", type=float, default=0.0, help="seconds reading each document")
    parser.add_argument("--topics", type=int, default=40)
    parser.add_argument("--docs", type=int, default=200)
    parser.add_argument("--overlap", type=float, default=0.1)
    parser.add_argument(
        "--worker-class",
        choices=["sync", "gthread"],
        default="sync",
        help="sync: as the Dockerfile runs gunicorn (production); gthread: keep-alive threads",
    )
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--threads", type=int, default=2, help="per worker, with gthread")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--pg", default="postgres://postgres@127.0.0.1:5432")
    parser.add_argument("--db", default="pooljudge_loadbench")
    args = parser.parse_args()

    results = [run_once(args, n) for n in args.clients]
    if len(results) > 1:
        print()
    print(
        "| clients | judgments/s | lease p50 / p95 ms | judgment p50 / p95 ms "
        "| server CPU ms per judgment | errors | check |"
    )
    print("|---:|---:|---:|---:|---:|---:|---|")
    for r in results:
        print(
            f"| {r['clients']} | {r['rate']:.1f} | {r['lease'][0]:.0f} / {r['lease'][1]:.0f} "
            f"| {r['judge'][0]:.0f} / {r['judge'][1]:.0f} | {r['cpu']:.1f} "
            f"| {r['errors']} | {r['check']} |"
        )
    if any(r["errors"] or r["check"] != "ok" for r in results):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
