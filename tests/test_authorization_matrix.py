"""The authorization matrix: every URL pattern of the URL conf x every role, against the table
of tests/authz_matrix.py.

Each request runs in a transaction that is rolled back, so every role meets the same dataset
(tests/authz_dataset.py, built once per module). Besides the status: a denied write leaves the
database as it was, a denied answer carries none of the object's data, and no answer to an
annotator names a run (nor one to a researcher another researcher's run).
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json
import logging
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

import pytest
from django.contrib.admin.sites import site
from django.core.cache import caches
from django.db import transaction
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from tests import authz_dataset
from tests.authz_matrix import (
    ADMIN_MODEL_PAGES,
    ADMIN_MODELS,
    MATRIX,
    ROLES,
    ROUTES,
    UNNAMED_ALLOWED,
    body,
)

# the admin's add page of documents builds a URLField form (Django 6's new default scheme)
pytestmark = pytest.mark.filterwarnings("ignore:The default scheme will be changed")

UNSAFE = {"POST", "PUT", "PATCH", "DELETE"}
RUN_COUNT = re.compile(rb'"num_runs":\s*\d')
DENIED = {401, 403, 404, 405}


@dataclass(frozen=True)
class Pattern:
    route: str
    name: str | None
    callback: Any
    kwargs: frozenset[str]


def url_patterns() -> list[Pattern]:
    """Every pattern of the URL conf, with its full route and namespaced name."""
    out: list[Pattern] = []

    def walk(patterns: list[Any], prefix: str, namespace: str | None) -> None:
        for p in patterns:
            if isinstance(p, URLResolver):
                walk(p.url_patterns, prefix + str(p.pattern), p.namespace or namespace)
            elif isinstance(p, URLPattern):
                name = p.name and (f"{namespace}:{p.name}" if namespace else p.name)
                kwargs = frozenset(p.pattern.regex.groupindex)
                out.append(Pattern(prefix + str(p.pattern), name, p.callback, kwargs))

    walk(get_resolver().url_patterns, "", None)
    return out


def is_api(pattern: Pattern) -> bool:
    return pattern.route.startswith("api/")


def drf_methods(callback: Any) -> set[str] | None:
    """The methods a DRF view answers (besides HEAD and OPTIONS); None for a Django view."""
    cls = getattr(callback, "cls", None)
    if cls is None or not hasattr(cls, "permission_classes"):
        return None
    actions = getattr(callback, "actions", None)
    names = actions.keys() if actions else [m for m in cls.http_method_names if hasattr(cls, m)]
    return {m.upper() for m in names if m not in ("head", "options")}


def model_key(model: Any) -> str:
    return f"{model._meta.app_label}_{model._meta.model_name}"


# --- the dataset and one client per role ----------------------------------------------------


@pytest.fixture(scope="module")
def dataset(django_db_setup: None, django_db_blocker: Any) -> Iterator[authz_dataset.Dataset]:
    """Built once per module inside an outer transaction rolled back at the end (as
    ``setUpTestData`` does); each test's transaction nests in it."""
    with django_db_blocker.unblock():
        outer = transaction.atomic()
        outer.__enter__()
        try:
            data = authz_dataset.build()
        except BaseException:
            transaction.set_rollback(True)
            outer.__exit__(None, None, None)
            raise
    yield data
    with django_db_blocker.unblock():
        transaction.set_rollback(True)
        outer.__exit__(None, None, None)


@pytest.fixture
def clients(dataset: authz_dataset.Dataset, db: None) -> dict[str, Client]:
    out = {}
    for role in ROLES:
        client = Client(raise_request_exception=False)
        user = dataset.users[role]
        if user is not None:
            client.force_login(user)
        out[role] = client
    return out


# --- requests -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Call:
    name: str
    method: str
    url: str
    expected: dict[str, int]
    api: bool


def _object_pk(d: authz_dataset.Dataset, what: str) -> Any:
    if what.startswith("="):
        return what[1:]
    return getattr(d, what).pk


