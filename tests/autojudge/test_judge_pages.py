"""The automatic judges' pages: the campaign's judges (with the admin's create and import forms),
one judge version (its prompt, runs with progress bars that refresh while one runs, grades,
cost; the admin's run, calibrate and qrels buttons), refusals for annotators and for researchers
who try to change anything, and never an endpoint's address or key on a page."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from judging.assessments.models import QrelsKind, QrelsVersion
from judging.autojudge import services
from judging.autojudge.models import AutoLabel, Judge, JudgeCalibration, JudgeKind, JudgeRun
from judging.autojudge.prompts import UMBRELA
from judging.campaigns.models import Campaign
from judging.core.models import Job
from judging.pools.models import PoolVersion
from judging.workflows.qrels import qrels_imported
from tests._page_checks import wording_problems
from tests.autojudge.judge_setup import (
    ENDPOINTS,
    FAKE_KEY,
    FAKE_URL,
    HUMAN,
    LABELS,
    Scripted,
    assert_no_secret,
    chat_judge,
    imported_judge,
)
from tests.knobs import override_knobs

pytestmark = pytest.mark.django_db


@pytest.fixture
def endpoints() -> Any:
    with override_knobs(llm_endpoints=ENDPOINTS):
        yield ENDPOINTS


def signed_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def flashes(response: Any) -> list[str]:
    return [str(m) for m in response.context["messages"]]


def text(response: Any) -> str:
    """The page's text without tags, spaces collapsed."""
    return " ".join(re.sub(r"<[^>]+>", " ", response.content.decode()).split())


def test_the_results_nav_links_the_judges_and_researchers_read_them_without_forms(
    campaign: Campaign, pooled: PoolVersion, researcher: Any
) -> None:
    judge = imported_judge(campaign)
    services.labels_import(judge=judge, data=LABELS)
    client = signed_in(researcher)
    board = client.get(f"/campaigns/{campaign.pk}/leaderboard/")
    assert f'href="/campaigns/{campaign.pk}/judges/" id="nav-judges">Automatic judges' in (
        board.content.decode()
    )
    page = client.get(f"/campaigns/{campaign.pk}/judges/")
    assert page.status_code == 200
    row = re.search(r'<tr data-judge="\d+">(.*?)</tr>', page.content.decode(), re.S)
    assert row is not None
    cells = " ".join(re.sub(r"<[^>]+>", " ", row.group(1)).split())
    # judge, version, kind, model, endpoint (none), locked, labels, runs, tokens, cost
    assert cells == (
        "umbrela-file v1 Labels imported from a file gpt-4o \u2013 locked 11 0 0 / 0 0.0000"
    )
    assert 'id="judge-create"' not in page.content.decode()  # researchers only read
    detail = client.get(f"/campaigns/{campaign.pk}/judges/{judge.pk}/")
    assert detail.status_code == 200
    assert 'id="judge-run-form"' not in detail.content.decode()
    assert "An imported judge does not run" in text(detail)
    assert wording_problems(page.content.decode()) == []
    assert wording_problems(detail.content.decode()) == []
    # a judge that never labelled anything: no share, no nan, no None
    fresh = signed_in(researcher).get(
        f"/campaigns/{campaign.pk}/judges/{imported_judge(campaign, 'fresh').pk}/"
    )
    assert wording_problems(fresh.content.decode()) == []


