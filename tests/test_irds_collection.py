"""A collection from ir_datasets, end to end as an admin runs it, in fresh processes: the command
takes the topics and qrels of Cranfield from a cache built out of ../shared/data/cranfield, a
run file is imported with it, and when a pool is built only the pooled documents' text is read
from ir_datasets' docstore and stored, so they are served. No network (``unshare -n`` where the
kernel allows it); the database is a fresh SQLite file of the test's own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests._shared_data import shared_data_path
from tests.test_irds_source import CRAN_FILES, HAS_IRDS, REPO, _cache, _offline

pytestmark = pytest.mark.skipif(
    not HAS_IRDS, reason='ir_datasets is not installed (pip install -e ".[irds]")'
)

SCALE = json.dumps([{"grade": g, "label": f"code {g}"} for g in range(5)])
CHECK = r"""
import json
from judging.campaigns.models import Campaign, Document, Topic
from judging.pools.models import PoolDocument
c = Campaign.objects.get(name="cran")
print(json.dumps({
    "source": c.document_source,
    "topics": Topic.objects.filter(campaign=c).count(),
    "topic_3": Topic.objects.get(campaign=c, qid="3").title,
    "documents": sorted(Document.objects.filter(campaign=c).values_list("docid", flat=True)),
    "title_10": Document.objects.get(campaign=c, docid="10").title,
    "pooled_without_text": PoolDocument.objects.filter(version__campaign=c, has_text=False).count(),
    "pooled": PoolDocument.objects.filter(version__campaign=c).count(),
}))
"""


def test_an_ir_datasets_collection_imports_in_one_command_and_a_pool_reads_only_its_texts(
    tmp_path: Path,
) -> None:
    cran = shared_data_path("cranfield")
    home = _cache(tmp_path, cran, tuple(CRAN_FILES))
    run = tmp_path / "input.cran-bm25"
    # topics 1-3, ten documents each (docids "1".."1400"); the pool takes the top 5
    run.write_text(
        "".join(
            f"{q} Q0 {q * 10 + i} {i + 1} {10.0 - i} cran-bm25\n"
            for q in (1, 2, 3)
            for i in range(10)
        )
    )
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DATABASE_URL", "CELERY_BROKER_URL", "REQUIRE_SERVICES")
    }
    env.update(
        IR_DATASETS_HOME=str(home),
        POOLJUDGE_VAR_DIR=str(tmp_path / "var"),
        PYTHONPATH=str(REPO),
        IR_DATASETS_DL_TRIES="1",
    )

    def manage(*args: str) -> str:
        command = [sys.executable, str(REPO / "manage.py"), *args]
        done = subprocess.run(
            _offline(command), env=env, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, done.stderr[-3000:]
        return done.stdout

    manage("migrate", "--noinput", "-v0")
    out = manage(
        "import_collection",
        "--campaign",
        "cran",
        "--ir-datasets",
        "cranfield",
        "--scale",
        SCALE,
        "--runs",
        str(run),
        "--pooled-runs",
        "all",
    )
    assert "topics: 225 (from the topics file)" in out, out
    assert "judgments: 1837" in out, out
    manage("build_pool", "--campaign", "cran", "--strategy", "depth", "--depth", "5")
    state = json.loads(manage("shell", "-c", CHECK).strip().splitlines()[-1])
    assert state["source"] == "ir_datasets:cranfield"
    assert state["topics"] == 225
    assert state["topic_3"].startswith("what problems of heat conduction")
    pooled = sorted(str(q * 10 + i) for q in (1, 2, 3) for i in range(5))
    # only the pooled documents were read and stored, and they are served
    assert state["documents"] == pooled
    assert state["title_10"] == "the theory of the impact tube at low pressure ."
    assert state["pooled"] == 15 and state["pooled_without_text"] == 0
