"""Ingest a 1,000,000-line run through the submission service vs a plain PostgreSQL COPY.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/pooljudge_bench .venv/bin/python \
        benchmarks/ingest.py [--topics 1000] [--docs 1000] [--repeat 3]

The service path is the one the API uses (``workflows.runs.run_submitted``: read, validate the whole
file, rank in trec_eval order, store in one transaction). The baseline is ``COPY bare FROM STDIN``
of the same file into an unindexed table on the same database. Each measurement runs in its own
process; the figure is the median of ``--repeat`` runs; peak memory is the child's maximum RSS.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _peak import peak_rss_mb

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DB = "postgres://postgres@127.0.0.1:5432/pooljudge_bench"


def make_run(path: Path, topics: int, docs: int) -> None:
    rng = random.Random(7)
    with path.open("w") as out:
        for q in range(1, topics + 1):
            scores = sorted((rng.random() * 30 for _ in range(docs)), reverse=True)
            out.writelines(
                f"{q} Q0 DOC-{rng.randrange(10**7):07d}-{r} {r} {s:.6f} bench\n"
                for r, s in enumerate(scores, 1)
            )


def setup_django() -> None:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "judging.settings")
    import django

    django.setup()


def child_ours(path: Path, topics: int) -> float:
    setup_django()
    from django.contrib.auth import get_user_model

    from judging.campaigns.models import Campaign, Topic
    from judging.campaigns.services import campaign_create
    from judging.workflows.runs import run_submitted

    Campaign.objects.filter(name="ingest-bench").delete()
    campaign = campaign_create(name="ingest-bench")
    Topic.objects.bulk_create(
        Topic(campaign=campaign, qid=str(q), title=f"t{q}") for q in range(1, topics + 1)
    )
    owner, _ = get_user_model().objects.get_or_create(username="bench")
    data = path.read_bytes()  # as the API has it: the uploaded bytes in memory
    start = time.perf_counter()
    run = run_submitted(campaign=campaign, owner=owner, data=data, source=path.name)
    elapsed = time.perf_counter() - start
    assert run.num_entries == topics * (len(data.splitlines()) // topics)
    Campaign.objects.filter(pk=campaign.pk).delete()
    return elapsed


def child_copy(path: Path) -> float:
    import psycopg

    with psycopg.connect(os.environ["DATABASE_URL"], autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS bench_bare")
        conn.execute(
            "CREATE TABLE bench_bare (qid text, q0 text, docid text, rank integer, "
            "score double precision, tag text)"
        )
        start = time.perf_counter()
        with (
            conn.transaction(),
            conn.cursor() as cur,
            cur.copy("COPY bench_bare FROM STDIN WITH (FORMAT text, DELIMITER ' ')") as copy,
        ):
            copy.write(path.read_bytes())
        elapsed = time.perf_counter() - start
        conn.execute("DROP TABLE bench_bare")
    return elapsed


def measure(kind: str, path: Path, topics: int) -> tuple[float, float]:
    out = subprocess.run(
        [sys.executable, __file__, "--child", kind, "--file", str(path), "--topics", str(topics)],
        capture_output=True,
        text=True,
        check=True,
        env=os.environ.copy(),
    ).stdout.split()
    return float(out[0]), float(out[1])


def ensure_database(url: str) -> None:
    import psycopg

    name = url.rsplit("/", 1)[1]
    admin_url = url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        if not exists:
            conn.execute(f'CREATE DATABASE "{name}"')
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"],
        cwd=ROOT,
        check=True,
        env=os.environ.copy(),
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--topics", type=int, default=1000)
    parser.add_argument("--docs", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--child", choices=["ours", "copy"])
    parser.add_argument("--file", type=Path)
    args = parser.parse_args()

    if args.child:
        secs = child_ours(args.file, args.topics) if args.child == "ours" else child_copy(args.file)
        peak_mb = peak_rss_mb()
        print(f"{secs:.4f} {peak_mb:.1f}")
        return

    os.environ["DATABASE_URL"] = os.environ.get("DATABASE_URL") or DEFAULT_DB
    if not os.environ["DATABASE_URL"].startswith("postgres"):
        sys.exit(
            "benchmarks/ingest.py compares with PostgreSQL COPY: set DATABASE_URL to a "
            "postgres:// database"
        )
    os.environ.pop("CELERY_BROKER_URL", None)
    ensure_database(os.environ["DATABASE_URL"])
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.run"
        make_run(path, args.topics, args.docs)
        lines = args.topics * args.docs
        print(
            f"run file: {lines:,} lines, {path.stat().st_size / 1e6:.1f} MB; "
            f"median of {args.repeat}, each in its own process"
        )
        results = {}
        for kind in ("copy", "ours"):
            runs = [measure(kind, path, args.topics) for _ in range(args.repeat)]
            results[kind] = (statistics.median(r[0] for r in runs), max(r[1] for r in runs))
    copy_s, copy_mb = results["copy"]
    ours_s, ours_mb = results["ours"]
    print(f"{'path':<38} {'seconds':>8} {'ratio':>6} {'peak MB':>8}")
    print(f"{'PostgreSQL COPY into a bare table':<38} {copy_s:8.2f} {1.0:6.2f} {copy_mb:8.0f}")
    print(
        f"{'Pooljudge run_submitted (validate+store)':<38} {ours_s:8.2f} {ours_s / copy_s:6.2f} "
        f"{ours_mb:8.0f}"
    )
    print(
        f"target: ratio <= 3.0 and peak < 1024 MB -> "
        f"{'met' if ours_s / copy_s <= 3.0 and ours_mb < 1024 else 'NOT met'}"
    )


if __name__ == "__main__":
    main()
