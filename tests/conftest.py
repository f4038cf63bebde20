"""Shared fixtures: users per role, API clients, a small campaign, service requirements."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from metrics import Qrels, Run, read_qrels
from tests._shared_data import shared_data_path, trec_groups, trec_runs

REQUIRE_SERVICES = os.environ.get("REQUIRE_SERVICES") == "1"


def need_service(available: bool, reason: str) -> None:
    """Skip without the service; under REQUIRE_SERVICES=1 (CI) its absence is a failure."""
    if available:
        return
    if REQUIRE_SERVICES:
        pytest.fail(f"REQUIRE_SERVICES=1 but {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session", autouse=True)
def _flush_past_the_sqlite_triggers() -> Iterator[None]:
    """``transactional_db`` tests empty the database after themselves with a flush: PostgreSQL's
    TRUNCATE fires no row trigger, SQLite's flush deletes row by row, which the immutability
    triggers refuse for qrels and judgments (judging/assessments/immutability.py)."""
    from django.db import connection

    from judging.assessments.immutability import unguarded

    if connection.vendor != "sqlite":
        yield
        return
    operations = type(connection.ops)
    original = operations.execute_sql_flush

    def execute_sql_flush(self: Any, sql_list: Any) -> None:
        with unguarded():
            original(self, sql_list)

    operations.execute_sql_flush = execute_sql_flush  # type: ignore[method-assign]
    yield
    operations.execute_sql_flush = original  # type: ignore[method-assign]


@pytest.fixture(scope="session")
def django_db_modify_db_settings(
    django_db_modify_db_settings_parallel_suffix: None,
    django_db_use_migrations: bool,
    django_db_blocker: Any,
) -> None:
    """pytest-django's, then on PostgreSQL each test process's database is made as a copy of a
    migrated template rather than migrated itself (tests/_db_template.py; not with
    ``--nomigrations``)."""
    from tests._db_template import use_a_migrated_template

    if django_db_use_migrations:
        with django_db_blocker.unblock():
            use_a_migrated_template()


@pytest.fixture(autouse=True)
def _fresh_cache() -> Iterator[None]:
    """Each test starts with an empty cache (the tests' is per process memory): failed sign-ins
    counted by one test do not lock out the users of the next."""
    yield
    from django.core.cache import cache

    cache.clear()


@pytest.fixture(autouse=True)
def _follow_ups_on_request(request: pytest.FixtureRequest) -> Iterator[None]:
    """A new qrels version asks for its bias and reusability reports (``after_qrels`` in
    judging/workflows/qrels.py), computed inline in tests, which costs more than the rest of a
    small campaign's setup. A test that reads them, or the tasks and rows they leave, is marked
    ``follow_ups``; for every other test of the database they are not asked for. The reports
    asked for by name (the API, the pages, ``load_demo``'s headline report) and the evaluations
    are computed as always, and so is what a module- or session-scoped fixture builds (the demo,
    the authorization matrix's dataset), which is set up before this function-scoped switch."""
    if request.node.get_closest_marker("follow_ups") or not _uses_the_database(request):
        yield
        return
    from judging.workflows import qrels as qrels_workflow

    with pytest.MonkeyPatch.context() as patch:
        # raising=True (the default): if these names move, this fails loudly, not silently
        patch.setattr(qrels_workflow, "bias_report_request", _not_asked_for)
        patch.setattr(qrels_workflow, "reusability_request", _not_asked_for)
        yield


def _uses_the_database(request: pytest.FixtureRequest) -> bool:
    names = set(request.fixturenames)
    return bool(
        request.node.get_closest_marker("django_db")
        or names & {"db", "transactional_db", "django_db_setup"}
    )


def _not_asked_for(**_: Any) -> None:
    return None


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The shared real TREC data folder (for every test, metrics too); skipped when absent."""
    return shared_data_path()


class TrecData(NamedTuple):
    """A shared real collection as read: its qrels, its runs by tag (``trec_runs``: float32
    scores, as pytrec_eval stores them) and the group of each run (``runs.tsv``)."""

    qrels: Qrels
    runs: dict[str, Run]
    groups: dict[str, str]


@pytest.fixture(scope="session")
def robust() -> TrecData:
    """TREC 2003 Robust (../shared/data/robust03: 17 runs, 100 topics), read once per test
    process for every module that reads it; skipped when absent. Read-only."""
    root = shared_data_path("robust03")
    return TrecData(read_qrels(root / "qrels.txt"), trec_runs(root), trec_groups(root))


@pytest.fixture
def files(request: pytest.FixtureRequest, tmp_path: Path) -> dict[str, str]:
    """The test module's ``FILES`` (file name -> text) written to the test's ``tmp_path``: their
    paths, as strings, by file name without its suffix (``"qrels.txt"`` -> ``files["qrels"]``)."""
    out = {}
    for name, text in request.module.FILES.items():
        path = tmp_path / name
        path.write_text(text)
        out[Path(name).stem] = str(path)
    return out


@pytest.fixture
def make_user(db: Any) -> Callable[..., Any]:
    from django.contrib.auth import get_user_model

    from judging.core.roles import grant

    def make(username: str, *roles: str, password: str = "pw-for-tests-only") -> Any:
        user = get_user_model().objects.create_user(username=username, password=password)
        for role in roles:
            if role == "admin":
                user.is_staff = True
                user.save()
            else:
                grant(user, role)
        return user

    return make


@pytest.fixture
def admin_user(make_user: Callable[..., Any]) -> Any:
    return make_user("alice-admin", "admin")


@pytest.fixture
def researcher(make_user: Callable[..., Any]) -> Any:
    return make_user("rita-researcher", "researcher")


@pytest.fixture
def other_researcher(make_user: Callable[..., Any]) -> Any:
    return make_user("oscar-researcher", "researcher")


@pytest.fixture
def annotator(make_user: Callable[..., Any]) -> Any:
    return make_user("ann-annotator", "annotator")


@pytest.fixture
def api_client_for() -> Callable[[Any], Any]:
    """An APIClient authenticated with the user's token (as scripts and curl would)."""
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    def make(user: Any) -> APIClient:
        client = APIClient()
        if user is not None:
            token, _ = Token.objects.get_or_create(user=user)
            client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
        return client

    return make


@pytest.fixture
def campaign(db: Any, admin_user: Any) -> Any:
    """A campaign with topics 401-403 and a 0-2 scale."""
    from judging.campaigns.models import Topic
    from judging.campaigns.services import campaign_create

    c = campaign_create(
        name="Test campaign",
        scale=[
            {"grade": 0, "label": "No"},
            {"grade": 1, "label": "Some"},
            {"grade": 2, "label": "Yes"},
        ],
        created_by=admin_user,
    )
    for qid in ("401", "402", "403"):
        Topic.objects.create(campaign=c, qid=qid, title=f"topic {qid}")
    return c


@pytest.fixture
def pool_without_text() -> tuple[str, ...]:
    """The documents ``pooled`` stores no text for: none (a module overrides this fixture)."""
    return ()


@pytest.fixture
def pooled(campaign: Any, researcher: Any, pool_without_text: tuple[str, ...]) -> Any:
    """The built pool version 1 of ``campaign``: the researcher's two runs over four documents
    of each of its three topics, every document in the pool, with a text except
    ``pool_without_text`` (``tests.test_judging_api.build_pool`` over ``THREE_TOPICS``)."""
    from judging.pools.models import PoolVersion
    from tests.test_judging_api import THREE_TOPICS, build_pool

    build_pool(campaign, researcher, THREE_TOPICS, without_text=pool_without_text)
    return PoolVersion.objects.get(campaign=campaign)


@pytest.fixture
def as_committed(django_capture_on_commit_callbacks: Any) -> Callable[[], Any]:
    """``with as_committed(): ...`` runs the block's ``transaction.on_commit`` callbacks when it
    ends, as its commit would: a test's transaction never commits, and services enqueue their
    tasks on commit (eager Celery then runs them inline). pytest-django's capture, executing."""
    return functools.partial(django_capture_on_commit_callbacks, execute=True)


def built_for_the_module(django_db_blocker: Any, build: Callable[[], None]) -> Iterator[None]:
    """``build`` run once per test module the way Django's ``setUpTestData`` does it: inside an
    outer transaction that each test's own transaction (a savepoint) nests in and is rolled back
    to, so a test that changes the data leaves the original to the next one; the outer
    transaction is rolled back after the module. Not for ``transactional_db`` tests. A module
    fixture's body: ``yield from built_for_the_module(django_db_blocker, build)``."""
    from django.db import transaction

    with django_db_blocker.unblock():
        outer = transaction.atomic()
        outer.__enter__()
        try:
            build()
        except BaseException:
            transaction.set_rollback(True)
            outer.__exit__(None, None, None)
            raise
    yield
    with django_db_blocker.unblock():
        transaction.set_rollback(True)
        outer.__exit__(None, None, None)


@pytest.fixture(scope="module")
def demo_data(django_db_setup: None, django_db_blocker: Any) -> Iterator[None]:
    """The demo campaign, built once per test module (``built_for_the_module``)."""
    from django.test import TestCase

    from judging.demo.services import demo_judge, demo_load

    def build() -> None:
        # `load_demo`'s two steps, each followed by the commit its callbacks wait for: the pool
        # is built after demo_load's, the evaluations and bias report after demo_judge's
        # (TestCase.captureOnCommitCallbacks is pytest-django's capture fixture).
        with TestCase.captureOnCommitCallbacks(execute=True):
            campaign = demo_load()
        assert campaign is not None, "the test database already had a campaign"
        with TestCase.captureOnCommitCallbacks(execute=True):
            made = demo_judge(campaign)
        assert made > 0, "pool version 1 of the demo was not built"

    yield from built_for_the_module(django_db_blocker, build)


@pytest.fixture
def demo(demo_data: None, db: None) -> Any:
    """The demo campaign after ``load_demo`` (pool v1 judged but topic 6, qrels v1 published),
    built once per module; what a test changes is rolled back after it."""
    from judging.campaigns.models import Campaign

    return Campaign.objects.get()


@pytest.fixture
def topup_seed(monkeypatch: pytest.MonkeyPatch) -> int:
    """A top-up's draw from a fixed seed (the service draws one at random): a test of one
    top-up's interval is then the same every run; how often the intervals hold is measured by
    ``benchmarks/penalty_intervals.py`` over 200 draws per cell, not by one test."""
    from types import SimpleNamespace

    import judging.assessments.topups as topups

    seed = 20261205
    monkeypatch.setattr(topups, "secrets", SimpleNamespace(randbits=lambda bits: seed))
    return seed
