"""The "Submit a run" page: a file or pasted lines through the API's workflow, the API's problems
with their lines, the run's page with its evaluation (or its progress), and whether new runs are
pooled, why, and who may change it."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from html import unescape
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.test.utils import override_settings

from judging.campaigns.models import Campaign, Document, Run, RunPooling
from judging.demo.services import demo_judge, demo_load
from judging.workflows.pools import pool_requested
from judging.workflows.qrels import qrels_imported
from judging.workflows.runs import run_submitted
from tests._page_checks import wording_problems
from tests.conftest import need_service
from tests.knobs import override_knobs
from tests.test_browser_judging import CHROMIUM, CHROMIUM_ARGS

pytestmark = pytest.mark.django_db

GOOD_RUN = (
    "401 Q0 d1 1 3.0 page-bm25\n401 Q0 d2 2 2.0 page-bm25\n401 Q0 d3 3 1.0 page-bm25\n"
    "402 Q0 d4 1 2.0 page-bm25\n402 Q0 d5 2 1.0 page-bm25\n"
)
# five problems, on lines 2, 3, 4, 6 and 7
BAD_RUN = (
    "401 Q0 d1 1 3.0 page-bm25\n"
    "401 Q0 d2 2 abc page-bm25\n"
    "401 Q0 d1 3 1.0 page-bm25\n"
    "402 Q0 d4 1\n"
    "402 Q0 d5 2 1.0 page-bm25\n"
    "401 Q0 d7 x 1.5 page-bm25 extra\n"
    "401 Q0 d8 4 nan? page-bm25\n"
)
QRELS = "401 0 d1 1\n401 0 d2 0\n401 0 d3 2\n402 0 d4 1\n402 0 d5 0\n"
PROBLEM_ITEM = re.compile(
    r'<li>(?:<span class="line">line (\d+)</span>: )?'
    r'(?:<span class="location">([^<]*)</span>: )?'
    r'<span class="message">([^<]*)</span></li>'
)


def web(user: Any, **kwargs: Any) -> Client:
    client = Client(**kwargs)
    if user is not None:
        client.force_login(user)
    return client


def submit_url(campaign: Campaign) -> str:
    return f"/campaigns/{campaign.pk}/submit/"


def _element_text(html: str, element_id: str) -> str:
    found = re.search(rf'id="{element_id}">([^<]*)<', html)
    assert found is not None, f"no #{element_id} on the page"
    return unescape(found[1])


def page_problems(html: str) -> list[dict[str, Any]]:
    """The problems the page lists, in the API's shape (message, line or location)."""
    out = []
    for line, location, message in PROBLEM_ITEM.findall(html):
        item: dict[str, Any] = {"message": unescape(message)}
        if line:
            item["line"] = int(line)
        if location:
            item["location"] = unescape(location)
        out.append(item)
    return out


@pytest.fixture
def judged(campaign: Campaign, as_committed: Any) -> Campaign:
    """The test campaign with qrels version 1: a submitted run is evaluated after commit."""
    with as_committed():
        qrels_imported(campaign=campaign, data=QRELS.encode())
    return campaign


# --- submitting ---------------------------------------------------------------------------


def test_a_researcher_submits_a_file_and_lands_on_its_page_with_its_evaluation(
    judged: Campaign, researcher: Any, as_committed: Any
) -> None:
    client = web(researcher)
    form = client.get(submit_url(judged))
    assert form.status_code == 200
    html = form.content.decode()
    assert 'name="file"' in html and 'name="paste"' in html and 'name="pooled"' not in html
    upload = SimpleUploadedFile("my.run", GOOD_RUN.encode())
    with as_committed():
        r = client.post(
            submit_url(judged),
            {"file": upload, "description": "BM25 k1=0.9", "group": "lexical-lab"},
        )
    run = Run.objects.get(campaign=judged, owner=researcher)
    assert r.status_code == 302 and r["Location"] == f"/runs/{run.pk}/"
    assert (run.name, run.description, run.group) == ("page-bm25", "BM25 k1=0.9", "lexical-lab")
    assert run.num_entries == 5 and run.topic_counts == {"401": 3, "402": 2}
    page = client.get(r["Location"]).content.decode()
    assert "Run &#x27;page-bm25&#x27; submitted: 5 entries over 2 topics." in page
    assert 'id="aggregates"' in page and "qrels version 1" in page
    assert 'http-equiv="refresh"' not in page


