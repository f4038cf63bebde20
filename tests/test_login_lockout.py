"""Nobody can lock another person out by sending wrong passwords for their username.

Failures are counted per (username, address), per address and per username
(judging/core/login_throttle.py). An address that has signed in to an account before is held only
by its own failures for that account; the username's lock (for every other address) grows with
each lock instead of lasting a flat window.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from rest_framework.test import APIClient

from judging.core import login_throttle
from tests.knobs import set_knobs

pytestmark = pytest.mark.django_db

PASSWORD = "pw-for-tests-only"
A, B, C = "10.1.0.1", "10.2.0.2", "10.3.0.3"


def _login(client: Client, username: str, password: str, ip: str) -> Any:
    return client.post("/login/", {"username": username, "password": password}, REMOTE_ADDR=ip)


def _admin_login(client: Client, username: str, password: str, ip: str) -> Any:
    return client.post(
        "/admin/login/?next=/admin/",
        {"username": username, "password": password},
        REMOTE_ADDR=ip,
    )


def _token(username: str, password: str, ip: str) -> Any:
    return APIClient().post(
        "/api/v1/auth/token/", {"username": username, "password": password}, REMOTE_ADDR=ip
    )


def _known(client: Client, username: str, ip: str) -> None:
    """The account signs in from ``ip`` once (so the address is known), then signs out."""
    assert _login(client, username, PASSWORD, ip).status_code == 302
    client.logout()


def _throttled(response: Any) -> bool:
    return response.status_code == 429 and int(response["Retry-After"]) > 0


def _clock(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """A settable clock for the throttle: ``t[0] += 61`` moves it on."""
    t = [login_throttle.now()]
    monkeypatch.setattr(login_throttle, "now", lambda: t[0])
    return t


# --- the known address -------------------------------------------------------------------------


def test_ten_wrong_passwords_from_one_address_leave_the_admin_a_known_address(
    client: Client, admin_user: Any
) -> None:
    # the defaults: no settings changed
    _known(client, "alice-admin", B)
    for _ in range(10):
        assert _login(client, "alice-admin", "wrong", A).status_code == 200
    # the attacker's address is throttled, the right password too
    from_a = _login(client, "alice-admin", PASSWORD, A)
    assert _throttled(from_a)
    assert "Too many failed sign-in attempts" in from_a.content.decode()
    # an address the admin never signed in from waits for the username's lock
    assert _throttled(_login(client, "alice-admin", PASSWORD, C))
    # the admin's own address signs in
    assert _login(client, "alice-admin", PASSWORD, B).status_code == 302


def test_the_admin_login_page_lets_a_known_address_in(client: Client, admin_user: Any) -> None:
    _known(client, "alice-admin", B)
    for _ in range(10):
        _admin_login(client, "alice-admin", "wrong", A)
    assert _throttled(_admin_login(client, "alice-admin", PASSWORD, A))
    assert _admin_login(client, "alice-admin", PASSWORD, B).status_code == 302


def test_the_token_endpoint_lets_a_known_address_in(researcher: Any) -> None:
    assert _token("rita-researcher", PASSWORD, B).status_code == 200  # B is known now
    for _ in range(10):
        assert _token("rita-researcher", "wrong", A).status_code == 400
    refused = _token("rita-researcher", PASSWORD, A)
    assert _throttled(refused) and refused.json()["error"] == "throttled"
    assert _throttled(_token("rita-researcher", PASSWORD, C))
    assert "token" in _token("rita-researcher", PASSWORD, B).json()


def test_a_known_address_is_still_held_by_its_own_failures(
    client: Client, researcher: Any, settings: Any
) -> None:
    set_knobs(settings, login_max_failures_per_user_and_ip=4, login_max_failures_per_user=100)
    _known(client, "rita-researcher", B)
    for _ in range(4):
        _login(client, "rita-researcher", "wrong", B)
    assert _throttled(_login(client, "rita-researcher", PASSWORD, B))


def test_a_success_clears_its_addresss_failures_not_the_usernames(
    client: Client, researcher: Any, settings: Any
) -> None:
    set_knobs(settings, login_max_failures_per_user_and_ip=3, login_max_failures_per_user=4)
    for _ in range(2):
        _login(client, "rita-researcher", "wrong", A)
    _known(client, "rita-researcher", A)
    for _ in range(2):  # 2 + 2 = 4 for the username: locked for other addresses
        assert _login(client, "rita-researcher", "wrong", A).status_code == 200
    assert _login(client, "rita-researcher", PASSWORD, A).status_code == 302
    client.logout()
    assert _throttled(_login(client, "rita-researcher", PASSWORD, C))


def test_a_known_address_is_forgotten_after_its_time(
    client: Client, researcher: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    set_knobs(settings, login_max_failures_per_user=2, login_known_address_seconds=3600)
    t = _clock(monkeypatch)
    _known(client, "rita-researcher", B)
    t[0] += 3601
    for _ in range(2):
        _login(client, "rita-researcher", "wrong", A)
    assert _throttled(_login(client, "rita-researcher", PASSWORD, B))


# --- the address's limit -----------------------------------------------------------------------


def test_the_address_limit_holds_across_many_accounts(
    client: Client, researcher: Any, annotator: Any, settings: Any
) -> None:
    set_knobs(settings, login_max_failures_per_ip=5)
    _known(client, "ann-annotator", A)  # a colleague behind the same address
    for i in range(5):
        assert _login(client, f"guess-{i}", "wrong", A).status_code == 200
    # any other username from that address waits, the right password too
    assert _throttled(_login(client, "guess-99", "wrong", A))
    assert _throttled(_login(client, "rita-researcher", PASSWORD, A))
    # the same account from another address signs in
    assert _login(client, "rita-researcher", PASSWORD, B).status_code == 302
    client.logout()
    # and so does an account that has signed in from this address before
    assert _login(client, "ann-annotator", PASSWORD, A).status_code == 302


def test_the_address_limit_ends_with_its_window(
    client: Client, researcher: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    set_knobs(settings, login_max_failures_per_ip=3, login_window_seconds=120)
    t = _clock(monkeypatch)
    for i in range(3):
        _login(client, f"guess-{i}", "wrong", A)
    locked = _login(client, "rita-researcher", PASSWORD, A)
    assert _throttled(locked) and int(locked["Retry-After"]) <= 120
    t[0] += 121
    assert _login(client, "rita-researcher", PASSWORD, A).status_code == 302


# --- the username's lock grows -----------------------------------------------------------------


def _lock_username(client: Client, limit: int, first_address: int) -> int:
    """``limit`` failures for rita from as many new addresses; the lock's Retry-After."""
    for i in range(limit):
        assert _login(
            client, "rita-researcher", "wrong", f"10.9.{first_address}.{i}"
        ).status_code == (200)
    refused = _login(client, "rita-researcher", PASSWORD, "10.8.0.1")
    assert _throttled(refused)
    return int(refused["Retry-After"])


