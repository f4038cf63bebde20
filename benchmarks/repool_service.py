"""A depth-100 re-pool of the TREC 2011 Medical campaign through the service, task included.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/pooljudge_repool_bench \
    CELERY_BROKER_URL=redis://127.0.0.1:6379/14 .venv/bin/python benchmarks/repool_service.py

Sets up the campaign once (topics, the Medical runs through ``run_submitted``, the qrels), then
times ``pool_requested`` -> Celery task on a real worker over Redis -> version built (committed), as
an admin's trigger would run. Without CELERY_BROKER_URL the task runs inline. Target: under 30 s.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("POOLJUDGE_SHARED_DATA") or ROOT.parent / "shared" / "data")
DEFAULT_DB = "postgres://postgres@127.0.0.1:5432/pooljudge_repool_bench"


def main() -> None:
    os.environ.setdefault("DATABASE_URL", DEFAULT_DB)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "judging.settings")
    url = os.environ["DATABASE_URL"]
    if not url.startswith("postgres"):
        sys.exit("this benchmark is for PostgreSQL: set DATABASE_URL to a postgres:// URL")
    import psycopg

    name = url.rsplit("/", 1)[1]
    with psycopg.connect(url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname=%s", (name,)).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')
    subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, check=True)
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth import get_user_model

    from judging.campaigns.models import Campaign, Topic, UnknownTopicPolicy
    from judging.campaigns.services import campaign_create
    from judging.core.errors import DomainError
    from judging.pools.models import PoolVersion
    from judging.workflows.pools import pool_requested
    from judging.workflows.runs import run_submitted

    medical = DATA / "trec2011-medical"
    campaign = Campaign.objects.filter(name="medical-bench").first()
    if campaign is None:
        t0 = time.perf_counter()
        campaign = campaign_create(
            name="medical-bench", unknown_topic_policy=UnknownTopicPolicy.IGNORE
        )
        qids = sorted({line.split()[0] for line in (medical / "qrels.txt").open()})
        Topic.objects.bulk_create(Topic(campaign=campaign, qid=q, title=q) for q in qids)
        owner, _ = get_user_model().objects.get_or_create(username="bench-owner")
        skipped = []
        for path in sorted((medical / "runs").glob("input.*.gz")):
            try:
                run_submitted(
                    campaign=campaign, owner=owner, data=path.read_bytes(), source=path.name
                )
            except DomainError as exc:
                skipped.append(f"{path.name}: {exc.message}")
        print(
            f"set-up: {campaign.runs.count()} runs in {time.perf_counter() - t0:.1f} s; "
            f"skipped {skipped}"
        )
    from judging.assessments.models import JudgingSlot

    JudgingSlot.objects.filter(campaign=campaign).delete()  # the previous timing's queue
    PoolVersion.objects.filter(campaign=campaign).delete()

    worker = None
    if settings.CELERY_BROKER_CONFIGURED:
        worker = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "judging",
                "worker",
                "--concurrency",
                "1",
                "--without-gossip",
                "--without-mingle",
                "--loglevel",
                "WARNING",
            ],
            cwd=ROOT,
            env=os.environ.copy(),
        )
        time.sleep(4)  # let the worker connect before timing
    try:
        start = time.perf_counter()
        version, _ = pool_requested(
            campaign=campaign, strategy="depth", depth=100, runs=list(campaign.runs.all())
        )
        while True:
            version.refresh_from_db()
            if version.state in ("built", "failed"):
                break
            time.sleep(0.05)
        elapsed = time.perf_counter() - start
    finally:
        if worker is not None:
            worker.terminate()
            worker.wait(timeout=30)
    where = "a Celery worker over Redis" if worker is not None else "inline (no broker)"
    print(
        f"re-pool depth 100, {len(version.run_tags)} runs, {version.total_topics} topics, "
        f"{version.num_documents} documents, state {version.state}: {elapsed:.2f} s "
        f"({where}); target < 30 s -> {'met' if elapsed < 30 else 'NOT met'}"
    )


if __name__ == "__main__":
    main()