def test_an_admin_creates_an_imported_judge_with_its_label_file_and_sees_its_grades(
    campaign: Campaign, pooled: PoolVersion, admin_user: Any
) -> None:
    client = signed_in(admin_user)
    form = client.get(f"/campaigns/{campaign.pk}/judges/")
    html = form.content.decode()
    assert 'id="judge-create"' in html
    # the prompt box starts with UMBRELA's prompt, and the mapping with UMBRELA's 0-3 on 0-2
    # (its relevance boundary between 1 and 2 kept)
    assert f'class="judge-prompt">{UMBRELA.splitlines()[0][:40]}' in html
    assert 'name="mapping" value="0=0, 1=0, 2=1, 3=2"' in html
    response = client.post(
        f"/campaigns/{campaign.pk}/judges/",
        {
            "kind": "imported",
            "name": "umbrela-file",
            "model": "gpt-4o",
            "prompt": UMBRELA,
            "mapping": "0=0, 1=0, 2=1, 3=2",
            "format": "trec",
            "file": SimpleUploadedFile("labels.txt", LABELS),
        },
        follow=True,
    )
    judge = Judge.objects.get()
    assert response.redirect_chain == [(f"/campaigns/{campaign.pk}/judges/{judge.pk}/", 302)]
    assert flashes(response) == [
        "Judge umbrela-file v1 (Labels imported from a file, model gpt-4o) is ready. "
        "11 label(s) imported."
    ]
    # an imported judge has no prompt, and the default mapping is not stored as a parameter
    assert (judge.prompt, judge.params) == ("", {})
    grades = re.findall(
        r'<tr data-grade="(\d)"><td>[^<]*</td><td class="num">(\d+)</td>', response.content.decode()
    )
    assert grades == [("0", "6"), ("1", "3"), ("2", "2")]
    assert 'id="judge-import"' in response.content.decode()  # more labels later


def test_a_refused_creation_shows_the_form_again_with_the_field_and_what_was_typed(
    campaign: Campaign, pooled: PoolVersion, admin_user: Any
) -> None:
    client = signed_in(admin_user)
    response = client.post(
        f"/campaigns/{campaign.pk}/judges/",
        {"kind": "imported", "name": "Bad Name", "model": "gpt-4o", "description": "kept"},
    )
    assert response.status_code == 400
    error = response.context["error"]
    assert [p["location"] for p in error["problems"]] == ["name"]
    assert 'value="kept"' in response.content.decode()
    # a bad label file: nothing at all is stored, not even the judge
    bad = client.post(
        f"/campaigns/{campaign.pk}/judges/",
        {
            "kind": "imported",
            "name": "umbrela-file",
            "model": "gpt-4o",
            "format": "trec",
            "file": SimpleUploadedFile("labels.txt", b"401 0 d401-1 2\n401 0 d401-2 7\n"),
        },
    )
    assert bad.status_code == 400
    assert [p.get("line") for p in bad.context["error"]["problems"]] == [2]
    assert not Judge.objects.exists() and not AutoLabel.objects.exists()
    # an endpoint the settings do not have
    chat = client.post(
        f"/campaigns/{campaign.pk}/judges/",
        {"kind": "openai-compatible", "name": "chat", "model": "m", "endpoint": "nowhere"},
    )
    assert chat.status_code == 400
    assert [p["location"] for p in chat.context["error"]["problems"]] == ["endpoint"]


def test_an_admin_creates_a_chat_judge_with_a_configured_endpoint_by_name(
    campaign: Campaign, pooled: PoolVersion, admin_user: Any, endpoints: Any
) -> None:
    client = signed_in(admin_user)
    form = client.get(f"/campaigns/{campaign.pk}/judges/").content.decode()
    assert '<option value="local-vllm"' in form
    assert_no_secret(form.encode(), "the create form")
    response = client.post(
        f"/campaigns/{campaign.pk}/judges/",
        {
            "kind": "openai-compatible",
            "name": "umbrela-local",
            "model": "llama-3-8b",
            "endpoint": "local-vllm",
            "prompt": UMBRELA,
            "mapping": "0=0, 1=1, 2=2, 3=2",
            "price_prompt_per_1k": "0.5",
            "price_completion_per_1k": "",
        },
    )
    judge = Judge.objects.get()
    assert response.status_code == 302
    assert judge.prompt == UMBRELA  # the service's default, the same as the form's
    assert judge.params == {
        "endpoint": "local-vllm",
        "price_prompt_per_1k": 0.5,
        "mapping": {"0": 0, "1": 1, "2": 2, "3": 2},
    }


