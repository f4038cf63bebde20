"""Schemathesis against the live schema, as each signed-in role, on the demo data.

Every operation of ``/api/v1/schema/``, as the app serves it, is called in-process through the
real WSGI application (middleware, URL conf, exception handler), as the annotator, the
researcher and the admin of ``load_demo``, with generated valid and invalid input. A test fails
on a 5xx, a status code the schema does not document, or a content type, body or header that
does not match what it documents.

Bounded and deterministic: a fixed seed, ``EXAMPLES_PER_OPERATION`` examples per operation and
role, no shrinking. Each example runs in a savepoint rolled back after it, so every example of
an operation starts from the same demo data. Path ids are steered to the demo's real objects
three times in four (so the operations reach their bodies), left as generated otherwise (so the
404s are exercised too). Anonymous callers are the authorization matrix's (test_authz_matrix).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections, transaction
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

pytestmark = pytest.mark.django_db

EXAMPLES_PER_OPERATION = 12
ROLES = ("annotator", "researcher", "admin")
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    response_headers_conformance,
]


_HANDLER = WSGIHandler()


def app(environ: dict[str, Any], start_response: Any) -> Any:
    return _HANDLER(environ, start_response)


CONFIG = schemathesis.Config.from_dict(
    {
        "seed": 11,
        "generation": {
            "mode": "all",
            "max-examples": EXAMPLES_PER_OPERATION,
            "deterministic": True,
            "no-shrink": True,
        },
        "phases": {
            "examples": {"enabled": True},
            "coverage": {"enabled": False},
            "fuzzing": {"enabled": True},
            "stateful": {"enabled": False},
        },
    }
)
schema = schemathesis.openapi.from_wsgi("/api/v1/schema/", app, config=CONFIG)

# The demo's objects by kind, filled for each test by the ``real_ids`` fixture.
REAL_IDS: dict[str, list[int]] = {}
PATH_KINDS = (  # the first path segment after /api/v1/ names what its id is
    ("campaigns", "campaign"),
    ("runs", "run"),
    ("pools", "pool"),
    ("qrels", "qrels"),
    ("leases", "lease"),
    ("judgments", "judgment"),
    ("judges", "judge"),
    ("judge-runs", "judge_run"),
    ("samples", "sample"),
)


@schema.hook("map_path_parameters")
def demo_objects(context: Any, path_parameters: dict[str, Any]) -> dict[str, Any]:
    """Most generated integer ids become the id of a real object of the path's kind."""
    segment = context.operation.path.removeprefix("/api/v1/").split("/")[0]
    ids = next((REAL_IDS.get(kind) for first, kind in PATH_KINDS if first == segment), None)
    if not ids or not path_parameters:
        return path_parameters
    out = dict(path_parameters)
    for name, value in path_parameters.items():
        if isinstance(value, int) and not isinstance(value, bool) and value % 4:
            out[name] = ids[value % len(ids)]
    return out


class _FixedScorer:
    """Stands in for the embedding model (its loading is not what this test is about): every
    pair scores by its document id's length."""

    def __init__(self, **_: Any) -> None:
        pass

    def similarities(self, queries: Any, texts: Any, items: Any) -> Any:
        import numpy as np

        return np.array([len(d) % 7 / 7 for _, d in items], dtype=np.float64)


def _judges(demo: Any) -> tuple[list[int], list[int]]:
    """An imported judge with labels over the demo's pool, an embedding judge and a finished
    run of it: the automatic judges' operations reach their bodies."""
    from judging.autojudge import services
    from judging.autojudge.models import JudgeKind, JudgeRun
    from judging.pools.models import PoolVersion

    pool = PoolVersion.objects.filter(campaign=demo, state="built").order_by("number").first()
    assert pool is not None
    imported = services.judge_create(
        campaign=demo, name="schema-file", kind=JudgeKind.IMPORTED, model="m"
    )
    scale = demo.grade_values()
    services.store_labels(
        imported,
        [
            services.Label(q, d, scale[i % len(scale)])
            for i, (q, d) in enumerate(services.pool_pairs(pool)[:20])
        ],
    )
    embedding = services.judge_create(
        campaign=demo, name="schema-minilm", kind=JudgeKind.EMBEDDING, model="all-MiniLM-L6-v2"
    )
    from judging.core.models import Job

    finished = Job.objects.create(kind="judge_run", key="judge-run:test", state="done")
    run = JudgeRun.objects.create(judge=embedding, pool=pool, job=finished, total=20, done=20)
    return [imported.pk, embedding.pk], [run.pk]