def test_pasted_lines_are_a_run_too_with_the_browsers_line_endings(
    judged: Campaign, researcher: Any, as_committed: Any
) -> None:
    pasted = GOOD_RUN.replace("\n", "\r\n")  # a textarea's value is sent with CRLF
    with as_committed():
        r = web(researcher).post(submit_url(judged), {"paste": pasted, "tag": "pasted-run"})
    run = Run.objects.get(campaign=judged, owner=researcher)
    assert r.status_code == 302 and r["Location"] == f"/runs/{run.pk}/"
    assert run.name == "pasted-run" and run.num_entries == 5
    assert 'id="aggregates"' in web(researcher).get(r["Location"]).content.decode()


def test_while_the_evaluation_is_on_its_way_the_run_page_says_so_and_refreshes(
    judged: Campaign, researcher: Any
) -> None:
    # no commit: the evaluation task stays in the outbox, not yet sent to a worker
    r = web(researcher).post(submit_url(judged), {"paste": GOOD_RUN})
    page = web(researcher).get(r["Location"]).content.decode()
    assert 'id="progress"' in page and 'data-status="pending"' in page
    assert "pending (not yet sent to a worker)" in page
    assert '<meta http-equiv="refresh" content="3">' in page
    assert 'id="aggregates"' not in page


def test_a_bad_run_lists_the_apis_problems_with_their_lines_and_keeps_the_form(
    campaign: Campaign, researcher: Any, api_client_for: Any
) -> None:
    api = api_client_for(researcher).post(
        f"/api/v1/campaigns/{campaign.pk}/runs/",
        {"file": SimpleUploadedFile("bad.run", BAD_RUN.encode())},
        format="multipart",
    )
    assert api.status_code == 400
    body = api.json()
    assert body["problem_count"] == body["problems_shown"] >= 4
    assert all("line" in p for p in body["problems"])

    r = web(researcher).post(
        submit_url(campaign),
        {
            "file": SimpleUploadedFile("bad.run", BAD_RUN.encode()),
            "tag": "kept-tag",
            "description": "kept <description>",
            "group": "kept-group",
        },
    )
    assert r.status_code == 400
    assert r.context["error"] == body  # the one error shape, as the API answers it
    html = r.content.decode()
    assert page_problems(html) == body["problems"]
    assert _element_text(html, "error-detail") == body["detail"]
    assert 'value="kept-tag"' in html and 'value="kept &lt;description&gt;"' in html
    assert 'value="kept-group"' in html
    assert not Run.objects.exists()

    pasted = web(researcher).post(submit_url(campaign), {"paste": BAD_RUN, "tag": "t"})
    assert pasted.status_code == 400
    pasted_html = pasted.content.decode()
    assert page_problems(pasted_html) == body["problems"]
    assert BAD_RUN.split("\n")[1] in unescape(pasted_html)  # the pasted lines stay in the box
    assert not Run.objects.exists()


@override_knobs(max_problems=2)
def test_problems_past_the_cap_are_counted_as_the_api_counts_them(
    campaign: Campaign, researcher: Any, api_client_for: Any
) -> None:
    api = (
        api_client_for(researcher)
        .post(
            f"/api/v1/campaigns/{campaign.pk}/runs/",
            {"file": SimpleUploadedFile("bad.run", BAD_RUN.encode())},
            format="multipart",
        )
        .json()
    )
    assert api["problems_shown"] == 2 and api["problem_count"] > 2
    r = web(researcher).post(
        submit_url(campaign), {"file": SimpleUploadedFile("bad.run", BAD_RUN.encode())}
    )
    assert r.status_code == 400 and r.context["error"] == api
    html = r.content.decode()
    assert page_problems(html) == api["problems"]
    more = api["problem_count"] - 2
    assert f"… and {more} more problems ({api['problem_count']} in all" in html