def test_running_a_judge_shows_progress_that_refreshes_until_the_run_ends(
    campaign: Campaign,
    pooled: PoolVersion,
    admin_user: Any,
    endpoints: Any,
    monkeypatch: pytest.MonkeyPatch,
    as_committed: Any,
) -> None:
    judge = chat_judge(campaign)
    client = signed_in(admin_user)
    page = f"/campaigns/{campaign.pk}/judges/{judge.pk}/"
    queued = client.post(f"{page}run/", {"pool": "1"}, follow=True)
    assert flashes(queued) == ["umbrela-local v1 is queued over pool version 1."]
    html = queued.content.decode()
    assert '<meta http-equiv="refresh" content="3">' in html
    assert re.search(r'data-state="queued">.*?<progress max="12" value="0">', html, re.S)

    monkeypatch.setitem(
        services._LABELLERS, JudgeKind.OPENAI, lambda j: Scripted(j, failing=("d402-2",))
    )
    run = JudgeRun.objects.get()
    with as_committed():  # the worker picks it up
        from judging.core.tasks import run_job

        run_job.delay(run.job_id)
    done = client.get(page)
    html = done.content.decode()
    assert 'http-equiv="refresh"' not in html
    row = re.search(rf'<tr data-run="{run.pk}" data-state="done">(.*?)</tr>', html, re.S)
    assert row is not None
    assert '<progress max="12" value="12">' in row.group(1)
    cells = re.findall(r'<td class="num">([^<]*)</td>', row.group(1))
    # done/total, cached, ok, refused, malformed, errors, tokens, cost
    assert cells == ["12 / 12", "0", "11", "0", "0", "1", "1100 / 55", "0.1100"]
    assert '<code id="judge-endpoint">local-vllm</code>' in html
    assert_no_secret(done.content, "the judge page")
    for page_html in (html, client.get(f"/campaigns/{campaign.pk}/judges/").content.decode()):
        assert wording_problems(page_html) == []


def test_no_page_carries_the_endpoint_address_or_key(
    campaign: Campaign, pooled: PoolVersion, admin_user: Any, researcher: Any, endpoints: Any
) -> None:
    judge = chat_judge(campaign)
    failed = Job.objects.create(
        kind="judge_run",
        key="judge-run:test",
        state="failed",
        error=f"URLError: {FAKE_URL} refused key {FAKE_KEY}",
    )
    JudgeRun.objects.create(judge=judge, pool=pooled, total=12, job=failed)
    for user in (admin_user, researcher):
        client = signed_in(user)
        for url in (
            f"/campaigns/{campaign.pk}/judges/",
            f"/campaigns/{campaign.pk}/judges/{judge.pk}/",
        ):
            response = client.get(url)
            assert response.status_code == 200
            assert_no_secret(response.content, url)
    shown = signed_in(researcher).get(f"/campaigns/{campaign.pk}/judges/{judge.pk}/")
    assert "URLError: *** refused key ***" in shown.content.decode()


def test_annotators_are_refused_and_researchers_may_change_nothing(
    campaign: Campaign, pooled: PoolVersion, annotator: Any, researcher: Any
) -> None:
    judge = imported_judge(campaign)
    services.labels_import(judge=judge, data=LABELS)
    base = f"/campaigns/{campaign.pk}/judges/"
    ann = signed_in(annotator)
    for url in (base, f"{base}{judge.pk}/"):
        refused = ann.get(url)
        assert refused.status_code == 403, url
        assert "umbrela-file" not in refused.content.decode()
    res = signed_in(researcher)
    posts = [
        (base, {"kind": "imported", "name": "x", "model": "m"}),
        (f"{base}import/", {"judge": str(judge.pk), "file": SimpleUploadedFile("l", LABELS)}),
        (f"{base}{judge.pk}/run/", {"pool": "1"}),
        (f"{base}{judge.pk}/calibrate/", {"human": "1"}),
        (f"{base}{judge.pk}/qrels/", {"kind": "automatic", "pool": "1"}),
    ]
    for url, data in posts:
        assert res.post(url, data).status_code == 403, url
        assert ann.post(url, data).status_code == 403, url
    assert Judge.objects.count() == 1 and not QrelsVersion.objects.exists()
    assert Client().get(base).status_code == 302  # to the login page
    # a judge of another campaign is not found under this one
    from judging.campaigns.services import campaign_create

    other = campaign_create(name="Other", scale=campaign.scale)
    assert res.get(f"/campaigns/{other.pk}/judges/{judge.pk}/").status_code == 404


