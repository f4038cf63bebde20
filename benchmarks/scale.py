"""The service at TREC scale (issue 14, point 5): a synthetic campaign shaped like TREC RAG 2024
(80 runs x 300 topics x depth 100 = 2.4 M lines, 20 groups) and one like TREC Deep Learning
(30 runs x 200 topics x depth 1,000 = 6 M lines, 10 groups), on PostgreSQL with Celery workers
on Redis, gunicorn serving HTTP.

    CELERY_BROKER_URL=redis://127.0.0.1:6379/14 .venv/bin/python benchmarks/scale.py \
        [--shape rag dl] [--size 0.5 1 2] [--workers 1 2] [--repeat 3] \
        [--results var/scale.json] [--fresh]

Per shape and size (``--size`` scales the number of topics, and the judgments with them: the
lines grow in proportion, every ranking keeps its depth), in a database of its own
(``pooljudge_scale_<shape>_<size>``), each step timed from the driver and its peak memory read
from the processes that did the work (``VmHWM`` of the gunicorn workers or the Celery worker
processes, restarted before each step so the peak is the step's):

- **ingest**: every run POSTed as a gzip file to ``/api/v1/campaigns/{id}/runs/`` on gunicorn
  (2 sync workers), one after another (10 % of the runs not pooled, as an admin submits them);
- **pool@10**, **pool@20**: ``pool_requested`` -> the build task on one worker -> built;
- **qrels+follow-ups**: a qrels version of 20,000 judgments (x size) drawn from the depth-20
  pool, imported, until every task it causes is done (evaluations, default bias report,
  reusability) on one worker;
- **evaluate** (per ``--workers`` count): the version's evaluations deleted and
  an ``evaluations`` job recorded again, until every run's evaluation is stored (the
  median of ``--repeat``);
- **bias** (per ``--workers`` count): the default bias report (leave-one-run-out, depth 20,
  the campaign's headline measure) deleted and asked for again, until it is stored (the
  median of ``--repeat``);
- **reads**: the leaderboard, a run's and the bias page and their API (``p95`` of 60 warm
  requests each, after 10 unmeasured: the server's two workers each warm up, and a p95 of
  fewer requests is their slowest one).

Every figure is written to ``--results`` (JSON) as soon as it is measured; running the script
again skips what is there (and the ingest when its database holds every run), so a full-size
run can be resumed per shape; ``--fresh`` forgets them. It ends with a markdown table: seconds
(peak MB) per step and size, and each step's growth exponent (log time ratio / log lines ratio
between consecutive sizes: 1 is linear).
"""

from __future__ import annotations

import argparse
import gzip
import http.client
import io
import itertools
import json
import math
import os
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
_BIN = ROOT / ".venv" / "bin" if (ROOT / ".venv" / "bin" / "python").exists() else None
PYTHON = _BIN / "python" if _BIN else Path(sys.executable)
GUNICORN = (_BIN or Path(sys.executable).parent) / "gunicorn"
PG = os.environ.get("SCALE_PG", "postgres://postgres@127.0.0.1:5432")
PORT = int(os.environ.get("SCALE_PORT", "8731"))

SHAPES: dict[str, dict[str, int]] = {
    "rag": {"runs": 80, "topics": 300, "depth": 100, "groups": 20, "judgments": 20_000},
    "dl": {"runs": 30, "topics": 200, "depth": 1000, "groups": 10, "judgments": 20_000},
}
TARGETS = {"pool@20": 60.0, "evaluate": 60.0, "bias": 60.0}  # seconds at full RAG size
READ_TARGET_MS = 300.0
WARM_REQUESTS = 10  # unmeasured, per path: both gunicorn workers load their caches
MEASURED_REQUESTS = 60
MEMORY_TARGET_MB = 2048.0
READS = ("leaderboard page", "run page", "bias page", "leaderboard API", "run API", "bias API")


# --- the synthetic collection -----------------------------------------------------------------


