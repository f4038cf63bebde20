"""The automatic judges' reads through gunicorn on PostgreSQL, on TREC 2011 Medical (127 runs, 34
topics): the hybrid leaderboard of a human sample, the audit, and the judge import.

    python benchmarks/hybrid_board.py [--db pj_bench_hybrid] [--budget-share 0.2] [--repeat 5]

Drops and recreates the PostgreSQL database ``--db``, migrates it, imports the collection as a
user would (``manage.py import_collection``, fresh process), builds a depth-10 pool of the 41
pooled runs, then in this process: creates an imported judge whose labels are simulated from the
official qrels with a known confusion matrix (written as a TREC file and imported through
``labels_import``, timed), draws a stratified (proportional) human sample of ``--budget-share`` of
the pool (timed), and computes the audit against the official qrels (timed: leave the task out,
this is the task's work). The official qrels are the people's grades, so the sample is complete.

Then ``gunicorn judging.wsgi:application`` (2 sync workers, DEBUG off) serves, and the figures are
wall times of what a user asks for over HTTP with a token, ``--repeat`` + 1 times each (the
first, then the median and max of the rest): ``GET /api/v1/samples/<id>/`` (every run's
corrected P@10, R@10, nDCG@10 and AP with intervals: computed on the first read, then served
from the shared cache, Redis at ``--cache``, emptied before each of the two sample reads), the
sample page, ``GET /api/v1/audits/<id>/`` and the audit page.
"""

from __future__ import annotations

import argparse
import http.client
import os
import statistics
import subprocess
import sys
import time
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import judging_load as load  # the load benchmark's server helpers

ROOT = load.ROOT
DATA = Path(os.environ.get("POOLJUDGE_SHARED_DATA") or ROOT.parent / "shared" / "data")
MEDICAL = DATA / "trec2011-medical"
# P(judge's grade | human grade) on the 0-2 scale, rows human 0, 1, 2
CONFUSION = ((0.85, 0.10, 0.05), (0.25, 0.45, 0.30), (0.10, 0.30, 0.60))


def simulated(qid: str, docid: str, grade: int) -> int:
    u = (zlib.crc32(f"{qid}/{docid}".encode()) % 10_000) / 10_000
    row = CONFUSION[max(0, min(2, grade))]
    return 0 if u < row[0] else 1 if u < row[0] + row[1] else 2