def test_the_usernames_lock_doubles_with_each_lock_up_to_its_cap(
    client: Client, researcher: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    set_knobs(
        settings, login_max_failures_per_user=3, login_lock_seconds=60, login_max_lock_seconds=200
    )
    t = _clock(monkeypatch)
    waits = []
    for n in range(4):
        waits.append(_lock_username(client, 3, n))
        t[0] += waits[-1] + 1
    assert waits == [60, 120, 200, 200]
    # after the last lock the right password from an unknown address signs in again
    assert _login(client, "rita-researcher", PASSWORD, "10.8.0.1").status_code == 302


def test_the_doubling_starts_over_after_a_quiet_window(
    client: Client, researcher: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    set_knobs(
        settings, login_max_failures_per_user=2, login_lock_seconds=60, login_window_seconds=900
    )
    t = _clock(monkeypatch)
    assert _lock_username(client, 2, 0) == 60
    t[0] += 61
    assert _lock_username(client, 2, 1) == 120
    t[0] += 121 + 900  # a window with no failure after the lock ended
    assert _lock_username(client, 2, 2) == 60


def test_failures_during_a_lock_from_a_known_address_do_not_lengthen_it(
    client: Client, researcher: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    set_knobs(settings, login_max_failures_per_user=2, login_lock_seconds=60)
    t = _clock(monkeypatch)
    _known(client, "rita-researcher", B)
    assert _lock_username(client, 2, 0) == 60
    for _ in range(4):  # the owner mistypes from their own address meanwhile
        assert _login(client, "rita-researcher", "wrong", B).status_code == 200
    t[0] += 61
    assert _login(client, "rita-researcher", PASSWORD, C).status_code == 302