class Collection:
    """Runs and qrels drawn from a seeded model: per topic a universe of 3 x depth documents
    with a quality each; a run ranks them by quality plus its own noise (so pools overlap as
    real ones do) and keeps the top ``depth``."""

    def __init__(self, shape: str, size: float) -> None:
        spec = SHAPES[shape]
        self.shape = shape
        self.runs = spec["runs"]
        self.topics = max(2, round(spec["topics"] * size))
        self.depth = spec["depth"]
        self.groups = spec["groups"]
        self.judgments = max(self.topics, round(spec["judgments"] * size))
        self.universe = 3 * self.depth
        rng = np.random.default_rng(14)
        self.quality = rng.normal(size=(self.topics, self.universe))
        self.noise = [1.0 + 2.0 * (r % 7) / 6 for r in range(self.runs)]  # better and worse runs

    @property
    def lines(self) -> int:
        return self.runs * self.topics * self.depth

    def tag(self, r: int) -> str:
        return f"{self.shape}-run{r:03d}"

    def group(self, r: int) -> str:
        return f"team{r % self.groups:02d}"

    def pooled(self, r: int) -> bool:
        return r % 10 != 9  # one run in ten arrives after the pool: not pooled

    def qid(self, t: int) -> str:
        return str(1001 + t)

    def ranking(self, r: int, t: int) -> tuple[np.ndarray, np.ndarray]:
        """Document indices of run ``r`` on topic ``t``, best first, and their scores."""
        rng = np.random.default_rng((r + 1) * 1_000_003 + t)
        scores = self.quality[t] + rng.normal(scale=self.noise[r], size=self.universe)
        top = np.argpartition(-scores, self.depth - 1)[: self.depth]
        top = top[np.argsort(-scores[top], kind="stable")]
        return top, scores[top]

    def docid(self, t: int, d: int) -> str:
        return f"D{self.qid(t)}-{d:05d}"

    def run_file(self, r: int) -> bytes:
        out = io.StringIO()
        tag = self.tag(r)
        for t in range(self.topics):
            docs, scores = self.ranking(r, t)
            q = self.qid(t)
            out.writelines(
                f"{q} Q0 D{q}-{d:05d} {k} {s:.5f} {tag}\n"
                for k, (d, s) in enumerate(zip(docs.tolist(), scores.tolist(), strict=True), 1)
            )
        return gzip.compress(out.getvalue().encode(), compresslevel=1)

    def qrels(self) -> bytes:
        """``judgments`` judgments spread over the topics, from the depth-20 pool of the pooled
        runs (best quality first), the best third of each topic's judged documents relevant."""
        per_topic = math.ceil(self.judgments / self.topics)
        lines = []
        left = self.judgments
        for t in range(self.topics):
            pool: set[int] = set()
            for r in range(self.runs):
                if self.pooled(r):
                    pool.update(self.ranking(r, t)[0][:20].tolist())
            chosen = sorted(pool, key=lambda d: -self.quality[t, d])[: min(per_topic, left)]
            left -= len(chosen)
            for i, d in enumerate(chosen):
                grade = 2 if i < len(chosen) // 9 else 1 if i < len(chosen) // 3 else 0
                lines.append(f"{self.qid(t)} 0 {self.docid(t, d)} {grade}\n")
        return "".join(lines).encode()


# --- processes and their memory -------------------------------------------------------------


def descendants(pid: int) -> list[int]:
    out = [pid]
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return out
    for c in children:
        out += descendants(int(c))
    return out


def peak_mb(pids: list[int]) -> float:
    """The largest peak resident memory (VmHWM) among ``pids``, in MB."""
    best = 0.0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    best = max(best, int(line.split()[1]) / 1024)
        except OSError:
            continue
    return best


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class Workers:
    """``n`` Celery worker processes (concurrency 1 each, as one per machine would be)."""

    def __init__(self, env: dict[str, str], n: int, tag: str) -> None:
        self.procs = []
        name = tag.replace("/", "-")
        for i in range(n):
            log = open(ROOT / "var" / f"scale-worker-{name}-{i}.log", "wb")  # noqa: SIM115
            self.procs.append(
                subprocess.Popen(
                    [
                        str(PYTHON),
                        "-m",
                        "celery",
                        "-A",
                        "judging",
                        "worker",
                        "-n",
                        f"scale{i}-{uuid.uuid4().hex[:6]}@%h",
                        "-Q",
                        env["CELERY_TASK_DEFAULT_QUEUE"],
                        "--concurrency",
                        "1",
                        "--without-gossip",
                        "--without-mingle",
                        "--loglevel",
                        "INFO",
                    ],
                    cwd=ROOT,
                    env=env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                )
            )
        self.logs = [ROOT / "var" / f"scale-worker-{name}-{i}.log" for i in range(n)]
        wait(lambda: all(" ready." in p.read_text(errors="replace") for p in self.logs), "workers")
        time.sleep(1)  # connected and forked before the clock starts

    def peak(self) -> float:
        return peak_mb([p for proc in self.procs for p in descendants(proc.pid)])

    def stop(self) -> None:
        for proc in self.procs:
            stop(proc)