def test_neither_or_both_a_file_and_pasted_lines_is_a_400_that_says_so(
    campaign: Campaign, researcher: Any
) -> None:
    for data in (
        {"tag": "x"},
        {"paste": "  \n", "tag": "x"},
        {"paste": GOOD_RUN, "file": SimpleUploadedFile("my.run", GOOD_RUN.encode())},
    ):
        r = web(researcher).post(submit_url(campaign), data)
        assert r.status_code == 400
        assert "send exactly one of a run file or pasted run lines" in r.content.decode()
    assert not Run.objects.exists()


def test_a_tag_already_used_is_a_clear_409(campaign: Campaign, researcher: Any) -> None:
    assert web(researcher).post(submit_url(campaign), {"paste": GOOD_RUN}).status_code == 302
    r = web(researcher).post(submit_url(campaign), {"paste": GOOD_RUN, "group": "g2"})
    assert r.status_code == 409
    html = unescape(r.content.decode())
    assert "Not stored:" in html
    assert "you already have a run tagged 'page-bm25' in campaign 'Test campaign'" in html
    assert 'value="g2"' in html
    assert Run.objects.count() == 1


def test_too_large_a_file_or_paste_is_a_clear_413(campaign: Campaign, researcher: Any) -> None:
    with override_knobs(max_upload_bytes=50):
        r = web(researcher).post(
            submit_url(campaign), {"file": SimpleUploadedFile("big.run", GOOD_RUN.encode())}
        )
    assert r.status_code == 413
    html = unescape(r.content.decode())
    assert "Too large:" in html and "the run file is 130 bytes; the limit is 50 bytes" in html
    with override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=64):
        r = web(researcher).post(submit_url(campaign), {"paste": GOOD_RUN})
    assert r.status_code == 413
    assert "upload it as a file instead" in r.content.decode()
    assert not Run.objects.exists()


def test_the_submit_page_needs_the_csrf_token(campaign: Campaign, researcher: Any) -> None:
    r = web(researcher, enforce_csrf_checks=True).post(submit_url(campaign), {"paste": GOOD_RUN})
    assert r.status_code == 403
    assert not Run.objects.exists()


def test_an_unknown_topic_is_listed_with_the_files_other_problems_as_the_api_lists_them(
    campaign: Campaign, researcher: Any, api_client_for: Any
) -> None:
    bad = GOOD_RUN.replace("401 Q0 d2 2 2.0", "401 Q0 d2 2 two") + "999 Q0 d9 1 1.0 page-bm25\n"
    api = api_client_for(researcher).post(
        f"/api/v1/campaigns/{campaign.pk}/runs/",
        {"file": SimpleUploadedFile("bad.run", bad.encode())},
        format="multipart",
    )
    assert api.json()["problems"] == [
        {"line": 2, "message": "score 'two' is not a number"},
        {
            "line": 6,
            "message": "topic '999' is not in campaign 'Test campaign' "
            "(1 line(s), first at line 6)",
        },
    ]
    r = web(researcher).post(submit_url(campaign), {"paste": bad, "tag": "t"})
    assert r.status_code == 400
    assert page_problems(r.content.decode()) == api.json()["problems"]
    assert not Run.objects.exists()


def _submit_warnings(html: str) -> list[str]:
    found = re.search(r'id="submit-warnings">(.*?)</div>', html, re.S)
    assert found is not None, "no #submit-warnings on the page"
    return [unescape(item) for item in re.findall(r"<li>(.*?)</li>", found[1])]


