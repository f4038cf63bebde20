"""Waiting for what the service computes: a run's evaluation, a regression check.

The service never computes on a GET (``judging/README.md``, "Stored computations"): a stored
computation answers 404 when it was never asked for, 202 while it is being computed and 200 once
stored, done or failed. These loops poll until the 200, ask (POST) for what was never asked
for (and look again at once after asking), and give up after a deadline with
:class:`PooljudgeTimeout`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from pooljudge.client.errors import Conflict, EvaluationFailed, NotFound, PooljudgeTimeout
from pooljudge.client.http import API_PREFIX, Params, Transport
from pooljudge.client.types import CheckResult, Evaluation

__all__ = ["until", "wait_for_check", "wait_for_evaluation"]

T = TypeVar("T")

# a run's evaluation status while the evaluation recorded with it is on its way
_UNFINISHED = frozenset({"pending", "queued", "running", "stale"})


def _sleep_until(deadline: float, poll: float, what: str) -> None:
    left = deadline - time.monotonic()
    if left <= 0:
        raise PooljudgeTimeout(f"{what} did not finish in time", code="timeout")
    time.sleep(min(poll, left))


def until(
    read: Callable[[], T], done: Callable[[T], bool], *, timeout: float, poll: float, what: str
) -> T:
    """``read()`` again every ``poll`` seconds until ``done`` says so; the last read."""
    deadline = time.monotonic() + timeout
    while True:
        value = read()
        if done(value):
            return value
        _sleep_until(deadline, poll, what)


def _on_its_way(http: Transport, run_id: int, qrels_version: int | None, mode: str) -> bool:
    """Whether a 404 (never computed) is only the evaluation a new run or qrels version records
    for every run (honest, latest version) not stored yet: its row is made when its job runs,
    and until then only the run's own status says it is coming."""
    if qrels_version is not None or mode != "honest":
        return False
    status = http.get_json(f"runs/{run_id}/").get("evaluation") or {}
    return status.get("status") in _UNFINISHED


def wait_for_evaluation(
    http: Transport,
    run_id: int,
    *,
    qrels_version: int | None,
    mode: str,
    timeout: float,
    poll: float,
) -> Evaluation:
    """``Client.wait_for_evaluation``: GET until stored, POST once if never asked for."""
    path = f"runs/{run_id}/evaluations/"
    params: Params = {"mode": mode, "qrels": qrels_version}
    deadline = time.monotonic() + timeout
    asked = False
    while True:
        try:
            response = http.request("GET", path, params=params)
        except NotFound:
            if asked:  # asked for, and still never computed: no such run after all
                raise
            if not _on_its_way(http, run_id, qrels_version, mode):
                http.request("POST", path, json={k: v for k, v in params.items() if v})
                asked = True
                continue  # look again at once: a service computing inline has stored it
        else:
            if response.status_code == 200:
                answer = response.json()
                evaluation = Evaluation.from_api(answer["evaluations"][0], run=answer["run"])
                if evaluation.state == "failed":
                    raise EvaluationFailed(
                        f"the evaluation failed: {evaluation.error or 'no error stored'}",
                        status=200,
                        code="evaluation_failed",
                        method="GET",
                        url=response.url,
                        body=answer,
                    )
                return evaluation
        _sleep_until(deadline, poll, f"the evaluation of run {run_id}")


def _ask_for_missing(http: Transport, body: Mapping[str, Any]) -> None:
    """POST the requests a check's 409 names for the evaluations never computed."""
    for evaluation in body.get("evaluations") or ():
        request = evaluation.get("request")
        if evaluation.get("state") == "missing" and isinstance(request, Mapping):
            url = str(request["url"])
            path = url.split(API_PREFIX, 1)[1] if API_PREFIX in url else url
            http.request(str(request.get("method", "POST")), path, json=request.get("body"))


def wait_for_check(
    http: Transport, run_id: int, params: Params, *, timeout: float, poll: float
) -> CheckResult:
    """``Client.check``: GET until done (202 while an evaluation is computed); a 409 for
    evaluations never computed asks for them once, a 409 for a failed one is raised."""
    path = f"runs/{run_id}/check/"
    deadline = time.monotonic() + timeout
    asked = False
    while True:
        try:
            response = http.request("GET", path, params=params)
        except Conflict as refused:
            if asked or refused.body.get("state") != "missing":
                raise
            _ask_for_missing(http, refused.body)
            asked = True
            continue  # look again at once: a service computing inline has stored them
        else:
            if response.status_code == 200:
                return CheckResult.from_api(response.json())
        _sleep_until(deadline, poll, f"the regression check of run {run_id}")