def calls(d: authz_dataset.Dataset) -> list[Call]:
    """Every request of the matrix: each pattern's rows, on its real URL (and the format-suffix
    twin of each API route), plus HEAD wherever GET is asked."""
    out: list[Call] = []
    for pattern in url_patterns():
        if pattern.name is None:
            continue
        rows = {m: e for (n, m), e in MATRIX.items() if n == pattern.name}
        if not rows:
            continue  # test_every_url_pattern_has_a_row names it
        for url in _urls(pattern, d):
            for method, expected in rows.items():
                if "format" in pattern.kwargs and method != "GET":
                    continue  # the suffix twins: the reads
                out.append(Call(pattern.name, method, url, expected, is_api(pattern)))
                if method == "GET" and "HEAD" not in rows:
                    out.append(Call(pattern.name, "HEAD", url, expected, is_api(pattern)))
            if is_api(pattern) and "OPTIONS" not in rows:
                # anonymous: 401 where the pattern is not public; the others 200 or 403
                public = all(e["anonymous"] != 401 for e in rows.values())
                options = {role: 200 if public else 401 for role in ROLES}
                out.append(Call(pattern.name, "OPTIONS", url, options, True))
    return out


def _urls(pattern: Pattern, d: authz_dataset.Dataset) -> list[str]:
    name = pattern.name
    assert name is not None
    route = ROUTES.get(name)
    kwargs: dict[str, Any] = {
        k: _object_pk(d, v) for k, v in (route.kwargs if route else {}).items()
    }
    queries = route.queries if route else ("",)
    if "format" in pattern.kwargs:
        kwargs["format"] = "json"
    if name == "admin:app_list":
        labels = sorted({m._meta.app_label for m in site._registry})
        return [reverse(name, kwargs={"app_label": label}) for label in labels]
    if name == "admin:view_on_site":
        from django.contrib.contenttypes.models import ContentType

        ct = ContentType.objects.get_for_model(d.campaign)
        return [reverse(name, kwargs={"content_type_id": ct.pk, "object_id": d.campaign.pk})]
    arg = next((k for k in ("object_id", "id") if k in pattern.kwargs), None)
    if name.startswith("admin:") and arg:
        key = next(k for k in d.objects if name.startswith(f"admin:{k}_"))
        obj = d.objects[key]
        assert obj is not None, f"the matrix's dataset has no {key} for {name}"
        kwargs[arg] = obj.pk
    return [reverse(name, kwargs=kwargs) + query for query in queries]


def _send(client: Client, call: Call, role: str, d: authz_dataset.Dataset) -> Any:
    token = d.tokens.get(role)
    headers = {"Authorization": f"Token {token}"} if call.api and token else {}
    spec = body(call.name, call.method, role, d)
    if spec is None:
        return client.generic(call.method, call.url, headers=headers)
    kind, data = spec
    if kind == "json":
        payload = json.dumps(data)
        return client.generic(
            call.method, call.url, payload, content_type="application/json", headers=headers
        )
    assert kind in ("form", "multipart") and call.method == "POST", (call, kind)
    return client.post(call.url, data, headers=headers)


def _content(response: Any) -> bytes:
    if getattr(response, "streaming", False):
        return b"".join(response.streaming_content)
    return bytes(response.content)


def _clear_local_caches() -> None:
    """Clear the process's own caches (never a shared one, such as Redis)."""
    from django.core.cache.backends.locmem import LocMemCache

    for cache in caches.all():
        if isinstance(cache, LocMemCache):
            cache.clear()


@functools.cache
def _tables() -> list[str]:
    from django.db import connection

    names = connection.introspection.table_names()
    return sorted(name for name in names if name != "django_session")


@functools.cache
def _digests_sql() -> str:
    """One statement giving, for each of ``_tables()``, the MD5 of its rows as text, sorted."""
    from django.db import connection

    rows = "(SELECT md5(string_agg(r::text, E'\\n' ORDER BY r::text)) FROM {} r)"
    return "SELECT " + ", ".join(rows.format(connection.ops.quote_name(t)) for t in _tables())