def timed(fn, *args, **kwargs):
    t = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pg", default="postgres://postgres@127.0.0.1:5432")
    ap.add_argument("--db", default="pj_bench_hybrid")
    ap.add_argument("--port", type=int, default=8931)
    ap.add_argument("--budget-share", type=float, default=0.2)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--cache", default="redis://127.0.0.1:6379/5")
    args = ap.parse_args()
    if not MEDICAL.exists():
        raise SystemExit(f"the shared data is not at {MEDICAL}")
    load.recreate_database(args.pg, args.db)
    # the shared cache of production (Redis), emptied: the corrected estimates are computed on
    # a sample's first read and then served from it
    env = {**load.server_env(args.pg, args.db), "POOLJUDGE_CACHE_URL": args.cache}
    _flush(args.cache)
    os.environ.update(env)
    manage = [str(load.PYTHON), "manage.py"]
    subprocess.run([*manage, "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=env, check=True)
    subprocess.run(
        [*manage, "collectstatic", "--noinput", "-v", "0"], cwd=ROOT, env=env, check=True
    )
    runs = sorted(str(p) for p in (MEDICAL / "runs").glob("input.*.gz"))
    t = time.perf_counter()
    quiet = {**env, "DJANGO_LOG_LEVEL": "WARNING"}
    subprocess.run(
        [*manage, "import_collection", "--campaign", "medical2011",
         "--qrels", str(MEDICAL / "qrels.txt"), "--runs", *runs,
         "--groups", str(MEDICAL / "runs.tsv"), "--pooled-runs", "infer"],
        cwd=ROOT, env=quiet, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    print(f"import_collection (127 runs, evaluated): {time.perf_counter() - t:.1f} s")

    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from rest_framework.authtoken.models import Token

    from judging.assessments.models import QrelsVersion
    from judging.autojudge.audit import audit_request
    from judging.autojudge.estimates import sample_create
    from judging.autojudge.models import JudgeKind
    from judging.autojudge.services import judge_create, labels_import, pool_pairs
    from judging.campaigns.models import Campaign
    from judging.pools.models import PoolVersion
    from judging.workflows.pools import pool_requested
    from judging.workflows.qrels import qrels_imported

    campaign = Campaign.objects.get(name="medical2011")
    pool, _ = pool_requested(campaign=campaign, strategy="depth", depth=10)
    pool = PoolVersion.objects.get(pk=pool.pk)
    official = QrelsVersion.objects.get(campaign=campaign, number=1)
    truth = {(q, d): g for q, d, g in official.entries.values_list("topic__qid", "docid", "grade")}
    pairs = pool_pairs(pool)
    unjudged = [p for p in pairs if p not in truth]
    print(f"pool v{pool.number}: {len(pairs)} documents ({len(unjudged)} not in the qrels)")
    # the people's grade of every pool document: the official one, 0 where the official pool did
    # not judge it (trec_eval's reading); stored as a new human version beside the official one
    people = "".join(f"{q} 0 {d} 0\n" for q, d in unjudged)
    human = qrels_imported(
        campaign=campaign,
        data=(MEDICAL / "qrels.txt").read_bytes() + people.encode(),
        note="official qrels + pool documents it did not judge as not relevant",
    )
    lines = "".join(f"{q} 0 {d} {simulated(q, d, truth.get((q, d), 0))}\n" for q, d in pairs)
    judge = judge_create(campaign=campaign, name="simulated", kind=JudgeKind.IMPORTED, model="m")
    n, secs = timed(labels_import, judge=judge, data=lines.encode())
    print(f"labels_import: {n} labels in {secs:.2f} s")
    budget = round(args.budget_share * len(pairs))
    hs, secs = timed(
        sample_create, judge=judge, pool=pool, design="stratified", budget=budget,
        allocation="proportional",
    )  # fmt: skip
    print(f"sample_create ({budget} documents, stratified): {secs:.2f} s")
    # no broker: the task runs inline when the request commits, as with `make demo`
    audit, secs = timed(audit_request, judge=judge, human=human, pool=pool)
    audit.refresh_from_db()
    assert audit.state == "done", audit.error
    print(f"audit (127 runs x 3 measures under both qrels, agreement, gaps): {secs:.2f} s")
    user = get_user_model().objects.create_user("bench-admin", password="x" * 12)
    user.is_staff = True  # an admin
    user.save()
    token = Token.objects.create(user=user).key
    session = _session(user)

    server = load.start_gunicorn(env, args.port, 2, 1, "sync")
    try:
        load.wait_ready(args.port, token)
        urls = {
            "GET /api/v1/samples/<id>/ (corrected estimates, 127 runs x 4 measures)": (
                f"/api/v1/samples/{hs.pk}/", {"Authorization": f"Token {token}"}),
            "sample page (hybrid leaderboard)": (
                f"/campaigns/{campaign.pk}/samples/{hs.pk}/", {"Cookie": session}),
            "GET /api/v1/audits/<id>/": (
                f"/api/v1/audits/{audit.pk}/", {"Authorization": f"Token {token}"}),
            "audit page": (
                f"/campaigns/{campaign.pk}/judges/{judge.pk}/audit/", {"Cookie": session}),
        }  # fmt: skip
        for name, (path, headers) in urls.items():
            if path.startswith(("/api/v1/samples/", f"/campaigns/{campaign.pk}/samples/")):
                _flush(args.cache)  # the first read computes, the others come from the cache
            times = []
            for _ in range(args.repeat + 1):
                conn = http.client.HTTPConnection("127.0.0.1", args.port, timeout=120)
                t = time.perf_counter()
                conn.request("GET", path, headers=headers)
                resp = conn.getresponse()
                body = resp.read()
                times.append(time.perf_counter() - t)
                assert resp.status == 200, (name, resp.status, body[:300])
            if path.startswith("/api/v1/samples/"):
                import json

                estimate = json.loads(body)["estimate"]
                assert estimate["ready"], estimate["progress"]
            first, times = times[0], times[1:]  # the first warms the worker (and the cache)
            print(
                f"{name}: first {first * 1000:.0f} ms, then median "
                f"{statistics.median(times) * 1000:.0f} ms, max {max(times) * 1000:.0f} ms "
                f"({len(body) // 1024} KB)"
            )
    finally:
        server.terminate()
        server.wait(timeout=30)


def _flush(url: str) -> None:
    import redis

    redis.Redis.from_url(url).flushdb()


def _session(user) -> str:
    """A session cookie for ``user``, made as a login makes it (the default session store)."""
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.contrib.sessions.backends.db import SessionStore

    store = SessionStore()
    store[SESSION_KEY] = str(user.pk)
    store[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
    store[HASH_SESSION_KEY] = user.get_session_auth_hash()
    store.create()
    return f"sessionid={store.session_key}"


if __name__ == "__main__":
    main()
