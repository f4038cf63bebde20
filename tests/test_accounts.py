"""Accounts and roles: ``manage.py create_user``, the admin's users page and the one-time link
where an invited person sets their password (judging/core/accounts.py, password_links.py)."""

from __future__ import annotations

import datetime as dt
import io
import re
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.test import Client

from judging.core import password_links
from judging.core.accounts import account_create, account_roles_set
from judging.core.errors import Conflict, InvalidInput
from judging.core.roles import is_admin, is_annotator, is_researcher, roles_of
from tests.knobs import set_knobs

pytestmark = pytest.mark.django_db

User = get_user_model()
GOOD = "a-long-and-unusual-passphrase-41"
LINK = re.compile(r"(?:https?://[^/\s]+)?(/accounts/set-password/[^/\s]+/[^/\s]+/)")


def _create(*args: str, stdin: str | None = None) -> str:
    out = io.StringIO()
    kwargs: dict[str, Any] = {"stdout": out}
    if stdin is not None:
        kwargs["stdin"] = io.StringIO(stdin)
    call_command("create_user", *args, **kwargs)
    return out.getvalue()


def _signs_in(username: str, password: str) -> bool:
    response = Client().post("/login/", {"username": username, "password": password})
    return response.status_code == 302


# --- manage.py create_user ------------------------------------------------------------------


def test_create_user_makes_a_researcher_with_a_password_from_stdin() -> None:
    out = _create(
        "rita",
        "--role",
        "researcher",
        "--email",
        "rita@example.org",
        "--password-stdin",
        stdin=GOOD + "\n",
    )
    user = User.objects.get(username="rita")
    assert "researcher 'rita'" in out
    assert roles_of(user) == ["researcher"] and user.email == "rita@example.org"
    assert _signs_in("rita", GOOD)


def test_create_user_admin_is_staff_and_superuser() -> None:
    _create("alice", "--role", "admin", "--password-stdin", stdin=GOOD)
    user = User.objects.get(username="alice")
    assert user.is_staff and user.is_superuser and is_admin(user)
    assert not is_annotator(user)
    assert (
        Client().post("/admin/login/?next=/admin/", {"username": "alice", "password": GOOD})[
            "Location"
        ]
        == "/admin/"
    )


def test_create_user_takes_several_roles() -> None:
    _create("ada", "--role", "admin", "--role", "annotator", "--password-stdin", stdin=GOOD)
    assert roles_of(User.objects.get(username="ada")) == ["admin", "annotator"]


def test_create_user_asks_for_the_password_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    typed = iter([GOOD, GOOD])
    monkeypatch.setattr("getpass.getpass", lambda prompt="": next(typed))
    monkeypatch.setattr("sys.stdin.isatty", lambda: True, raising=False)
    _create("ann", "--role", "annotator")
    assert is_annotator(User.objects.get(username="ann"))
    assert _signs_in("ann", GOOD)


def test_create_user_refuses_passwords_that_differ(monkeypatch: pytest.MonkeyPatch) -> None:
    typed = iter([GOOD, GOOD + "x"])
    monkeypatch.setattr("getpass.getpass", lambda prompt="": next(typed))
    monkeypatch.setattr("sys.stdin.isatty", lambda: True, raising=False)
    with pytest.raises(CommandError, match="do not match"):
        _create("ann", "--role", "annotator")
    assert not User.objects.filter(username="ann").exists()