def test_the_admin_builds_automatic_and_hybrid_qrels_and_errors_are_flashed(
    campaign: Campaign, pooled: PoolVersion, admin_user: Any, as_committed: Any
) -> None:
    with as_committed():
        human = qrels_imported(campaign=campaign, data=HUMAN)
    judge = imported_judge(campaign)
    client = signed_in(admin_user)
    page = f"/campaigns/{campaign.pk}/judges/{judge.pk}/"
    # nothing graded yet: the refusal says so on the judge's page
    empty = client.post(f"{page}qrels/", {"kind": "automatic", "pool": "1"}, follow=True)
    assert flashes(empty) == ["judge umbrela-file v1 has graded no document of pool v1"]
    imported = client.post(
        f"/campaigns/{campaign.pk}/judges/import/",
        {"judge": str(judge.pk), "format": "trec", "file": SimpleUploadedFile("l.txt", LABELS)},
        follow=True,
    )
    assert flashes(imported) == ["11 label(s) of umbrela-file v1 imported."]
    bad = client.post(
        f"/campaigns/{campaign.pk}/judges/import/",
        {"judge": str(judge.pk), "format": "trec", "file": SimpleUploadedFile("l.txt", b"x\n")},
        follow=True,
    )
    assert flashes(bad)[0].startswith("Nothing was stored:") and "line 1" in flashes(bad)[0]

    automatic = client.post(f"{page}qrels/", {"kind": "automatic", "pool": "1"}, follow=True)
    version = QrelsVersion.objects.get(kind=QrelsKind.AUTOMATIC)
    assert flashes(automatic) == [
        f"Qrels version {version.number} (automatic (umbrela-file v1)) stored: 11 grades; "
        "every run is evaluated against it."
    ]
    hybrid = client.post(
        f"{page}qrels/", {"kind": "hybrid", "pool": "1", "human": str(human.number)}, follow=True
    )
    mixed = QrelsVersion.objects.get(kind=QrelsKind.HYBRID)
    assert mixed.num_judgments == 11  # 3 human + 8 automatic
    assert flashes(hybrid)[0].startswith(f"Qrels version {mixed.number} (hybrid (human + ")
    listed = re.findall(r"qrels v(\d+)</a> · ([^·]+?) ·", hybrid.content.decode())
    assert listed == [
        (str(mixed.number), "hybrid (human + umbrela-file v1)"),
        (str(version.number), "automatic (umbrela-file v1)"),
    ]
    # a hybrid on an automatic version, and a pool the campaign does not have: flashed
    wrong = client.post(
        f"{page}qrels/", {"kind": "hybrid", "human": str(version.number)}, follow=True
    )
    assert flashes(wrong) == [f"human: qrels v{version.number} is automatic, not human"]
    nowhere = client.post(f"{page}qrels/", {"kind": "automatic", "pool": "7"}, follow=True)
    assert flashes(nowhere) == ["pool: the campaign has no pool version 7"]


def calibrating(monkeypatch: pytest.MonkeyPatch) -> None:
    """The embedding judge scores with the API tests' LinearScorer, as if the extra were
    installed."""
    import judging.autojudge.embedding as embedding
    from tests.autojudge.test_judge_api import LinearScorer

    monkeypatch.setattr(embedding, "EmbeddingScorer", LinearScorer)
    monkeypatch.setattr(embedding, "available", lambda: True)