def _fingerprint() -> str:
    """A hash of every row of every table (but sessions, which sign-ins and flashes touch), taken
    after every write. On PostgreSQL the server hashes each table's rows (as text, sorted) in one
    statement; elsewhere they are read and hashed here (raw SQL)."""
    from django.db import connection

    digest = hashlib.sha256()
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(_digests_sql())
            for table, rows in zip(_tables(), cursor.fetchone(), strict=True):
                digest.update(table.encode())
                digest.update(repr(rows).encode())
            return digest.hexdigest()
        for table in _tables():
            cursor.execute(f"SELECT * FROM {connection.ops.quote_name(table)}")
            digest.update(table.encode())
            digest.update(repr(sorted(map(repr, cursor.fetchall()))).encode())
    return digest.hexdigest()


def _to_login(response: Any) -> bool:
    location = response.get("Location", "") if response.status_code == 302 else ""
    return location.startswith(("/login/", "/admin/login/"))


# Writes answered 2xx/3xx to a role that must not have written anything of the object's.
QUIET_REFUSALS = {
    ("annotate-submit", "POST", "other_annotator"),
    ("annotate-skip", "POST", "other_annotator"),
}
SIGN_IN_OUT = {"api-token", "login", "logout", "admin:login", "admin:logout"}


def _secrets(role: str) -> list[str]:
    """What the answer to this role must not contain, whatever its status."""
    own = [
        authz_dataset.OWN_RUN_TAG,
        authz_dataset.OWN_RUN_GROUP,
        authz_dataset.OWN_RUN_DESCRIPTION,
    ]
    other = [
        authz_dataset.OTHER_RUN_TAG,
        authz_dataset.OTHER_RUN_GROUP,
        authz_dataset.OTHER_RUN_DESCRIPTION,
    ]
    if role in ("anonymous", "annotator", "other_annotator"):
        return own + other  # blind: no run, ever
    if role == "researcher":
        return other  # others' runs anonymised
    if role == "other_researcher":
        return own
    return []


def _denied_secrets(call: Call, d: authz_dataset.Dataset) -> list[str]:
    """What a denied answer must not contain: the named object's data."""
    route = ROUTES.get(call.name)
    names = set(route.kwargs.values()) if route else set()
    out = []
    if "lease" in names:
        out += [d.lease.slot.docid, "the text of"]
    if "judgment" in names:
        out += [d.judgment.docid, "the text of"]
    if "qrels" in names:
        out += [d.qrels.content_hash]
    if "run" in names:
        out += [authz_dataset.OWN_RUN_TAG, str(d.run.checksum)]
    return [s for s in out if s]


def test_every_url_pattern_has_a_row() -> None:
    """A URL pattern with no row in the matrix fails, naming it; a row for a pattern that no
    longer exists fails too, and a DRF view's methods are all in the table."""
    patterns = url_patterns()
    problems = []
    names = set()
    for p in patterns:
        if p.name is None:
            tail = p.route.split("/", 3)[-1] if p.route.startswith("admin/") else p.route
            if not any(p.route.endswith(allowed) for allowed in UNNAMED_ALLOWED) and tail:
                problems.append(f"{p.route}: the pattern has no name, so no row can name it")
            continue
        names.add(p.name)
        tested = {m for (n, m) in MATRIX if n == p.name} - {"HEAD", "OPTIONS"}
        if not tested:
            problems.append(f"{p.route} (name {p.name!r}): no row in tests/authz_matrix.py MATRIX")
        methods = drf_methods(p.callback)
        if methods is not None and methods != tested:
            problems.append(
                f"{p.route} (name {p.name!r}) answers {sorted(methods)}, the matrix has rows "
                f"for {sorted(tested)}"
            )
    for model in site._registry:
        if model_key(model) not in ADMIN_MODELS:
            problems.append(f"admin model {model_key(model)}: no entry in ADMIN_MODELS")
    for n, m in MATRIX:
        if n not in names:
            problems.append(f"row ({n!r}, {m!r}): no URL pattern has this name")
    assert not problems, "\n".join(problems)
    assert set(ADMIN_MODEL_PAGES) <= {"changelist", "add", "change", "delete", "history"}


def _quiet_refusal_state(d: authz_dataset.Dataset) -> Any:
    """What a refused write of the annotator's lease must leave as it was."""
    from judging.assessments.models import Judgment, JudgmentChange, Lease

    return (
        list(Judgment.objects.order_by("pk").values_list()),
        list(JudgmentChange.objects.order_by("pk").values_list()),
        list(Lease.objects.filter(pk=d.lease.pk).values_list()),
    )