def server_env(db: str, queue: str) -> dict[str, str]:
    return {
        **os.environ,
        "DATABASE_URL": f"{PG}/{db}",
        "CELERY_BROKER_URL": os.environ["CELERY_BROKER_URL"],
        "CELERY_TASK_ALWAYS_EAGER": "0",
        "CELERY_TASK_DEFAULT_QUEUE": queue,
        "DJANGO_DEBUG": "0",
        "DJANGO_SECRET_KEY": "scalebench-only-" + "k" * 60,
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
        "DJANGO_SECURE_SSL_REDIRECT": "0",
        "DJANGO_SESSION_COOKIE_SECURE": "0",
        "DJANGO_CSRF_COOKIE_SECURE": "0",
        "DJANGO_SECURE_HSTS_SECONDS": "0",
        "DJANGO_SETTINGS_MODULE": "judging.settings",
        "POOLJUDGE_SWEEP_SECONDS": "30",
    }


def start_gunicorn(env: dict[str, str]) -> subprocess.Popen[bytes]:
    log = open(ROOT / "var" / "scale-gunicorn.log", "ab")  # noqa: SIM115
    proc = subprocess.Popen(
        [
            str(GUNICORN),
            "judging.wsgi:application",
            "--bind",
            f"127.0.0.1:{PORT}",
            "--workers",
            "2",
            "--timeout",
            "600",
            "--access-logfile",
            "/dev/null",
        ],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", PORT, timeout=5)
            conn.request("GET", "/")
            conn.getresponse().read()
            return proc
        except OSError:
            time.sleep(0.3)
    stop(proc)
    raise SystemExit("gunicorn did not come up; see var/scale-gunicorn.log")


def multipart(fields: dict[str, str], name: str, filename: str, data: bytes) -> tuple[bytes, str]:
    boundary = uuid.uuid4().hex
    parts = [
        f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'.encode()
        for k, v in fields.items()
    ]
    parts.append(
        f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; filename="{filename}"'
        "\r\nContent-Type: application/gzip\r\n\r\n".encode()
        + data
        + b"\r\n"
    )
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


# --- the steps (in the child process of one shape and size) ---------------------------------


class Results:
    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self) -> dict[str, Any]:
        return json.loads(self.path.read_text()) if self.path.exists() else {}

    def get(self, key: str) -> Any:
        return self.load().get(key)

    def put(self, key: str, value: dict[str, Any]) -> None:
        data = self.load()
        data[key] = value
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(json.dumps(data, indent=1, sort_keys=True))
        shown = ", ".join(
            f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in value.items()
        )
        print(f"  {key}: {shown}", flush=True)


def wait(predicate: Any, what: str, timeout: float = 7200) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        time.sleep(0.1)


def outbox_idle() -> bool:
    from judging.core.models import OutboxTask

    return not OutboxTask.objects.filter(done_at__isnull=True).exists()