def test_the_run_page_shows_what_the_run_was_stored_with_a_warning_for(
    campaign: Campaign, researcher: Any
) -> None:
    client = web(researcher)
    first = client.post(submit_url(campaign), {"paste": GOOD_RUN})
    assert first.status_code == 302
    assert 'id="submit-warnings"' not in client.get(first["Location"]).content.decode()
    for docid in ("d1", "d2", "d3", "d4"):  # d5 is not among them
        Document.objects.create(campaign=campaign, docid=docid)
    again = client.post(submit_url(campaign), {"paste": GOOD_RUN, "tag": "the-same"})
    assert again.status_code == 302
    page = client.get(again["Location"]).content.decode()
    run_id = Run.objects.get(name="page-bm25").pk
    assert _submit_warnings(page) == [
        f"same content as run 'page-bm25' (id {run_id}): the same documents and scores",
        "1 entry with a docid not among the campaign's documents (1 docid, e.g. 'd5')",
    ]
    assert "Run &#x27;the-same&#x27; submitted: 5 entries over 2 topics; 2 warnings" in page
    assert wording_problems(page) == []


# --- who may ------------------------------------------------------------------------------


def test_annotators_are_refused_and_anonymous_users_sent_to_log_in(
    campaign: Campaign, annotator: Any
) -> None:
    assert web(annotator).get(submit_url(campaign)).status_code == 403
    assert web(annotator).post(submit_url(campaign), {"paste": GOOD_RUN}).status_code == 403
    for r in (
        web(None).get(submit_url(campaign)),
        web(None).post(submit_url(campaign), {"paste": GOOD_RUN}),
    ):
        assert r.status_code == 302
        assert r["Location"] == f"/login/?next=/campaigns/{campaign.pk}/submit/"
    assert not Run.objects.exists()


def test_a_researcher_cannot_say_whether_the_run_is_pooled(
    campaign: Campaign, researcher: Any
) -> None:
    for choice in ("yes", "no"):
        r = web(researcher).post(submit_url(campaign), {"paste": GOOD_RUN, "pooled": choice})
        assert r.status_code == 403
        assert "only admins decide whether a run is pooled" in r.content.decode()
    assert not Run.objects.exists()


def test_an_admin_says_whether_the_run_is_pooled(campaign: Campaign, admin_user: Any) -> None:
    html = web(admin_user).get(submit_url(campaign)).content.decode()
    assert 'name="pooled"' in html
    for tag, choice, pooled in (("a", "no", False), ("b", "yes", True), ("c", "", True)):
        r = web(admin_user).post(
            submit_url(campaign), {"paste": GOOD_RUN, "tag": tag, "pooled": choice}
        )
        assert r.status_code == 302
        assert Run.objects.get(name=tag).pooled is pooled
    r = web(admin_user).post(submit_url(campaign), {"paste": GOOD_RUN, "pooled": "maybe"})
    assert r.status_code == 400 and "pooled" in r.content.decode()


# --- pooled, and why ----------------------------------------------------------------------


def _built_pool(campaign: Campaign, researcher: Any, as_committed: Any) -> None:
    run_submitted(campaign=campaign, owner=researcher, tag="first", results={"401": {"d1": 1.0}})
    Document.objects.create(campaign=campaign, docid="d1", title="t", text="x")
    with as_committed():
        pool_requested(campaign=campaign, strategy="depth", depth=5)
    assert campaign.pools.get().number == 1


def _submitted_page(client: Client, campaign: Campaign, tag: str) -> tuple[Run, str]:
    r = client.post(submit_url(campaign), {"paste": GOOD_RUN, "tag": tag})
    assert r.status_code == 302
    run = Run.objects.get(name=tag)
    return run, unescape(client.get(r["Location"]).content.decode())


def _pooling_text(html: str) -> str:
    return _element_text(html, "pooling-text")