def _live_lease_ids(annotator: Any) -> list[int]:
    from judging.assessments.models import Lease

    return sorted(Lease.objects.filter(annotator=annotator).values_list("pk", flat=True))


@pytest.fixture(scope="module")
def module_ids(demo_data: None, django_db_blocker: Any) -> dict[str, list[int]]:
    """The demo's objects, plus a judgment and a live lease of the demo annotator, and
    automatic judges (the embedding model replaced by a fixed scorer): made once per module,
    inside the demo's outer transaction (each example's changes are rolled back)."""
    import judging.autojudge.embedding as embedding

    with django_db_blocker.unblock(), pytest.MonkeyPatch.context() as patch:
        patch.setattr(embedding, "EmbeddingScorer", _FixedScorer)
        from django.contrib.auth import get_user_model

        from judging.assessments import queue
        from judging.assessments.models import Judgment, QrelsVersion
        from judging.campaigns.models import Campaign, Run
        from judging.pools.models import PoolVersion

        demo = Campaign.objects.get()
        annotator = get_user_model().objects.get(username="annotator")
        judged = queue.lease_next(campaign=demo, annotator=annotator)
        assert judged is not None, "the demo leaves topic 6 to the annotator"
        queue.judgment_record(lease_id=judged.pk, annotator=annotator, grade=1)
        assert queue.lease_next(campaign=demo, annotator=annotator) is not None
        ids = {
            "campaign": [demo.pk],
            "run": sorted(Run.objects.values_list("pk", flat=True)),
            "pool": sorted(PoolVersion.objects.values_list("pk", flat=True)),
            "qrels": sorted(QrelsVersion.objects.values_list("pk", flat=True)),
            "lease": _live_lease_ids(annotator),
            "judgment": sorted(
                Judgment.objects.filter(annotator=annotator).values_list("pk", flat=True)
            ),
        }
        ids["judge"], ids["judge_run"] = _judges(demo)
        # The demo's human sample, whatever its id (1 on SQLite, which rolls its sequence back
        # with the transaction; not on PostgreSQL once another module has built the demo).
        from judging.autojudge.models import HumanSample

        ids["sample"] = sorted(
            HumanSample.objects.filter(kind="document").values_list("pk", flat=True)
        )
        assert ids["sample"], "the demo samples pool version 1 for its judge"
    return ids


@pytest.fixture
def real_ids(
    module_ids: dict[str, list[int]], demo: Any, monkeypatch: pytest.MonkeyPatch
) -> Iterator[dict[str, list[int]]]:
    """``module_ids`` for this test, its annotator's lease live (a new one if the module has
    run for longer than the campaign's lease), the embedding model replaced by a fixed scorer."""
    import judging.autojudge.embedding as embedding

    monkeypatch.setattr(embedding, "EmbeddingScorer", _FixedScorer)
    from datetime import timedelta

    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from judging.assessments import queue
    from judging.assessments.models import Lease, LeaseState

    REAL_IDS.update(module_ids)
    annotator = get_user_model().objects.get(username="annotator")
    soon = timezone.now() + timedelta(seconds=60)
    if not Lease.objects.filter(
        annotator=annotator, state=LeaseState.ACTIVE, expires_at__gt=soon
    ).exists():
        assert queue.lease_next(campaign=demo, annotator=annotator) is not None
        REAL_IDS["lease"] = _live_lease_ids(annotator)
    yield REAL_IDS
    REAL_IDS.clear()


@pytest.fixture
def tokens(demo: Any) -> dict[str, str]:
    from django.contrib.auth import get_user_model
    from rest_framework.authtoken.models import Token

    users = get_user_model().objects.filter(username__in=ROLES)
    return {u.username: Token.objects.get_or_create(user=u)[0].key for u in users}


@pytest.fixture
def in_process_requests() -> Iterator[None]:
    """Requests served in-process keep the test's connection and its transaction (as Django's
    test client does: the request signals would close a connection inside a transaction)."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.mark.parametrize("role", ROLES)
@schema.parametrize()
@settings(
    deadline=None,
    derandomize=True,
    database=None,
    print_blob=False,
    suppress_health_check=list(HealthCheck),
)
def test_api(
    case: Any,
    role: str,
    tokens: dict[str, str],
    real_ids: dict[str, list[int]],
    in_process_requests: None,
) -> None:
    with transaction.atomic():
        response = case.call(headers={"Authorization": f"Token {tokens[role]}"})
        transaction.set_rollback(True)
    case.validate_response(response, checks=CHECKS)