def child(shape: str, size: float, workers: list[int], results: Results, repeat: int = 1) -> None:
    col = Collection(shape, size)
    db = f"pooljudge_scale_{shape}_{str(size).replace('.', '_')}"
    queue = f"pooljudge-scale-{os.getpid()}"
    env = server_env(db, queue)
    prefix = f"{shape}/{size}"
    os.environ.update(env)  # the same settings (and secret key: sessions) as the servers
    import psycopg

    fresh = results.get(f"{prefix}/ingest") is None
    with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname=%s", (db,)).fetchone()
        if fresh or not exists:
            conn.execute(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{db}"')
            fresh = True
    subprocess.run(
        [str(PYTHON), "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=env, check=True
    )
    subprocess.run(  # gunicorn serves them with DEBUG off, as in production
        [str(PYTHON), "manage.py", "collectstatic", "--noinput", "-v", "0"],
        cwd=ROOT,
        env=env,
        check=True,
    )
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.db import transaction
    from rest_framework.authtoken.models import Token

    from judging.campaigns.models import Campaign, Topic, UnknownTopicPolicy
    from judging.campaigns.services import campaign_create
    from judging.core.models import JobState
    from judging.evaluation.bias import bias_report_request
    from judging.evaluation.models import BiasReport, Evaluation
    from judging.evaluation.services import evaluations_after_qrels
    from judging.pools.models import PoolVersion
    from judging.workflows.pools import pool_requested
    from judging.workflows.qrels import qrels_imported

    print(
        f"{prefix}: {col.runs} runs x {col.topics} topics x depth {col.depth} = {col.lines:,} "
        f"lines, {col.judgments:,} judgments ({db})",
        flush=True,
    )
    admin, _ = get_user_model().objects.get_or_create(username="scale-admin", is_staff=True)
    token, _ = Token.objects.get_or_create(user=admin)
    campaign = Campaign.objects.filter(name="scale").first()
    if campaign is None:
        campaign = campaign_create(
            name="scale", unknown_topic_policy=UnknownTopicPolicy.REJECT, pool_depth=20
        )
        Topic.objects.bulk_create(
            Topic(campaign=campaign, qid=col.qid(t), title=f"topic {col.qid(t)}")
            for t in range(col.topics)
        )
    headers = {"Authorization": f"Token {token.key}"}

    # ingest through gunicorn
    if fresh or campaign.runs.count() < col.runs:
        server = start_gunicorn(env)
        try:
            have = set(campaign.runs.values_list("tag", flat=True))
            start = time.perf_counter()
            for r in range(col.runs):
                if col.tag(r) in have:
                    continue
                body, ctype = multipart(
                    {"group": col.group(r), "pooled": "true" if col.pooled(r) else "false"},
                    "file",
                    f"{col.tag(r)}.gz",
                    col.run_file(r),
                )
                post = http.client.HTTPConnection("127.0.0.1", PORT, timeout=600)
                post.request(
                    "POST",
                    f"/api/v1/campaigns/{campaign.pk}/runs/",
                    body=body,
                    headers={**headers, "Content-Type": ctype},
                )
                answer = post.getresponse()
                text = answer.read()
                if answer.status != 201:
                    raise SystemExit(f"run {r}: {answer.status} {text[:500]!r}")
            seconds = time.perf_counter() - start
            memory = peak_mb(descendants(server.pid))
        finally:
            stop(server)
        results.put(
            f"{prefix}/ingest",
            {"s": seconds, "mb": memory, "lines": col.lines, "note": "incl. generating the files"},
        )

    def on_workers(n: int, key: str, start_work: Any, done: Any, times: int = 1) -> None:
        """Time ``start_work`` until ``done`` on ``n`` fresh workers (the median of ``times``)."""
        if results.get(f"{prefix}/{key}") is not None:
            return
        pool = Workers(env, n, f"{shape}-{key}")
        try:
            took = []
            for _ in range(times):
                start = time.perf_counter()
                start_work()
                wait(done, key)
                took.append(time.perf_counter() - start)
            memory = pool.peak()
        finally:
            pool.stop()
        figure: dict[str, Any] = {"s": statistics.median(took), "mb": memory, "lines": col.lines}
        if times > 1:
            figure["all"] = ", ".join(f"{t:.2f}" for t in took)
        results.put(f"{prefix}/{key}", figure)

    for depth in (10, 20):
        holder: dict[str, Any] = {}

        def request_pool(depth: int = depth, holder: dict[str, Any] = holder) -> None:
            holder["v"], _ = pool_requested(campaign=campaign, strategy="depth", depth=depth)

        def built(holder: dict[str, Any] = holder) -> bool:
            v = PoolVersion.objects.get(pk=holder["v"].pk)
            if v.state == "failed":
                raise SystemExit(f"pool build failed: {v.error}")
            return v.state == "built"

        on_workers(1, f"pool@{depth}", request_pool, built)

    qrels = campaign.qrels_versions.order_by("-number").first()
    if qrels is None or results.get(f"{prefix}/qrels+follow-ups") is None:
        data = col.qrels()

        def import_qrels() -> None:
            qrels_imported(campaign=campaign, data=data)

        on_workers(1, "qrels+follow-ups", import_qrels, outbox_idle)
        qrels = campaign.qrels_versions.order_by("-number").first()
    assert qrels is not None
    nruns = campaign.runs.count()
    from judging.evaluation.bias import headline_measure

    measure = headline_measure(campaign)
    report_key = {
        "campaign": campaign,
        "qrels": qrels,
        "depth": 20,
        "kind": "loo_run",
        "measure": measure,
        "topics": "",
    }
    for n in workers:

        def evaluate_again() -> None:
            Evaluation.objects.filter(qrels=qrels).delete()
            with transaction.atomic():
                evaluations_after_qrels(qrels)

        def evaluated() -> bool:
            done = Evaluation.objects.filter(qrels=qrels, job__state=JobState.DONE).count()
            failed = Evaluation.objects.filter(qrels=qrels, job__state=JobState.FAILED).first()
            if failed is not None:
                raise SystemExit(f"an evaluation failed: {failed.error}")
            return done == nruns

        on_workers(n, f"evaluate/{n}w", evaluate_again, evaluated, repeat)

        def bias_again() -> None:
            BiasReport.objects.filter(**report_key).delete()
            with transaction.atomic():
                bias_report_request(campaign=campaign, qrels=qrels, depth=20, measure=measure)

        def reported() -> bool:
            report = BiasReport.objects.filter(**report_key).first()
            if report is not None and report.state == JobState.FAILED:
                raise SystemExit(f"the bias report failed: {report.error}")
            return report is not None and report.state == JobState.DONE

        on_workers(n, f"bias/{n}w", bias_again, reported, repeat)
    wait(outbox_idle, "the outbox to be idle", timeout=600)

    if results.get(f"{prefix}/reads") is None:
        from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
        from django.contrib.sessions.backends.db import SessionStore

        def signed_in() -> str:
            """A session of the admin, as the login form would make it: its cookie value."""
            admin.refresh_from_db()
            session = SessionStore()
            session[SESSION_KEY] = str(admin.pk)
            session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
            session[HASH_SESSION_KEY] = admin.get_session_auth_hash()
            session.create()
            return str(session.session_key)

        cookie = signed_in()
        run = campaign.runs.order_by("tag").first()
        assert run is not None
        paths = {
            "leaderboard page": f"/campaigns/{campaign.pk}/leaderboard/",
            "run page": f"/runs/{run.pk}/",
            "bias page": f"/campaigns/{campaign.pk}/bias/",
            "leaderboard API": f"/api/v1/campaigns/{campaign.pk}/leaderboard/",
            "run API": f"/api/v1/runs/{run.pk}/evaluations/",
            "bias API": f"/api/v1/campaigns/{campaign.pk}/bias/",
        }
        server = start_gunicorn(env)
        measured: dict[str, Any] = {}
        try:
            for name, path in paths.items():
                page = "API" not in name
                h = {"Cookie": f"sessionid={cookie}"} if page else headers
                client = http.client.HTTPConnection("127.0.0.1", PORT, timeout=600)
                times = []
                for i in range(WARM_REQUESTS + MEASURED_REQUESTS):
                    t0 = time.perf_counter()
                    client.request("GET", path, headers=h)
                    answer = client.getresponse()
                    body = answer.read()
                    if answer.status == 302 and page and i == 0:  # once: signed in again
                        print(
                            f"  {name}: redirected to {answer.getheader('Location')}; new session"
                        )
                        cookie = signed_in()
                        h = {"Cookie": f"sessionid={cookie}"}
                        continue
                    if answer.status != 200:
                        where = answer.getheader("Location", "")
                        raise SystemExit(f"{name} {path}: {answer.status} {where} {body[:300]!r}")
                    if i >= WARM_REQUESTS:
                        times.append((time.perf_counter() - t0) * 1000)
                    if answer.getheader("Connection", "").lower() == "close":
                        client = http.client.HTTPConnection("127.0.0.1", PORT, timeout=600)
                measured[name] = statistics.quantiles(times, n=20)[18]  # p95
            measured["mb"] = peak_mb(descendants(server.pid))
        finally:
            stop(server)
        results.put(f"{prefix}/reads", {**measured, "lines": col.lines})


# --- the table --------------------------------------------------------------------------------


def growth(a: dict[str, Any] | None, b: dict[str, Any] | None, field: str = "s") -> str:
    if not a or not b or a["lines"] == b["lines"] or a[field] <= 0 or b[field] <= 0:
        return ""
    return f"{math.log(b[field] / a[field]) / math.log(b['lines'] / a['lines']):.2f}"


def table(data: dict[str, Any], shapes: list[str], sizes: list[float], workers: list[int]) -> str:
    steps = ["ingest", "pool@10", "pool@20", "qrels+follow-ups"]
    steps += [f"evaluate/{n}w" for n in workers] + [f"bias/{n}w" for n in workers]
    out = []
    for shape in shapes:
        spec = SHAPES[shape]
        head = [f"size {s:g} ({Collection(shape, s).lines / 1e6:.2f} M lines)" for s in sizes]
        grow = [f"exp {a:g}->{b:g}" for a, b in itertools.pairwise(sizes)]
        out.append(
            f"\n**{shape}** ({spec['runs']} runs x {spec['topics']} topics x depth "
            f"{spec['depth']} at size 1; seconds (peak MB of the processes doing it))\n"
        )
        out.append("| step | " + " | ".join(head + grow) + " |")
        out.append("|---" * (1 + len(head) + len(grow)) + "|")
        for step in steps:
            cells = []
            got = [data.get(f"{shape}/{s}/{step}") for s in sizes]
            for g in got:
                cells.append(f"{g['s']:.2f} s ({g['mb']:.0f} MB)" if g else "-")
            cells += [growth(a, b) for a, b in itertools.pairwise(got)]
            out.append(f"| {step} | " + " | ".join(cells) + " |")
        for name in READS:
            got = [data.get(f"{shape}/{s}/reads") for s in sizes]
            cells = [f"{g[name]:.0f} ms" if g else "-" for g in got]
            cells += [growth(a, b, name) for a, b in itertools.pairwise(got)]
            out.append(f"| {name} p95 | " + " | ".join(cells) + " |")
        got = [data.get(f"{shape}/{s}/reads") for s in sizes]
        out.append(
            "| server peak (reads) | "
            + " | ".join(f"{g['mb']:.0f} MB" if g else "-" for g in got)
            + " |"
            + " |" * len(grow)
        )
    return "\n".join(out)


def verdicts(data: dict[str, Any], sizes: list[float], workers: list[int]) -> list[str]:
    """Targets at full RAG size, from the largest RAG size measured (linear when smaller)."""
    measured = [s for s in sizes if data.get(f"rag/{s}/ingest")]
    if not measured:
        return []
    s = max(measured)
    scale = 1.0 / s
    lines = [f"targets at full RAG size, from size {s:g} scaled linearly by {scale:g}:"]
    for step, target in TARGETS.items():
        for key in [step] if step.startswith("pool") else [f"{step}/{n}w" for n in workers]:
            g = data.get(f"rag/{s}/{key}")
            if g:
                est = g["s"] * scale
                ok = "met" if est < target else "NOT met"
                lines.append(f"- {key}: {est:.1f} s (target < {target:.0f} s) -> {ok}")
    reads = data.get(f"rag/{s}/reads")
    if reads:
        worst = max(READS, key=lambda n: reads[n])
        lines.append(
            f"- slowest read p95 at size {s:g}: {worst} {reads[worst]:.0f} ms "
            f"(target < {READ_TARGET_MS:.0f} ms at size 1; not scaled)"
        )
    peaks = [(k, v["mb"]) for k, v in data.items() if k.startswith(f"rag/{s}/") and "mb" in v]
    if peaks:
        k, mb = max(peaks, key=lambda kv: kv[1])
        lines.append(f"- largest peak: {k} {mb:.0f} MB (target < {MEMORY_TARGET_MB:.0f} MB)")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--shape", nargs="+", choices=sorted(SHAPES), default=["rag", "dl"])
    parser.add_argument("--size", nargs="+", type=float, default=[1.0])
    parser.add_argument("--workers", nargs="+", type=int, default=[1])
    parser.add_argument(
        "--repeat", type=int, default=1, help="evaluate and bias: the median of this many"
    )
    parser.add_argument("--results", type=Path, default=ROOT / "var" / "scale.json")
    parser.add_argument("--fresh", action="store_true", help="forget the figures measured")
    parser.add_argument("--child", nargs=2, metavar=("SHAPE", "SIZE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not os.environ.get("CELERY_BROKER_URL", "").startswith("redis"):
        sys.exit("set CELERY_BROKER_URL to a redis:// URL: the steps run on Celery workers")
    results = Results(args.results)
    if args.child:
        child(args.child[0], float(args.child[1]), args.workers, results, args.repeat)
        return
    if args.fresh and args.results.exists():
        args.results.unlink()
    (ROOT / "var").mkdir(exist_ok=True)
    for shape in args.shape:
        for size in args.size:
            subprocess.run(
                [
                    str(PYTHON),
                    __file__,
                    "--child",
                    shape,
                    str(size),
                    "--workers",
                    *map(str, args.workers),
                    "--repeat",
                    str(args.repeat),
                    "--results",
                    str(args.results),
                ],
                check=True,
            )
    data = results.load()
    print(table(data, args.shape, args.size, args.workers))
    print()
    print("\n".join(verdicts(data, args.size, args.workers)))


if __name__ == "__main__":
    main()