def test_auto_pools_new_runs_until_the_first_pool_version_and_says_why_after(
    campaign: Campaign, researcher: Any, as_committed: Any
) -> None:
    client = web(researcher)
    assert "New runs: <strong>pooled</strong>" in client.get(submit_url(campaign)).content.decode()
    run, page = _submitted_page(client, campaign, "before")
    assert run.pooled
    assert _pooling_text(page) == "Pooled: its documents go into the campaign's next pool version."
    assert "Leave it out" not in page  # only admins change it

    _built_pool(campaign, researcher, as_committed)
    form = unescape(client.get(submit_url(campaign)).content.decode())
    assert "New runs: <strong>not pooled until an admin includes them</strong>" in form
    assert "the campaign's pooling closed with its first pool (version 1)" in form
    board = unescape(client.get(f"/campaigns/{campaign.pk}/leaderboard/").content.decode())
    assert "New runs: not pooled until an admin includes them" in board
    assert f'href="/campaigns/{campaign.pk}/submit/"' in board
    run, page = _submitted_page(client, campaign, "after")
    assert not run.pooled
    assert _pooling_text(page) == (
        "Not pooled: the campaign's pooling closed with its first pool (version 1); "
        "an admin can include it."
    )
    assert "Include it in the next pool" not in page


@pytest.mark.parametrize(
    ("setting", "pooled", "text"),
    [
        (RunPooling.OPEN, True, "Pooled: its documents go into the campaign's next pool version."),
        (
            RunPooling.CLOSED,
            False,
            "Not pooled: the campaign's pooling is closed; an admin can include it.",
        ),
    ],
)
def test_open_and_closed_hold_before_and_after_a_pool_version(
    campaign: Campaign,
    researcher: Any,
    as_committed: Any,
    setting: str,
    pooled: bool,
    text: str,
) -> None:
    Campaign.objects.filter(pk=campaign.pk).update(run_pooling=setting)
    client = web(researcher)
    run, page = _submitted_page(client, campaign, "before")
    assert run.pooled is pooled and _pooling_text(page) == text
    _built_pool(campaign, researcher, as_committed)
    run, page = _submitted_page(client, campaign, "after")
    assert run.pooled is pooled and _pooling_text(page) == text


def test_an_admin_includes_and_excludes_a_run_from_its_page(
    campaign: Campaign, researcher: Any, admin_user: Any, as_committed: Any
) -> None:
    _built_pool(campaign, researcher, as_committed)
    run, _ = _submitted_page(web(researcher), campaign, "late")
    assert not run.pooled
    admin = web(admin_user)
    page = admin.get(f"/runs/{run.pk}/").content.decode()
    assert 'id="pooled-form"' in page and "Include it in the next pool" in page
    r = admin.post(f"/runs/{run.pk}/pooled/", {"pooled": "yes"})
    assert r.status_code == 302 and r["Location"] == f"/runs/{run.pk}/"
    run.refresh_from_db()
    assert run.pooled
    page = unescape(admin.get(r["Location"]).content.decode())
    assert "The run is pooled: the next pool version includes its documents." in page
    assert "Leave it out of the next pools" in page
    admin.post(f"/runs/{run.pk}/pooled/", {"pooled": "no"})
    run.refresh_from_db()
    assert not run.pooled
    page = unescape(admin.get(f"/runs/{run.pk}/").content.decode())
    assert _pooling_text(page).startswith("Not pooled: the campaign's pooling closed")

    r = admin.post(f"/runs/{run.pk}/pooled/", {"pooled": "perhaps"})
    assert r.status_code == 302
    assert "is not yes or no; nothing changed" in unescape(
        admin.get(r["Location"]).content.decode()
    )
    run.refresh_from_db()
    assert not run.pooled