def test_create_user_without_a_terminal_says_how_to_pass_the_password(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("sys.stdin.isatty", lambda: False, raising=False)
    with pytest.raises(CommandError, match="--password-stdin"):
        _create("ann", "--role", "annotator")
    assert not User.objects.filter(username="ann").exists()


def test_a_weak_password_is_refused_by_the_validators_and_nothing_is_created() -> None:
    with pytest.raises(CommandError) as exc:
        _create("rita", "--role", "researcher", "--password-stdin", stdin="rita12\n")
    assert "password" in str(exc.value) and "too short" in str(exc.value)
    assert not User.objects.filter(username="rita").exists()


def test_an_existing_name_is_a_clear_error(researcher: Any) -> None:
    with pytest.raises(CommandError, match="already exists"):
        _create("Rita-Researcher", "--role", "annotator", "--password-stdin", stdin=GOOD)
    assert User.objects.filter(username__iexact="rita-researcher").count() == 1
    assert not is_annotator(User.objects.get(username="rita-researcher"))


def test_an_unknown_role_is_a_clear_error() -> None:
    with pytest.raises(CommandError, match="invalid choice: 'boss'"):
        _create("rita", "--role", "boss", "--password-stdin", stdin=GOOD)
    with pytest.raises(InvalidInput) as exc:
        account_create(username="rita", roles=["boss"], password=GOOD)
    assert "unknown role 'boss'" in str(exc.value.problems[0])
    assert "admin, researcher, annotator" in exc.value.problems[0].message
    assert not User.objects.filter(username="rita").exists()


def test_a_bad_username_or_email_names_the_field() -> None:
    with pytest.raises(InvalidInput) as exc:
        account_create(username="a b/c", roles=["annotator"], email="not-an-address")
    assert {p.location for p in exc.value.problems} == {"username", "email"}
    with pytest.raises(InvalidInput) as exc:
        account_create(username="ann", roles=[])
    assert exc.value.problems[0].location == "roles"
    assert not User.objects.exists()


def test_create_user_invite_prints_a_link_that_sets_the_password(settings: Any) -> None:
    set_knobs(settings, site_url="https://judge.example.org")
    out = _create("nina", "--role", "annotator", "--invite")
    user = User.objects.get(username="nina")
    assert not user.has_usable_password()
    match = LINK.search(out)
    assert match and "https://judge.example.org/accounts/set-password/" in out, out
    client = Client()
    page = client.get(match.group(1))
    assert page.status_code == 200 and "nina" in page.content.decode()
    done = client.post(match.group(1), {"password1": GOOD, "password2": GOOD})
    assert done.status_code == 302 and done["Location"] == "/login/"
    assert _signs_in("nina", GOOD)


# --- the link ---------------------------------------------------------------------------------


def _link_for(username: str) -> str:
    link = password_links.password_link_issue(account=User.objects.get(username=username))
    return link.path()


def test_a_used_link_is_refused_with_a_clear_message(annotator: Any) -> None:
    url = _link_for("ann-annotator")
    assert Client().post(url, {"password1": GOOD, "password2": GOOD}).status_code == 302
    for again in (Client().get(url), Client().post(url, {"password1": GOOD, "password2": GOOD})):
        assert again.status_code == 400
        assert "used already" in again.content.decode()
    assert _signs_in("ann-annotator", GOOD)


def test_an_expired_link_is_refused_with_a_clear_message(
    annotator: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    set_knobs(settings, password_link_seconds=3600)
    url = _link_for("ann-annotator")
    later = dt.datetime.now() + dt.timedelta(seconds=3601)
    monkeypatch.setattr(password_links, "now", lambda: later)
    response = Client().post(url, {"password1": GOOD, "password2": GOOD})
    assert response.status_code == 400
    assert "expired" in response.content.decode()
    assert not _signs_in("ann-annotator", GOOD)


@pytest.mark.parametrize("forge", ["uid", "token", "garbage"])
def test_a_forged_link_is_refused_with_a_clear_message(
    annotator: Any, researcher: Any, forge: str
) -> None:
    url = _link_for("ann-annotator")
    _, _, _, uid, token, _ = url.split("/")
    other_uid = _link_for("rita-researcher").split("/")[3]
    forged = {
        "uid": f"/accounts/set-password/{other_uid}/{token}/",
        "token": f"/accounts/set-password/{uid}/{token[:-1]}{'0' if token[-1] != '0' else '1'}/",
        "garbage": "/accounts/set-password/zzzz/not-a-token/",
    }[forge]
    response = Client().post(forged, {"password1": GOOD, "password2": GOOD})
    assert response.status_code == 400
    assert "not valid" in response.content.decode()
    assert not _signs_in("ann-annotator", GOOD) and not _signs_in("rita-researcher", GOOD)


def test_the_link_page_checks_the_password_and_keeps_the_link(annotator: Any) -> None:
    url = _link_for("ann-annotator")
    client = Client()
    differ = client.post(url, {"password1": GOOD, "password2": GOOD + "x"})
    assert differ.status_code == 400 and "do not match" in differ.content.decode()
    weak = client.post(url, {"password1": "12345678", "password2": "12345678"})
    assert weak.status_code == 400 and "too common" in weak.content.decode()
    # the link still works after a refused password
    assert client.post(url, {"password1": GOOD, "password2": GOOD}).status_code == 302


def test_a_deactivated_account_cannot_use_its_link(annotator: Any, admin_user: Any) -> None:
    from judging.core.accounts import account_active_set

    url = _link_for("ann-annotator")
    account_active_set(account=annotator, active=False, by=admin_user)
    response = Client().post(url, {"password1": GOOD, "password2": GOOD})
    assert response.status_code == 400


# --- the admin's users page -------------------------------------------------------------------


@pytest.fixture
def admin_client(client: Client, admin_user: Any) -> Client:
    client.force_login(admin_user)
    return client


def test_the_users_page_lists_everybody_with_their_roles(
    admin_client: Client, researcher: Any, annotator: Any
) -> None:
    page = admin_client.get("/manage/users/").content.decode()
    for name in ("alice-admin", "rita-researcher", "ann-annotator"):
        assert name in page
    row = re.search(r'<tr id="user-rita-researcher">.*?</tr>', page, re.S)
    assert row and 'value="researcher" checked' in row.group(0)
    assert 'value="annotator" checked' not in row.group(0)


def test_an_admin_creates_an_account_and_gets_its_link(admin_client: Client) -> None:
    response = admin_client.post(
        "/manage/users/", {"username": "nina", "email": "", "role": ["annotator"]}
    )
    assert response.status_code == 200
    html = response.content.decode()
    match = LINK.search(html)
    assert match, html
    assert is_annotator(User.objects.get(username="nina"))
    assert Client().post(match.group(1), {"password1": GOOD, "password2": GOOD}).status_code == 302
    assert _signs_in("nina", GOOD)


def test_the_users_page_names_what_is_wrong_and_creates_nothing(
    admin_client: Client, researcher: Any
) -> None:
    response = admin_client.post("/manage/users/", {"username": "rita-researcher", "role": []})
    assert response.status_code == 400
    html = response.content.decode()
    assert "choose at least one role" in html
    response = admin_client.post(
        "/manage/users/", {"username": "RITA-researcher", "role": ["annotator"]}
    )
    assert response.status_code == 409 and "already exists" in response.content.decode()
    assert User.objects.count() == 2


def test_an_admin_changes_a_role(admin_client: Client, researcher: Any) -> None:
    response = admin_client.post(
        f"/manage/users/{researcher.pk}/roles/", {"role": ["annotator"]}, follow=True
    )
    assert "rita-researcher: annotator" in response.content.decode()
    user = User.objects.get(pk=researcher.pk)
    assert is_annotator(user) and not is_researcher(user)


def test_an_admin_deactivates_and_reactivates_an_account(
    admin_client: Client, researcher: Any, api_client_for: Any
) -> None:
    session = Client()
    assert _signs_in("rita-researcher", "pw-for-tests-only")
    session.force_login(researcher)
    api = api_client_for(researcher)
    admin_client.post(f"/manage/users/{researcher.pk}/active/", {"active": "0"})
    assert not User.objects.get(pk=researcher.pk).is_active
    assert not _signs_in("rita-researcher", "pw-for-tests-only")
    assert session.get("/").status_code == 302  # signed out of every session
    assert api.get("/api/v1/me/").status_code == 401  # and its API token refused
    admin_client.post(f"/manage/users/{researcher.pk}/active/", {"active": "1"})
    assert _signs_in("rita-researcher", "pw-for-tests-only")


def test_an_admin_issues_a_password_link_for_an_existing_account(
    admin_client: Client, researcher: Any
) -> None:
    response = admin_client.post(f"/manage/users/{researcher.pk}/link/")
    assert response.status_code == 200
    match = LINK.search(response.content.decode())
    assert match
    assert Client().post(match.group(1), {"password1": GOOD, "password2": GOOD}).status_code == 302
    assert _signs_in("rita-researcher", GOOD)
    assert not _signs_in("rita-researcher", "pw-for-tests-only")


def test_an_admin_cannot_demote_or_deactivate_themselves(
    admin_client: Client, admin_user: Any
) -> None:
    response = admin_client.post(
        f"/manage/users/{admin_user.pk}/roles/", {"role": ["researcher"]}, follow=True
    )
    assert "your own admin role" in response.content.decode()
    response = admin_client.post(
        f"/manage/users/{admin_user.pk}/active/", {"active": "0"}, follow=True
    )
    assert "your own account" in response.content.decode()
    user = User.objects.get(pk=admin_user.pk)
    assert user.is_active and is_admin(user)
    with pytest.raises(Conflict):
        account_roles_set(account=admin_user, roles=["annotator"], by=admin_user)


@pytest.mark.parametrize("who", ["annotator", "researcher"])
@pytest.mark.parametrize(
    "method,url",
    [
        ("get", "/manage/users/"),
        ("post", "/manage/users/"),
        ("post", "/manage/users/{pk}/roles/"),
        ("post", "/manage/users/{pk}/active/"),
        ("post", "/manage/users/{pk}/link/"),
    ],
)
def test_the_users_page_is_for_admins_only(
    client: Client, make_user: Any, admin_user: Any, who: str, method: str, url: str
) -> None:
    user = make_user(f"someone-{who}", who)
    target = url.format(pk=admin_user.pk)
    data = {"username": "intruder", "role": ["admin"], "active": "0"}
    anonymous = getattr(Client(), method)(target, data)
    assert anonymous.status_code == 302 and anonymous["Location"].startswith("/login/")
    client.force_login(user)
    assert getattr(client, method)(target, data).status_code == 403
    admin = User.objects.get(pk=admin_user.pk)
    assert admin.is_active and is_admin(admin)
    assert not User.objects.filter(username="intruder").exists()
    assert not is_admin(User.objects.get(pk=user.pk))


def test_the_account_pages_carry_a_strict_policy(admin_client: Client, annotator: Any) -> None:
    from tests.test_auth_hardening import _assert_strict

    _assert_strict(admin_client.get("/manage/users/"))
    _assert_strict(admin_client.post(f"/manage/users/{annotator.pk}/link/"))
    _assert_strict(Client().get(_link_for("ann-annotator")))
    _assert_strict(Client().get("/accounts/set-password/zzzz/not-a-token/"))
