"""The documentation's shell examples run, verbatim, against a live server holding the demo:
every ```sh block of the pages below, with `POOLJUDGE_URL` set to the server (as the demo page
says to set it). Each curl call's HTTP status is recorded (curl's write-out, sent to stderr, so
what the examples print and pipe is untouched): every answer is a success but the failures the
pages show on purpose, and what the pages say an example prints, it prints.

The pages run in one order on one demo (reset sequences: the demo's ids are the pages' ids):
the leaderboard's (reads only), the API guide's (new runs 7 and 8, a pool version 2), then
judging's (gold items, an exclusion, qrels version 2)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from judging.demo.services import demo_judge, demo_load

DOCS = Path(__file__).resolve().parent.parent / "docs" / "guide"

# every curl call also writes its status to stderr, leaving what it prints to the examples
PREAMBLE = """curl() { command curl -w '%{stderr}HTTP %{http_code}\\n' "$@"; }\n"""

# page -> (the statuses its examples answer, in order; lines it says its examples print)
PAGES: dict[str, tuple[list[int], list[str]]] = {
    "publish.md": (
        [200, 200, 200, 200, 400],
        [
            "sorted by nDCG@10 descending · pooled runs only · 5 of 6 runs",
            "dense-v1 0.841",
            "random-walk 0.073",
            "random-walk & 0.160\\textsuperscript{\\dag} {\\scriptsize [0.060, 0.240]} & "
            "0.073\\textsuperscript{\\dag} {\\scriptsize [0.022, 0.132]} \\\\",
            "P_10                  \t1\t0.9000",
        ],
    ),
    "api.md": (
        # token, campaigns, a file run, a JSON run, detail, download; the bad run; evaluations,
        # bias and reusability; the admin's token, a pooled run, pool 2, missing text, import
        [
            *(200, 200, 201, 201, 200, 200, 400, 202, 200, 202, 200, 202, 200, 200),
            *(200, 201, 202, 200, 200, 201),
        ],
        [
            '{"wanted":2,"stored":2,"empty":0,"empty_docids":[],"still_missing":0,'
            '"still_missing_docids":[],"read":3,"ignored":1,"files":["wire.sgml.gz"]}',
        ],
    ),
    "judging.md": (
        [200, 200, 200, 200, 201, 200, 200, 201, 201, 201, 200],
        ['{"created":20,"updated":0,"queued_as_pooled":0,"skipped":0}'],
    ),
}


def _blocks(page: str) -> list[str]:
    return re.findall(r"```sh\n(.*?)```", (DOCS / page).read_text(encoding="utf-8"), re.S)


@pytest.mark.skipif(shutil.which("curl") is None, reason="needs curl")
@pytest.mark.django_db(transaction=True, reset_sequences=True)
@pytest.mark.follow_ups  # the API page reads qrels v1's reusability report, which publish asks for
def test_the_pages_examples_run_against_the_demo(live_server: Any, tmp_path: Path) -> None:
    campaign = demo_load()
    assert campaign is not None and campaign.pk == 1
    assert demo_judge(campaign) > 0
    env = {**os.environ, "POOLJUDGE_URL": live_server.url}
    for page, (statuses, printed) in PAGES.items():
        script = PREAMBLE + "\n".join(_blocks(page))
        done = subprocess.run(
            ["bash", "-c", script],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        answered = [int(s) for s in re.findall(r"^HTTP (\d+)$", done.stderr, re.M)]
        problems = [ln for ln in done.stderr.splitlines() if not ln.startswith("HTTP ")]
        assert answered == statuses, (page, answered, done.stdout[-3000:], problems)
        assert problems == [], (page, problems)
        for line in printed:
            assert line in done.stdout, (page, line)