def test_only_an_admin_changes_whether_a_run_is_pooled(
    campaign: Campaign, researcher: Any, other_researcher: Any, annotator: Any, admin_user: Any
) -> None:
    run, _ = _submitted_page(web(researcher), campaign, "mine")
    url = f"/runs/{run.pk}/pooled/"
    assert web(researcher).post(url, {"pooled": "no"}).status_code == 403
    assert web(other_researcher).post(url, {"pooled": "no"}).status_code == 404
    assert web(annotator).post(url, {"pooled": "no"}).status_code == 403
    assert web(None).post(url, {"pooled": "no"}).status_code == 302
    assert web(admin_user).get(url).status_code == 405
    assert web(admin_user, enforce_csrf_checks=True).post(url, {"pooled": "no"}).status_code == 403
    run.refresh_from_db()
    assert run.pooled


def test_the_admin_edits_run_pooling_with_the_campaigns_settings(
    campaign: Campaign, admin_user: Any
) -> None:
    admin_user.is_superuser = True  # as `createsuperuser` and the demo make admins
    admin_user.save()
    page = web(admin_user).get(f"/admin/campaigns/campaign/{campaign.pk}/change/")
    html = page.content.decode()
    assert page.status_code == 200 and 'name="run_pooling"' in html
    for value, label in RunPooling.choices:
        assert f'value="{value}"' in html and label in unescape(html)


# --- in a browser ---------------------------------------------------------------------------


@pytest.fixture
def browser() -> Iterator[Any]:
    """A page of Chromium (the judging browser test's executable and arguments)."""
    need_service(
        os.path.exists(CHROMIUM),
        f"no Chromium at {CHROMIUM} (apt-get install chromium) for the browser tests",
    )
    from playwright.sync_api import sync_playwright

    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"  # the test's own ORM calls, in this thread
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        context = chromium.new_context()
        yield context.new_page()
        context.close()
        chromium.close()
    os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_in_a_browser_a_bad_paste_shows_its_lines_and_the_fixed_run_its_evaluation(
    browser: Any, live_server: Any, campaign: Campaign, make_user: Any
) -> None:
    page = browser
    qrels_imported(campaign=campaign, data=QRELS.encode())  # committed: runs are evaluated
    make_user("browser-researcher", "researcher", password="submit-me-please")
    page.goto(f"{live_server.url}/login/?next=/campaigns/{campaign.pk}/leaderboard/")
    page.fill("#id_username", "browser-researcher")
    page.fill("#id_password", "submit-me-please")
    page.click("button[type=submit]")
    page.click("#nav-submit")
    page.wait_for_selector("#submit-form")

    page.fill("#id_paste", BAD_RUN)
    page.fill("#id_tag", "browser-run")
    page.fill("#id_group", "browser-lab")
    page.click("#submit-run")
    page.wait_for_selector("#problems")
    lines = page.locator("#problems .line").all_inner_texts()
    assert lines == ["line 2", "line 3", "line 4", "line 6", "line 7"]
    assert "score 'abc' is not a number" in page.inner_text("#problems")
    assert page.input_value("#id_tag") == "browser-run"  # kept for the fix
    assert page.input_value("#id_group") == "browser-lab"
    assert not Run.objects.exists()

    page.fill("#id_paste", GOOD_RUN)  # the fix
    page.click("#submit-run")
    page.wait_for_selector("#aggregates")
    run = Run.objects.get(name="browser-run")
    assert page.url == f"{live_server.url}/runs/{run.pk}/"
    assert "Run 'browser-run' submitted: 5 entries over 2 topics." in page.inner_text("main")
    assert page.inner_text("#pooling-text").startswith("Pooled:")
    assert run.group == "browser-lab" and run.num_entries == 5


# --- the demo -------------------------------------------------------------------------------
# the API guide's example run (docs/guide/api.md: demo documents about topics 1 and 2) and its bad
# variant
README_RUN = "1 Q0 PJ2439 1 9.5 my-bm25\n1 Q0 PJ0839 2 8.1 my-bm25\n2 Q0 PJ0465 1 7.0 my-bm25\n"
README_BAD_RUN = "1 Q0 PJ2439 1 9.5 my-bad\n1 Q0 PJ0839 2 abc my-bad\n1 Q0 PJ2439 3 7.0 my-bad\n"