def test_the_matrix(
    dataset: authz_dataset.Dataset, clients: dict[str, Client], record_property: Any
) -> None:
    d = dataset
    quiet_loggers = [logging.getLogger(n) for n in ("django.request", "django.security")]
    for logger in quiet_loggers:
        logger.disabled = True  # every refusal would log a traceback
    try:
        _run_matrix(d, clients, record_property)
    finally:
        for logger in quiet_loggers:
            logger.disabled = False


def _run_matrix(d: authz_dataset.Dataset, clients: dict[str, Client], record_property: Any) -> None:
    mismatches: list[str] = []
    requests = 0
    started = time.perf_counter()
    before = _fingerprint()
    for call in calls(d):
        for role in ROLES:
            client = clients[role]
            cookies = copy.deepcopy(client.cookies)  # a sign-in or -out must not carry over
            quiet = (call.name, call.method, role) in QUIET_REFUSALS
            watch = call.method in UNSAFE and call.name not in SIGN_IN_OUT
            _clear_local_caches()  # as the transaction: no throttle or rate limit carries over
            with transaction.atomic():
                # every request's transaction is rolled back: before a write the database is the
                # one fingerprinted before the matrix (a write that outlived its rollback fails
                # the next write's check as well as the last assert)
                mark = _quiet_refusal_state(d) if quiet else before if watch else None
                response = _send(client, call, role, d)
                content = _content(response)
                after = _quiet_refusal_state(d) if quiet else _fingerprint() if watch else None
                transaction.set_rollback(True)
            client.cookies = cookies
            requests += 1
            where = f"{call.method} {call.url} as {role}"
            got = response.status_code
            expected = call.expected[role]
            if call.method == "OPTIONS" and role != "anonymous" and call.expected[role] != 405:
                expected = got if got in (200, 403) else 200
            if got != expected:
                detail = ""
                if got >= 500 and response.exc_info:
                    detail = f": {response.exc_info[1]!r}"
                elif got in (400, 401, 403, 404, 409):
                    detail = f": {content[:200]!r}"
                mismatches.append(f"{where}: {got}, expected {expected}{detail}")
                continue
            refused = got in DENIED or _to_login(response) or quiet
            if refused and mark != after:
                mismatches.append(f"{where}: refused ({got}) but the database changed")
            leaks = [x for x in _secrets(role) if x.encode() in content]
            if role in ("annotator", "other_annotator") and RUN_COUNT.search(content):
                leaks.append("a run count")  # blind: not even how many runs exist
            if refused:
                leaks += [x for x in _denied_secrets(call, d) if x.encode() in content]
            if leaks:
                mismatches.append(f"{where}: {got} with {leaks} in its body")
    elapsed = time.perf_counter() - started
    record_property("requests", requests)
    record_property("seconds", round(elapsed, 2))
    print(f"authorization matrix: {requests} requests in {elapsed:.1f} s")
    assert _fingerprint() == before, "a request of the matrix was not rolled back"
    assert not mismatches, f"{len(mismatches)} of {requests} answers differ:\n" + "\n".join(
        mismatches
    )


def test_the_checks_see_a_write_and_the_secrets(
    dataset: authz_dataset.Dataset, clients: dict[str, Client]
) -> None:
    """The matrix's own checks are not blind: an allowed write changes the fingerprint, and the
    secret strings are in what their owner may read."""
    d = dataset
    call = Call("run-detail", "PATCH", f"/api/v1/runs/{d.run.pk}/", {}, True)
    with transaction.atomic():
        before = _fingerprint()
        response = _send(clients["researcher"], call, "researcher", d)
        assert response.status_code == 200
        assert _fingerprint() != before
        transaction.set_rollback(True)
    mine = _content(_send(clients["researcher"], replace(call, method="GET"), "researcher", d))
    for secret in _secrets("other_researcher") + _denied_secrets(call, d):
        assert secret.encode() in mine, secret
    lease_call = Call("lease-detail", "GET", f"/api/v1/leases/{d.lease.pk}/", {}, True)
    held = _content(_send(clients["annotator"], lease_call, "annotator", d))
    for secret in _denied_secrets(lease_call, d):
        assert secret.encode() in held, secret