def test_calibrating_from_the_page_queues_it_and_the_page_follows_it_to_the_new_version(
    campaign: Campaign,
    pooled: PoolVersion,
    admin_user: Any,
    monkeypatch: pytest.MonkeyPatch,
    as_committed: Any,
) -> None:
    calibrating(monkeypatch)
    with as_committed():
        human = qrels_imported(
            campaign=campaign, data=b"401 0 d401-1 2\n401 0 d401-2 0\n401 0 d401-3 1\n"
        )
    judge = services.judge_create(
        campaign=campaign, name="minilm", kind=JudgeKind.EMBEDDING, model="all-MiniLM-L6-v2"
    )
    client = signed_in(admin_user)
    page = f"/campaigns/{campaign.pk}/judges/{judge.pk}/"
    form = client.get(page).content.decode()
    assert 'id="judge-calibrate-form"' in form and 'id="judge-run-form"' in form
    assert "Not calibrated from this version yet." in text(client.get(page))
    with as_committed():  # the task runs when the request's work commits: after this block
        response = client.post(
            f"{page}calibrate/", {"human": str(human.number), "pool": "1"}, follow=True
        )
        calibration = JudgeCalibration.objects.get()
        assert response.redirect_chain == [(page, 302)]
        assert flashes(response) == [
            f"Calibration #{calibration.pk} of minilm v1 on qrels version 1 over pool version 1 "
            "queued: this page shows the new version when it is made."
        ]
        queued = response.content.decode()
        assert f'data-calibration="{calibration.pk}" data-state="queued"' in queued
        assert '<meta http-equiv="refresh" content="3">' in queued
        assert "A calibration is queued or running: this page refreshes by itself." in queued
    new = Judge.objects.get(name="minilm", version=2)
    body = client.get(page).content.decode()
    assert f'data-calibration="{calibration.pk}" data-state="done"' in body
    assert f'<a href="/campaigns/{campaign.pk}/judges/{new.pk}/">minilm v2</a>' in body
    assert 'http-equiv="refresh"' not in body
    assert "calibrated on 3 document(s) of pool v1 judged in qrels v1" in text(
        client.get(f"/campaigns/{campaign.pk}/judges/{new.pk}/")
    )
    missing = client.post(f"{page}calibrate/", {"pool": "1"}, follow=True)
    assert flashes(missing) == ["human: choose one"]
    assert JudgeCalibration.objects.count() == 1


def test_a_calibration_that_failed_shows_why_on_the_judge_page(
    campaign: Campaign,
    pooled: PoolVersion,
    admin_user: Any,
    researcher: Any,
    monkeypatch: pytest.MonkeyPatch,
    as_committed: Any,
) -> None:
    calibrating(monkeypatch)
    with as_committed():  # a single grade: nothing to cut between
        human = qrels_imported(campaign=campaign, data=b"401 0 d401-1 1\n401 0 d401-3 1\n")
    judge = services.judge_create(
        campaign=campaign, name="minilm", kind=JudgeKind.EMBEDDING, model="all-MiniLM-L6-v2"
    )
    page = f"/campaigns/{campaign.pk}/judges/{judge.pk}/"
    with as_committed():
        signed_in(admin_user).post(f"{page}calibrate/", {"human": str(human.number)})
    calibration = JudgeCalibration.objects.get()
    shown = signed_in(researcher).get(page)
    assert f'data-calibration="{calibration.pk}" data-state="failed"' in shown.content.decode()
    assert (
        "Conflict: qrels v1 grades 2 pool document(s) with text, with fewer than two different "
        "grades: nothing to calibrate on"
    ) in text(shown)
    assert Judge.objects.filter(name="minilm").count() == 1
    assert 'id="judge-calibrate-form"' not in shown.content.decode()  # researchers: no forms


@pytest.mark.django_db(transaction=True)
def test_without_a_broker_the_calibration_has_run_when_the_page_comes_back(
    campaign: Campaign, pooled: PoolVersion, admin_user: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # tasks run inline (no broker) as each service's transaction commits: the flash says what
    # the calibration made
    calibrating(monkeypatch)
    human = qrels_imported(
        campaign=campaign, data=b"401 0 d401-1 2\n401 0 d401-2 0\n401 0 d401-3 1\n"
    )
    judge = services.judge_create(
        campaign=campaign, name="minilm", kind=JudgeKind.EMBEDDING, model="all-MiniLM-L6-v2"
    )
    page = f"/campaigns/{campaign.pk}/judges/{judge.pk}/"
    response = signed_in(admin_user).post(
        f"{page}calibrate/", {"human": str(human.number)}, follow=True
    )
    calibration = JudgeCalibration.objects.get()
    assert flashes(response) == [
        f"Calibration #{calibration.pk} of minilm v1 on qrels version {human.number} over pool "
        "version 1 is done: minilm v2."
    ]
