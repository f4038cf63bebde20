"""Error pages in the site's layout with a way back (400, 403, 404, 500), the admin branded as
Pooljudge with links to the campaign pages, and the run page's one pooled state with the pool
versions that took the run."""

from __future__ import annotations

import logging
import sys
from typing import Any

import pytest
from django.test import Client, RequestFactory, override_settings
from django.views import defaults

from judging.campaigns.models import Run
from judging.workflows.pools import pool_requested
from judging.workflows.runs import run_submitted

pytestmark = pytest.mark.django_db


def _client(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_a_403_is_in_the_layout_and_says_who_is_refused_and_what_to_do(
    campaign: Any, annotator: Any
) -> None:
    r = _client(annotator).get(f"/campaigns/{campaign.pk}/leaderboard/")
    assert r.status_code == 403
    page = r.content.decode()
    assert 'class="topbar"' in page and 'class="brand"' in page  # the site's layout
    assert 'id="error-page"' in page and "Error 403" in page
    assert f"as <strong>{annotator.get_username()}</strong>" in page
    assert 'id="error-home"' in page and 'href="/annotate/"' in page  # a way back, by role
    assert f"/login/?next=/campaigns/{campaign.pk}/leaderboard/" in page


@override_settings(DEBUG=False)
def test_a_404_is_in_the_layout_with_the_path_and_a_way_back(researcher: Any) -> None:
    r = _client(researcher).get("/runs/999999/")
    assert r.status_code == 404
    page = r.content.decode()
    assert 'class="topbar"' in page and "Error 404" in page
    assert "<code>/runs/999999/</code>" in page and 'id="error-home"' in page
    # signed out: told to sign in, still in the layout
    anonymous = Client().get("/no-such-page/")
    assert anonymous.status_code == 404
    assert "Sign in</a>: some pages exist only for signed-in users" in anonymous.content.decode()


def test_400_and_500_pages_render_without_a_request_context() -> None:
    # Django renders these two with no request (a failure may have happened before any was
    # built): the templates must need none
    request = RequestFactory().get("/somewhere/")
    bad = defaults.bad_request(request, Exception("bad"))
    assert bad.status_code == 400
    assert "Error 400" in bad.content.decode() and "Nothing was stored." in bad.content.decode()
    failed = defaults.server_error(request)
    text = failed.content.decode()
    assert failed.status_code == 500 and "Error 500" in text
    assert 'id="error-home"' in text and "/static/pooljudge/site.css" in text


@override_settings(DEBUG=False)
def test_api_errors_keep_the_api_error_shape(researcher: Any) -> None:
    r = _client(researcher).get("/api/v1/no-such-endpoint/")
    assert r.status_code == 404 and r.json()["error"] == "not_found"


def test_the_admin_is_branded_and_links_to_the_campaign_pages(
    campaign: Any, admin_user: Any
) -> None:
    # a staff account with every permission, as the demo's admin (a superuser)
    admin_user.is_superuser = True
    admin_user.save()
    client = _client(admin_user)
    index = client.get("/admin/").content.decode()
    assert "Pooljudge administration" in index and "Django administration" not in index
    r = client.get("/admin/campaigns/campaign/")
    assert r.status_code == 200, r.status_code
    listing = r.content.decode()
    for url in (
        f"/manage/{campaign.pk}/",
        f"/manage/{campaign.pk}/agreement/",
        f"/campaigns/{campaign.pk}/leaderboard/",
        f"/campaigns/{campaign.pk}/bias/",
    ):
        assert f'href="{url}"' in listing


def test_the_run_page_states_one_pooled_state_with_its_pool_versions(
    campaign: Any, researcher: Any, as_committed: Any
) -> None:
    run = run_submitted(
        campaign=campaign,
        owner=researcher,
        tag="bm25",
        description="BM25 baseline",
        results={"401": {"D1": 2.0, "D2": 1.0}},
    )
    client = _client(researcher)
    page = client.get(f"/runs/{run.pk}/").content.decode()
    assert "(pooled)" not in page and "(not pooled)" not in page
    assert page.count("Pooled: its documents go into the campaign") == 1
    assert "In no pool version yet." in page
    with as_committed():
        pool_requested(campaign=campaign, strategy="depth", depth=2)
    page = client.get(f"/runs/{run.pk}/").content.decode()
    assert "In pool version 1 (version 1 built " in page
    # left out later: the state says not pooled, the history keeps version 1
    Run.objects.filter(pk=run.pk).update(pooled=False)
    page = client.get(f"/runs/{run.pk}/").content.decode()
    assert page.count("Not pooled:") == 1 and "In pool version 1 (" in page


def test_a_request_refused_before_any_view_is_json_under_the_api(
    admin_user: Any, settings: Any
) -> None:
    """Too many form fields (``DATA_UPLOAD_MAX_NUMBER_FIELDS``) is refused by Django itself:
    under /api/ it answers the API's error shape, on a page the site's 400 page."""
    settings.DATA_UPLOAD_MAX_NUMBER_FIELDS = 5
    client = _client(admin_user)
    fields = {f"f{i}": "x" for i in range(20)}
    api = client.post("/api/v1/campaigns/", fields)
    assert api.status_code == 400 and api["Content-Type"] == "application/json"
    assert api.json()["error"] == "bad_request"
    page = client.post("/manage/import/", fields)
    assert page.status_code == 400 and "Error 400" in page.content.decode()


# --- the management pages (issue 29, point 13) --------------------------------------------


def _manage_urls(campaign: Any) -> list[str]:
    c = campaign.pk
    return [
        f"/manage/{c}/",
        f"/manage/{c}/agreement/",
        f"/manage/{c}/adjudicate/",
        f"/manage/{c}/quality/",
        f"/manage/{c}/pools/1/missing-text/",
        f"/manage/{c}/pools/1/missing-text.txt",
    ]


def test_a_signed_in_non_admin_gets_the_sites_403_on_a_management_page_and_no_traceback(
    campaign: Any, researcher: Any, annotator: Any, caplog: Any
) -> None:
    caplog.set_level(logging.INFO)
    for user in (researcher, annotator):
        client = _client(user)
        for url in _manage_urls(campaign):
            caplog.clear()
            r = client.get(url)
            assert r.status_code == 403, (user.username, url, r.status_code)
            page = r.content.decode()
            assert 'id="error-page"' in page and "Error 403" in page, url
            assert f"as <strong>{user.get_username()}</strong>" in page
            assert "/admin/login/" not in page and "not authorized" not in page
            # one warning naming the path, without the exception's traceback
            lines = [rec for rec in caplog.records if rec.name == "django.request"]
            assert [rec.getMessage() for rec in lines] == [f"Forbidden (Permission denied): {url}"]
            assert not any(rec.exc_info or rec.exc_text for rec in caplog.records), url
        # a POST is refused the same way (before the method is looked at)
        r = client.post(f"/manage/{campaign.pk}/quality/exclude/", {"annotator": "x"})
        assert r.status_code == 403


def test_anyone_signed_out_is_sent_to_the_sign_in_page_from_a_management_page(
    campaign: Any,
) -> None:
    for url in _manage_urls(campaign):
        r = Client().get(url)
        assert r.status_code == 302 and r["Location"] == f"/login/?next={url}", url


def test_a_server_error_keeps_its_traceback_and_a_refusal_is_logged_once_in_debug(
    campaign: Any, researcher: Any, caplog: Any
) -> None:
    from judging.core.log_filters import ClientErrorsWithoutTraceback

    keep = ClientErrorsWithoutTraceback()
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        failure = sys.exc_info()
    record = logging.LogRecord("django.request", logging.ERROR, "", 0, "x", (), failure)
    record.status_code = 500
    assert keep.filter(record) and record.exc_info == failure
    # with DEBUG on, Django's own console handler on "django" printed every request warning a
    # second time (the root's console printed it too): only the root's is left
    with override_settings(DEBUG=True):
        request_warning = logging.LogRecord("django.request", logging.WARNING, "", 0, "x", (), None)
        emitting = []
        logger: logging.Logger | None = logging.getLogger("django.request")
        while logger is not None:
            emitting += [
                h
                for h in logger.handlers
                if not type(h).__module__.startswith("_pytest") and h.filter(request_warning)
            ]
            logger = logger.parent if logger.propagate else None
        assert len(emitting) == 1, emitting
