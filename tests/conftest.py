"""Shared fixtures: users per role, API clients, a small campaign, service requirements."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests._shared_data import shared_data_path

REQUIRE_SERVICES = os.environ.get("REQUIRE_SERVICES") == "1"


def need_service(available: bool, reason: str) -> None:
    """Skip without the service; under REQUIRE_SERVICES=1 (CI) its absence is a failure."""
    if available:
        return
    if REQUIRE_SERVICES:
        pytest.fail(f"REQUIRE_SERVICES=1 but {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The shared real TREC data folder (for every test, metrics too); skipped when absent."""
    return shared_data_path()


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
def as_committed(django_capture_on_commit_callbacks: Any) -> Callable[[], Any]:
    """``with as_committed(): ...`` runs the block's ``transaction.on_commit`` callbacks when it
    ends, as its commit would: a test's transaction never commits, and services enqueue their
    tasks on commit (eager Celery then runs them inline). pytest-django's capture, executing."""
    return functools.partial(django_capture_on_commit_callbacks, execute=True)


@pytest.fixture
def on_commit_now() -> Any:
    """Run ``transaction.on_commit`` callbacks at once: a test's transaction never commits, and
    the service enqueues its tasks on commit (eager Celery then runs them inline)."""
    from unittest import mock

    def run(func: Callable[[], Any], using: str | None = None, robust: bool = False) -> None:
        func()

    with mock.patch("django.db.transaction.on_commit", side_effect=run):
        yield