def test_the_readme_lines_through_the_demos_submit_page_keep_the_wording_rule(
    as_committed: Any,
) -> None:
    with as_committed():
        demo = demo_load()
    assert demo is not None
    with as_committed():
        demo_judge(demo)
    researcher = get_user_model().objects.get(username="researcher")
    client = web(researcher)
    form = client.get(submit_url(demo)).content.decode()
    assert wording_problems(form) == []
    bad = client.post(submit_url(demo), {"paste": README_BAD_RUN})
    assert bad.status_code == 400 and wording_problems(bad.content.decode()) == []
    assert page_problems(bad.content.decode()) == [
        {"message": "score 'abc' is not a number", "line": 2},
        {"message": "duplicate docid 'PJ2439' for query '1' (first on line 1)", "line": 3},
    ]
    with as_committed():
        r = client.post(submit_url(demo), {"paste": README_RUN})
    assert r.status_code == 302
    page = client.get(r["Location"]).content.decode()
    assert wording_problems(page) == [] and 'id="aggregates"' in page
    assert _pooling_text(page) == (
        "Not pooled: the campaign's pooling closed with its first pool (version 1); "
        "an admin can include it."
    )
    # the README's docids are the demo's documents, with their text: none would pool text-less
    assert set(
        Document.objects.filter(campaign=demo, docid__in=["PJ2439", "PJ0839", "PJ0465"])
        .exclude(text="")
        .values_list("docid", flat=True)
    ) == {"PJ2439", "PJ0839", "PJ0465"}


def test_a_json_run_file_is_submitted_from_the_page_with_its_tag(
    judged: Campaign, researcher: Any, as_committed: Any
) -> None:
    client = web(researcher)
    assert "pytrec_eval and ranx" in client.get(submit_url(judged)).content.decode()
    data = b'{"401": {"d1": 3, "d2": 2, "d3": 1}, "402": {"d1": 1}}'
    with as_committed():
        r = client.post(
            submit_url(judged), {"file": SimpleUploadedFile("run.json", data), "tag": "dense"}
        )
    run = Run.objects.get(campaign=judged, owner=researcher)
    assert r.status_code == 302 and r["Location"] == f"/runs/{run.pk}/"
    assert run.num_entries == 4 and run.topic_counts == {"401": 3, "402": 1}


def test_an_answer_run_is_submitted_on_the_page_too(
    judged: Campaign, researcher: Any, as_committed: Any
) -> None:
    """TREC RAG's answer format through the same form: its references are the ranked run, its
    answers are kept beside it; a bad line is named as the API names it."""
    import json

    from judging.campaigns.models import RunAnswer

    line = {
        "run_id": "page-rag",
        "topic_id": "401",
        "references": ["d1", "d2"],
        "answer": [{"text": "Sails ride on light.", "citations": [0]}],
    }
    upload = SimpleUploadedFile("answers.jsonl", (json.dumps(line) + "\n").encode())
    with as_committed():
        r = web(researcher).post(submit_url(judged), {"file": upload})
    run = Run.objects.get(campaign=judged, owner=researcher)
    assert r.status_code == 302 and run.name == "page-rag" and run.topic_counts == {"401": 2}
    assert list(RunAnswer.objects.filter(run=run).values_list("references", flat=True)) == [
        ["d1", "d2"]
    ]
    bad = SimpleUploadedFile("bad.jsonl", (json.dumps({**line, "answer": "x"}) + "\n").encode())
    refused = web(researcher).post(submit_url(judged), {"file": bad, "tag": "other"})
    assert refused.status_code == 400 and "line 1" in refused.content.decode()
