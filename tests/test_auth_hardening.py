"""Authentication hardening: sign-in throttling, token expiry and revocation, the secret-key
guard, the password validators, the Content-Security-Policy and safe download file names."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.test import Client
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from judging.core.downloads import content_disposition
from judging.core.secret_key import secret_key_problem
from judging.workflows.runs import run_submitted
from tests.knobs import set_knobs
from tests.test_api_errors import assert_shape
from tests.test_settings_env import PRODUCTION_ENV, _manage

pytestmark = [pytest.mark.django_db, pytest.mark.follow_ups]

ROOT = Path(__file__).resolve().parents[1]
PASSWORD = "pw-for-tests-only"


def _login(client: Client, username: str, password: str, ip: str = "10.0.0.1") -> Any:
    return client.post("/login/", {"username": username, "password": password}, REMOTE_ADDR=ip)


def _token(client: APIClient, username: str, password: str, ip: str = "10.0.0.1") -> Any:
    return client.post(
        "/api/v1/auth/token/", {"username": username, "password": password}, REMOTE_ADDR=ip
    )


# --- throttling of the login form and the token endpoint ------------------------------------


def test_two_hundred_wrong_passwords_lock_the_login_form_even_for_the_right_one(
    client: Client, researcher: Any
) -> None:
    # the defaults: no settings changed
    for _ in range(200):
        assert _login(client, "rita-researcher", "wrong").status_code in (200, 429)
    response = _login(client, "rita-researcher", PASSWORD)
    assert response.status_code == 429
    assert int(response["Retry-After"]) > 0
    page = response.content.decode()
    assert "Too many failed sign-in attempts" in page
    assert "try again in" in page
    assert "_auth_user_id" not in client.session


def test_the_login_form_is_throttled_per_username_across_addresses(
    client: Client, researcher: Any, settings: Any
) -> None:
    set_knobs(settings, login_max_failures_per_user=3)
    for i in range(3):
        assert _login(client, "Rita-Researcher ", "wrong", ip=f"10.0.1.{i}").status_code == 200
    assert _login(client, "rita-researcher", PASSWORD, ip="10.0.9.9").status_code == 429


def test_the_login_form_is_throttled_per_address_across_usernames(
    client: Client, researcher: Any, settings: Any
) -> None:
    set_knobs(settings, login_max_failures_per_ip=4)
    for i in range(4):
        assert _login(client, f"guess-{i}", "wrong", ip="10.0.2.1").status_code == 200
    assert _login(client, "rita-researcher", PASSWORD, ip="10.0.2.1").status_code == 429
    # the same user from another address is not locked out
    assert _login(client, "rita-researcher", PASSWORD, ip="10.0.2.2").status_code == 302


def test_a_success_clears_its_addresss_failures(
    client: Client, researcher: Any, settings: Any
) -> None:
    set_knobs(settings, login_max_failures_per_user_and_ip=3)
    for _ in range(2):
        _login(client, "rita-researcher", "wrong")
    assert _login(client, "rita-researcher", PASSWORD).status_code == 302
    client.logout()
    for _ in range(2):
        assert _login(client, "rita-researcher", "wrong").status_code == 200
    assert _login(client, "rita-researcher", PASSWORD).status_code == 302


def test_the_lock_ends_when_its_window_ends(
    client: Client, researcher: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from judging.core import login_throttle

    # the (username, address) pair's lock lasts the window; the username's lock is shorter
    set_knobs(settings, login_max_failures_per_user_and_ip=2, login_window_seconds=600)
    for _ in range(2):
        _login(client, "rita-researcher", "wrong")
    locked = _login(client, "rita-researcher", PASSWORD)
    assert locked.status_code == 429 and 60 < int(locked["Retry-After"]) <= 600
    later = login_throttle.now() + 601
    monkeypatch.setattr(login_throttle, "now", lambda: later)
    assert _login(client, "rita-researcher", PASSWORD).status_code == 302


def test_the_token_endpoint_is_throttled_in_the_one_error_shape(
    researcher: Any, settings: Any
) -> None:
    set_knobs(settings, login_max_failures_per_user=5)
    client = APIClient()
    for _ in range(5):
        assert_shape(_token(client, "rita-researcher", "wrong"), 400, "invalid_input")
    response = _token(client, "rita-researcher", PASSWORD)
    body = assert_shape(response, 429, "throttled")
    assert "too many failed sign-in attempts" in body["detail"].lower()
    assert int(response["Retry-After"]) > 0
    assert "token" not in body


def test_failures_on_the_form_and_the_token_endpoint_count_together(
    client: Client, researcher: Any, settings: Any
) -> None:
    set_knobs(settings, login_max_failures_per_user=4)
    for _ in range(2):
        _login(client, "rita-researcher", "wrong")
        _token(APIClient(), "rita-researcher", "wrong")
    assert _login(client, "rita-researcher", PASSWORD).status_code == 429


def test_the_admin_login_is_throttled_too(client: Client, admin_user: Any, settings: Any) -> None:
    set_knobs(settings, login_max_failures_per_user=3)
    for _ in range(3):
        client.post(
            "/admin/login/?next=/admin/",
            {"username": "alice-admin", "password": "wrong"},
            REMOTE_ADDR="10.0.3.1",
        )
    response = client.post(
        "/admin/login/?next=/admin/",
        {"username": "alice-admin", "password": PASSWORD},
        REMOTE_ADDR="10.0.3.1",
    )
    assert response.status_code == 429 and int(response["Retry-After"]) > 0


def test_the_address_behind_trusted_proxies_is_the_forwarded_one(
    client: Client, researcher: Any, settings: Any
) -> None:
    set_knobs(settings, login_max_failures_per_ip=2, trusted_proxy_hops=1)
    for i in range(2):
        client.post(
            "/login/",
            {"username": f"guess-{i}", "password": "x"},
            REMOTE_ADDR="172.16.0.1",
            HTTP_X_FORWARDED_FOR="1.2.3.4",
        )
    # another client behind the same proxy is not locked out
    other = client.post(
        "/login/",
        {"username": "rita-researcher", "password": PASSWORD},
        REMOTE_ADDR="172.16.0.1",
        HTTP_X_FORWARDED_FOR="5.6.7.8",
    )
    assert other.status_code == 302


# --- token expiry and revocation ------------------------------------------------------------


def test_an_expired_token_is_401_with_a_clear_detail(researcher: Any, settings: Any) -> None:
    token = Token.objects.create(user=researcher)
    Token.objects.filter(pk=token.pk).update(
        created=timezone.now()
        - dt.timedelta(seconds=settings.POOLJUDGE_SECURITY.token_ttl_seconds + 1)
    )
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    body = assert_shape(client.get("/api/v1/me/"), 401, "not_authenticated")
    assert "expired" in body["detail"] and "/api/v1/auth/token/" in body["detail"]


def test_a_new_token_replaces_an_expired_one_and_says_when_it_expires(
    researcher: Any, settings: Any
) -> None:
    old = Token.objects.create(user=researcher)
    Token.objects.filter(pk=old.pk).update(
        created=timezone.now()
        - dt.timedelta(seconds=settings.POOLJUDGE_SECURITY.token_ttl_seconds + 1)
    )
    response = _token(APIClient(), "rita-researcher", PASSWORD)
    assert response.status_code == 200
    body = response.json()
    assert body["token"] != old.key
    expires = dt.datetime.fromisoformat(body["expires_at"])
    ttl = dt.timedelta(seconds=settings.POOLJUDGE_SECURITY.token_ttl_seconds)
    assert abs(expires - (timezone.now() + ttl)) < dt.timedelta(seconds=30)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {body['token']}")
    assert client.get("/api/v1/me/").status_code == 200


def test_a_valid_token_is_returned_again_until_it_expires(researcher: Any) -> None:
    first = _token(APIClient(), "rita-researcher", PASSWORD).json()
    second = _token(APIClient(), "rita-researcher", PASSWORD).json()
    assert first == second


def test_a_user_revokes_their_own_token(api_client_for: Any, researcher: Any) -> None:
    client = api_client_for(researcher)
    assert client.get("/api/v1/me/").status_code == 200
    response = client.delete("/api/v1/auth/token/")
    assert response.status_code == 204
    assert not Token.objects.filter(user=researcher).exists()
    assert_shape(client.get("/api/v1/me/"), 401, "not_authenticated")


def test_revoking_needs_a_login() -> None:
    assert_shape(APIClient().delete("/api/v1/auth/token/"), 401, "not_authenticated")


def test_an_admin_revokes_a_users_token(
    client: Client, api_client_for: Any, researcher: Any, admin_user: Any
) -> None:
    api = api_client_for(researcher)
    assert Token.objects.filter(user=researcher).exists()
    admin_user.is_superuser = True
    admin_user.save()
    client.force_login(admin_user)
    # DRF's token admin: a token is addressed by its user
    response = client.post(f"/admin/authtoken/tokenproxy/{researcher.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert_shape(api.get("/api/v1/me/"), 401, "not_authenticated")


def test_an_admin_revokes_tokens_from_the_user_list(
    client: Client, api_client_for: Any, researcher: Any, admin_user: Any
) -> None:
    api = api_client_for(researcher)
    admin_user.is_superuser = True
    admin_user.save()
    client.force_login(admin_user)
    response = client.post(
        "/admin/auth/user/",
        {"action": "revoke_api_tokens", "_selected_action": [researcher.pk]},
    )
    assert response.status_code == 302
    assert_shape(api.get("/api/v1/me/"), 401, "not_authenticated")


# --- the secret key ---------------------------------------------------------------------------


def _example_secret() -> str:
    for line in (ROOT / ".env.example").read_text().splitlines():
        if line.startswith("DJANGO_SECRET_KEY="):
            return line.partition("=")[2]
    raise AssertionError("no DJANGO_SECRET_KEY in .env.example")


def test_the_placeholder_of_the_example_environment_is_refused_at_start_up() -> None:
    result = _manage("check", env={**PRODUCTION_ENV, "DJANGO_SECRET_KEY": _example_secret()})
    assert result.returncode != 0
    assert "DJANGO_SECRET_KEY" in result.stderr and "placeholder" in result.stderr


@pytest.mark.parametrize(
    "key",
    [
        "change-me-to-a-long-random-string-of-at-least-fifty-characters-please",
        "django-insecure-local-only-pooljudge-demo-key-never-use-in-production",
        "a" * 60,
        "short-but-random-Zx81",
    ],
)
def test_the_deploy_check_fails_on_a_placeholder_or_weak_secret(key: str) -> None:
    result = _manage(
        "check", "--deploy", env={**PRODUCTION_ENV, "DJANGO_DEBUG": "1", "DJANGO_SECRET_KEY": key}
    )
    assert result.returncode != 0, result.stdout + result.stderr
    assert "pooljudge.E001" in result.stderr + result.stdout


def test_known_placeholders_and_weak_keys_are_named() -> None:
    assert secret_key_problem(_example_secret())
    assert secret_key_problem("changeme" * 8)
    assert secret_key_problem("x" * 64)
    assert secret_key_problem("too-short")
    assert secret_key_problem("build-only-" + "0f3a9c" * 11) is None
    assert secret_key_problem(PRODUCTION_ENV["DJANGO_SECRET_KEY"]) is None


# --- passwords --------------------------------------------------------------------------------


def test_an_entirely_numeric_password_is_refused() -> None:
    with pytest.raises(ValidationError, match="entirely numeric"):
        validate_password("730194628157")


# --- Content-Security-Policy -----------------------------------------------------------------

CSP_DIRECTIVES = {
    "default-src": "'self'",
    "object-src": "'none'",
    "frame-ancestors": "'none'",
    "base-uri": "'self'",
    "form-action": "'self'",
}


def _policy(response: Any) -> dict[str, str]:
    header = response["Content-Security-Policy"]
    return {
        part.split()[0]: " ".join(part.split()[1:]) for part in header.split(";") if part.strip()
    }


INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>", re.IGNORECASE)
INLINE_HANDLER = re.compile(r"<[^>]+\son[a-z]+\s*=", re.IGNORECASE)
INLINE_STYLE = re.compile(r"<[^>]+\sstyle\s*=|<style", re.IGNORECASE)


def _assert_strict(response: Any, *, styles: bool = True) -> None:
    policy = _policy(response)
    for directive, value in CSP_DIRECTIVES.items():
        assert policy[directive] == value, (directive, policy)
    assert "'unsafe-inline'" not in policy.get("script-src", "")
    assert "'unsafe-eval'" not in policy.get("script-src", "")
    html = response.content.decode()
    assert not INLINE_SCRIPT.search(html), INLINE_SCRIPT.search(html)
    assert not INLINE_HANDLER.search(html), INLINE_HANDLER.search(html)
    if styles:
        assert not INLINE_STYLE.search(html), INLINE_STYLE.search(html)


def test_every_page_carries_a_strict_policy_and_no_inline_script(
    client: Client, demo: Any, admin_user: Any, api_client_for: Any
) -> None:
    from judging.campaigns.models import Run

    _assert_strict(client.get("/login/"))
    _assert_strict(client.get("/admin/login/"), styles=False)
    admin_user.is_superuser = True
    admin_user.save()
    client.force_login(admin_user)
    run = Run.objects.filter(campaign=demo).first()
    assert run is not None
    for url in (
        "/",
        f"/campaigns/{demo.pk}/leaderboard/",
        f"/campaigns/{demo.pk}/compare/",
        f"/campaigns/{demo.pk}/bias/",
        f"/runs/{run.pk}/",
        f"/manage/{demo.pk}/",
        f"/manage/{demo.pk}/agreement/",
        "/api/v1/docs/",
    ):
        response = client.get(url)
        assert response.status_code == 200, url
        _assert_strict(response)
    # the admin's own templates: no inline script (Django 5.2's admin has none)
    for url in (
        "/admin/",
        "/admin/campaigns/campaign/",
        f"/admin/auth/user/{admin_user.pk}/change/",
    ):
        response = client.get(url)
        assert response.status_code == 200, url
        _assert_strict(response, styles=False)
    api = api_client_for(admin_user).get("/api/v1/me/")
    assert _policy(api)["default-src"] == "'self'"


def test_the_swagger_ui_initialiser_is_a_script_of_our_origin(
    client: Client, admin_user: Any
) -> None:
    client.force_login(admin_user)
    html = client.get("/api/v1/docs/").content.decode()
    sources = re.findall(r'<script[^>]*\bsrc="([^"]+)"', html)
    assert sources and all(src.startswith("/") for src in sources), sources
    init = [src for src in sources if "script" in src and "static" not in src]
    assert init, sources
    assert client.get(init[0].replace("&amp;", "&")).status_code == 200


def test_the_judging_pages_carry_no_inline_script(
    client: Client, demo: Any, make_user: Any
) -> None:
    from judging.assessments.queue import lease_next

    annotator = make_user("csp-annotator", "annotator")
    client.force_login(annotator)
    _assert_strict(client.get("/annotate/"))
    _assert_strict(client.get(f"/annotate/{demo.pk}/"))
    lease_next(campaign=demo, annotator=annotator)
    _assert_strict(client.get(f"/annotate/{demo.pk}/"))


# --- Content-Disposition ---------------------------------------------------------------------


def test_content_disposition_has_an_ascii_fallback_and_the_utf8_name() -> None:
    header = content_disposition('a"quote.run')
    assert header == "attachment; filename=\"a_quote.run\"; filename*=UTF-8''a%22quote.run"
    header = content_disposition("résumé\r\nX-Evil: 1;.txt")
    fallback = re.search(r'filename="([^"]*)"', header)
    assert fallback and fallback.group(1) == "resume_X-Evil_1_.txt"
    assert "\r" not in header and "\n" not in header
    encoded = header.split("filename*=UTF-8''", 1)[1]
    assert unquote(encoded) == "résumé X-Evil: 1;.txt"
    assert content_disposition("\x00\x01") == (
        "attachment; filename=\"download\"; filename*=UTF-8''download"
    )


def test_a_run_download_names_the_file_safely(
    api_client_for: Any, campaign: Any, researcher: Any
) -> None:
    run = run_submitted(
        campaign=campaign, owner=researcher, tag='a"quote', results={"401": {"d1": 1.0}}
    )
    response = api_client_for(researcher).get(f"/api/v1/runs/{run.pk}/download/")
    assert response.status_code == 200
    assert response["Content-Disposition"] == (
        "attachment; filename=\"a_quote.run\"; filename*=UTF-8''a%22quote.run"
    )


def test_every_download_builds_its_header_with_the_one_helper() -> None:
    offenders = []
    for path in (ROOT / "judging").rglob("*.py"):
        if path.name == "downloads.py":
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if "filename=" in line or (
                "Content-Disposition" in line and "content_disposition(" not in line
            ):
                offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert offenders == []


# --- the counters are shared by every web worker ------------------------------------------------


def test_production_counts_sign_ins_in_the_brokers_redis_unless_told_otherwise() -> None:
    show = "from django.conf import settings; print(settings.CACHES['default']['BACKEND'])"
    result = _manage("shell", "-c", show, env=PRODUCTION_ENV)
    assert result.stdout.strip().splitlines()[-1] == "django.core.cache.backends.redis.RedisCache"
    result = _manage("shell", "-c", show, env={**PRODUCTION_ENV, "POOLJUDGE_CACHE_URL": "db"})
    assert result.stdout.strip().splitlines()[-1] == "django.core.cache.backends.db.DatabaseCache"


def test_with_redis_a_lock_counted_by_one_worker_holds_in_another(
    client: Client, researcher: Any, settings: Any
) -> None:
    import os

    import redis

    from judging.env import cache_config
    from tests.conftest import need_service

    url = os.environ.get("CELERY_BROKER_URL", "")
    need_service(url.startswith("redis://"), "no Redis (CELERY_BROKER_URL) for the shared cache")
    settings.CACHES = {"default": {**cache_config(url), "KEY_PREFIX": "pooljudge-test-throttle"}}
    set_knobs(settings, login_max_failures_per_user=3)
    try:
        for _ in range(3):
            _login(client, "rita-researcher", "wrong")
        # another worker: a new connection to the same Redis, nothing shared in memory
        other = redis.Redis.from_url(url)
        # the (username, address) pair, the username, the address
        assert len(other.keys("pooljudge-test-throttle:*")) == 3
        assert _login(client, "rita-researcher", PASSWORD).status_code == 429
    finally:
        other = redis.Redis.from_url(url)
        for key in other.keys("pooljudge-test-throttle:*"):
            other.delete(key)


def test_a_new_password_revokes_the_users_token(api_client_for: Any, researcher: Any) -> None:
    api = api_client_for(researcher)
    researcher.first_name = "Rita"
    researcher.save()  # other changes keep the token
    assert api.get("/api/v1/me/").status_code == 200
    researcher.set_password("a-new-and-long-password-9")
    researcher.save()
    assert_shape(api.get("/api/v1/me/"), 401, "not_authenticated")
