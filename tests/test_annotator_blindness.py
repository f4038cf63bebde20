"""Annotators are blind to systems and to each other, on every page and in every API answer.

A campaign seeded with distinctive strings: run tags, groups, run descriptions, scores, the
researcher-facing description ("RESEARCHER-ONLY-DESCRIPTION"), and a second annotator (overlap:
every item is judged twice) whose name, grades and time spent are distinctive too, and an
automatic judge whose grades are suggested to the annotators (half the slots hidden until
committed), with a distinctive name, model and description. Then:

(a) with the Django test client, every URL pattern of judging/api/urls.py and judging/web/urls.py
    is asked for with GET by the annotator, with concrete ids (theirs, and the other
    annotator's lease and judgment); every 200 is checked, every other answer must be a 403 or
    404 (or the staff pages' redirect to the admin's login). The answers of the judging calls
    an annotator makes (a lease, a judgment, an undo, a change, a renewal) are checked too.
(b) in Debian's Chromium (Playwright, live server), the annotator signs in, judges a couple of
    items from the keyboard, and every same-origin link they can follow from the home page is
    visited and its text and HTML checked.

The check: no run tag, group or description, no distinctive score, no run count (``num_runs``,
``runs``) nor any JSON key about runs, ranks or scores, no researcher description, no other
annotator's name or time, nothing naming the automatic judge, and on the pages of judged items
only the annotator's own grade.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin, urlparse

import pytest
from django.contrib.auth import get_user_model
from django.test import Client, TestCase
from django.urls import URLPattern, URLResolver, reverse

from tests import test_browser_judging
from tests.authz_matrix import ROUTES

PASSWORD = "blind-pw-for-tests-only"
DESCRIPTION = "RESEARCHER-ONLY-DESCRIPTION: one run (zz-tag-novel) is not pooled"
GUIDELINES = "Assessor guidelines: judge the document by the topic's narrative."
RUN_TAGS = ("zz-tag-lexical", "zz-tag-neural", "zz-tag-novel")
RUN_GROUP = "zz-group-lab"
RUN_DESCRIPTION = "zz-run-description"
OTHER_ANNOTATOR = "zz-other-assessor"
JUDGE_NAME, JUDGE_MODEL = "zz-judge-file", "zz-judge-model"  # an automatic judge: results too
OTHER_SECONDS = 1234.5  # the other annotator's active time on each judgment
# the automatic judge whose grades are suggested to the annotators: never named to them
JUDGE_SECRETS = ("zz-judge-name", "zz-judge-model", "zz-judge-description")
SCORE = re.compile(r"(?<![\d.])424[0-9]\.4242")  # the runs' scores: 4242.4242 - rank
SCALE = [
    {"grade": 0, "label": "Off topic"},
    {"grade": 1, "label": "Partly"},
    {"grade": 2, "label": "Spot on"},
]
OWN_GRADE, OTHER_GRADE = 0, 2
# No JSON key an annotator reads may be about systems, their ranks or scores, or annotators
# (their own name, in /api/v1/me/, is fine: the other one's is checked as a string).
BANNED_KEY = re.compile(r"(^|_)(runs?|rank\w*|scores?|tag|annotators?)($|_)")
BANNED_WORDS = re.compile(r"\b(num_runs|runs?|ranks?|ranked|scores?|leaderboard|pooled)\b", re.I)
CSRF = re.compile(r'name="csrfmiddlewaretoken" value="[^"]*"')

# Answered to everybody alike and holding no data: the API's schema and its docs page (they
# name every field, "num_runs" included, as documentation), and the API root (it names the
# endpoints, "runs" among them; the annotator is refused each of them). Their text is still
# checked for the seeded strings, not for the words and keys.
DOCUMENTATION = {"api-schema", "api-docs", "api-root"}


@dataclass
class Seeded:
    campaign: Any
    annotator: Any
    other: Any
    admin: Any
    ids: dict[str, int]  # dataset object kind -> pk, as tests.authz_matrix.ROUTES names them
    other_ids: dict[str, int]  # the other annotator's lease and judgment


def _jsonl(rows: list[dict[str, Any]]) -> bytes:
    return "\n".join(json.dumps(r) for r in rows).encode()


def seed() -> Seeded:
    """The campaign (built with the services, tasks run as their commit would run them)."""
    from judging.assessments.models import Judgment, Lease
    from judging.assessments.queue import judgment_record, lease_next
    from judging.autojudge.services import Label, judge_create, pool_pairs, store_labels
    from judging.autojudge.suggestions import suggestions_configure
    from judging.campaigns.services import campaign_create, topics_import
    from judging.core.roles import ANNOTATOR, RESEARCHER, grant
    from judging.pools.models import PoolVersion
    from judging.workflows.documents import documents_imported
    from judging.workflows.passages import chunking_made
    from judging.workflows.pools import pool_requested
    from judging.workflows.qrels import qrels_published
    from judging.workflows.runs import run_submitted

    User = get_user_model()
    admin = User.objects.create_user("blind-admin", password=PASSWORD)
    admin.is_staff = admin.is_superuser = True
    admin.save()
    researcher = User.objects.create_user("blind-researcher", password=PASSWORD)
    grant(researcher, RESEARCHER)
    annotator = User.objects.create_user("blind-annotator", password=PASSWORD)
    other = User.objects.create_user(OTHER_ANNOTATOR, password=PASSWORD)
    for user in (annotator, other):
        grant(user, ANNOTATOR)
    qids = ("401", "402")
    with TestCase.captureOnCommitCallbacks(execute=True):
        campaign = campaign_create(
            name="Blind campaign",
            description=DESCRIPTION,
            guidelines=GUIDELINES,
            scale=SCALE,
            pool_depth=3,
            overlap=1.0,
            created_by=admin,
        )
        topics_import(
            campaign=campaign,
            data=_jsonl(
                [
                    {"qid": q, "title": f"wind farms {q}", "description": "d", "narrative": "n"}
                    for q in qids
                ]
            ),
            fmt="jsonl",
            source="blind-topics",
        )
        documents_imported(
            campaign=campaign,
            data=_jsonl(
                [
                    {"docid": f"{q}-D{i}", "title": f"Wind news {i}", "text": f"Turbines {q} {i}."}
                    for q in qids
                    for i in range(1, 7)
                ]
            ),
            fmt="jsonl",
            source="blind-docs",
        )
        orders = {
            RUN_TAGS[0]: [1, 2, 3, 4],
            RUN_TAGS[1]: [4, 3, 2, 1],
            RUN_TAGS[2]: [5, 6, 1, 2],
        }
        for tag, order in orders.items():
            run_submitted(
                campaign=campaign,
                owner=researcher,
                tag=tag,
                group=RUN_GROUP,
                description=RUN_DESCRIPTION,
                pooled=tag != RUN_TAGS[2],
                results={
                    q: {f"{q}-D{d}": 4242.4242 - rank for rank, d in enumerate(order)} for q in qids
                },
            )
        pool_requested(campaign=campaign, strategy="depth", depth=3, requested_by=admin)
    pool = PoolVersion.objects.get(campaign=campaign)
    assert pool.number == 1 and pool.num_to_judge == 8, (pool.state, pool.num_to_judge)
    # suggestions on: an imported judge graded every pooled document; half the slots hidden
    auto = judge_create(
        campaign=campaign,
        name=JUDGE_SECRETS[0],
        kind="imported",
        model=JUDGE_SECRETS[1],
        description=JUDGE_SECRETS[2],
    )
    store_labels(auto, [Label(qid, docid, 1) for qid, docid in pool_pairs(pool)])
    suggestions_configure(campaign=campaign, judge=auto, hidden_share=0.5, by=admin)

    def judge(user: Any, grade: int, seconds: float) -> bool:
        lease = lease_next(campaign=campaign, annotator=user)
        if lease is None:
            return False
        judgment_record(lease_id=lease.pk, annotator=user, grade=grade, active_seconds=seconds)
        return True

    with TestCase.captureOnCommitCallbacks(execute=True):
        for _ in range(3):  # side by side: each is the primary assessor of one topic
            assert judge(annotator, OWN_GRADE, 12.0)
            assert judge(other, OTHER_GRADE, OTHER_SECONDS)
        while judge(other, OTHER_GRADE, OTHER_SECONDS):
            pass
        qrels, _ = qrels_published(campaign=campaign, note="blind v1", created_by=admin)
    lease = lease_next(campaign=campaign, annotator=annotator)  # held by the annotator
    assert lease is not None
    mine = Judgment.objects.filter(annotator=annotator)
    # the annotator's first judgment is of an item the other annotator judged too
    both = mine.filter(docid__in=Judgment.objects.filter(annotator=other).values("docid")).order_by(
        "pk"
    )
    assert both.count() == 3, "every item of the annotator's is judged by the other one too"
    other_lease = Lease.objects.filter(annotator=other).order_by("pk").first()
    assert other_lease is not None
    auto_judge, embedding_judge, judge_run = _judges(campaign, pool)
    from tests.authz_dataset import _audit_and_sample, _calibration

    audit, sample = _audit_and_sample(auto_judge, qrels, pool)
    calibration = _calibration(embedding_judge, qrels, pool)
    chunking = chunking_made(campaign=campaign, name="para", spec="paragraph", created_by=admin)
    return Seeded(
        campaign=campaign,
        annotator=annotator,
        other=other,
        admin=admin,
        ids={
            "campaign": campaign.pk,
            "run": campaign.runs.order_by("pk").first().pk,  # type: ignore[union-attr]
            "pool": pool.pk,
            "qrels": qrels.pk,
            "lease": lease.pk,
            "judgment": both.first().pk,  # type: ignore[union-attr]
            "judge": auto_judge.pk,
            "embedding_judge": embedding_judge.pk,
            "judge_run": judge_run.pk,
            "audit": audit.pk,
            "sample": sample.pk,
            "calibration": calibration.pk,
            "account": other.pk,  # the users page's actions, on another account (admins only)
            "chunking": chunking.pk,
        },
        other_ids={
            "lease": other_lease.pk,
            "judgment": Judgment.objects.filter(annotator=other).order_by("pk").first().pk,  # type: ignore[union-attr]
        },
    )


def _judges(campaign: Any, pool: Any) -> tuple[Any, Any, Any]:
    """An imported judge with labels over the pool, an embedding judge and a run of it."""
    from judging.autojudge import services
    from judging.autojudge.models import JudgeKind, JudgeRun

    judge = services.judge_create(
        campaign=campaign, name=JUDGE_NAME, kind=JudgeKind.IMPORTED, model=JUDGE_MODEL
    )
    pairs = services.pool_pairs(pool)
    services.store_labels(judge, [services.Label(q, d, 1) for q, d in pairs])
    embedding = services.judge_create(
        campaign=campaign, name=f"{JUDGE_NAME}-minilm", kind=JudgeKind.EMBEDDING, model=JUDGE_MODEL
    )
    from judging.core.models import Job

    done = Job.objects.create(kind="judge_run", key="judge-run:test", state="done")
    run = JudgeRun.objects.create(judge=embedding, pool=pool, job=done, total=len(pairs))
    return judge, embedding, run


def leaks(text: str, *, documentation: bool = False) -> list[str]:
    """What of the seeded secrets ``text`` (an answer's body) shows."""
    text = CSRF.sub("", text)
    secrets = (
        *RUN_TAGS,
        RUN_GROUP,
        RUN_DESCRIPTION,
        "RESEARCHER-ONLY",
        JUDGE_NAME,
        JUDGE_MODEL,
        *JUDGE_SECRETS,
    )
    found = [s for s in secrets if s in text]
    found += [f"score {m}" for m in SCORE.findall(text)]
    if OTHER_ANNOTATOR in text:
        found.append("the other annotator's name")
    if re.search(rf"(?<![\d.]){OTHER_SECONDS}(?!\d)", text):
        found.append("the other annotator's time")
    if not documentation:
        found += [f"word {w!r}" for w in BANNED_WORDS.findall(_visible_text(text))]
    return found


def _visible_text(html: str) -> str:
    """The text of a page or JSON answer as a reader sees it (tags, scripts and styles out)."""
    html = re.sub(r"<(script|style)\b.*?</\1>", " ", html, flags=re.S | re.I)
    return re.sub(r"<[^>]+>", " ", html)


def banned_keys(value: Any, path: str = "") -> list[str]:
    """JSON keys about runs, ranks, scores or annotators, anywhere in ``value``."""
    out: list[str] = []
    if isinstance(value, dict):
        for key, inner in value.items():
            if BANNED_KEY.search(str(key)):
                out.append(f"{path}.{key}")
            out += banned_keys(inner, f"{path}.{key}")
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            out += banned_keys(inner, f"{path}[{i}]")
    return out


def own_grade_only(html: str) -> None:
    """On a page of a judged item, the grade shown as given is the annotator's own."""
    current = re.findall(r'id="current-grade">([^<]*)<', html)
    assert current in ([], ["Off topic"]), current
    pressed = re.findall(r'value="(\d+)" class="grade current"', html)
    assert pressed in ([], [str(OWN_GRADE)]), pressed


def answer_text(response: Any) -> str:
    if getattr(response, "streaming", False):
        return b"".join(response.streaming_content).decode()
    return response.content.decode()


def check_answer(name: str, url: str, response: Any) -> None:
    text = answer_text(response)
    documentation = name in DOCUMENTATION
    found = leaks(text, documentation=documentation)
    assert not found, (name, url, found)
    if response.get("Content-Type", "").startswith("application/json") and not documentation:
        keys = banned_keys(json.loads(text)) if text else []
        assert not keys, (name, url, keys)
    if "text/html" in response.get("Content-Type", ""):
        own_grade_only(text)


# --- (a) every URL pattern, with the Django test client --------------------------------------


def patterns() -> list[tuple[str, str, frozenset[str]]]:
    """(name, module, argument names) of every named pattern of the API's and the pages' URL
    confs, router routes included."""
    from judging.api import urls as api_urls
    from judging.web import urls as web_urls

    out: list[tuple[str, str, frozenset[str]]] = []

    def walk(items: list[Any], where: str) -> None:
        for p in items:
            if isinstance(p, URLResolver):
                walk(p.url_patterns, where)
            elif isinstance(p, URLPattern) and p.name:
                out.append((p.name, where, frozenset(p.pattern.regex.groupindex)))

    walk(api_urls.urlpatterns, "api")
    walk(web_urls.urlpatterns, "web")
    return out


def urls_for(name: str, args: frozenset[str], seeded: Seeded) -> list[tuple[str, bool]]:
    """Concrete URLs of a pattern, each with whether it names the annotator's own objects (the
    other annotator's lease and judgment are asked for as well, and must be refused)."""
    if not args:
        return [(reverse(name), True)]
    assert name in ROUTES, f"{name}: how to fill its arguments? add it to tests/authz_matrix.py"
    route = ROUTES[name]
    out = []
    for ids, own in ((seeded.ids, True), (seeded.other_ids, False)):
        kinds = [k for k in route.kwargs.values() if not k.startswith("=")]
        if not own and not any(k in seeded.other_ids for k in kinds):
            continue
        kwargs = {
            arg: kind[1:] if kind.startswith("=") else ids.get(kind, seeded.ids[kind])
            for arg, kind in route.kwargs.items()
        }
        out += [(reverse(name, kwargs=kwargs) + query, own) for query in route.queries]
    return out


@pytest.fixture
def seeded(db: Any) -> Seeded:
    return seed()


def test_every_answer_an_annotator_gets_is_blind(seeded: Seeded) -> None:
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=seeded.annotator).key}")
    pages = Client()
    pages.force_login(seeded.annotator)
    checked: list[str] = []
    refused: list[str] = []
    for name, where, args in patterns():
        client = api if where == "api" else pages
        for url, own in urls_for(name, args, seeded):
            r = client.get(url)
            if r.status_code == 200:
                assert own, (url, "the other annotator's object answered")
                check_answer(name, url, r)
                checked.append(name)
            else:
                # 400: a made-up set-password link, refused to everybody, saying only that
                assert r.status_code in (403, 404, 405) or (
                    name == "set-password" and r.status_code == 400
                ), (url, r.status_code)
                refused.append(name)
    # what an annotator reads, and what they are refused, as the roles say
    for name in (
        "campaign-list",
        "campaign-detail",
        "campaign-topics",
        "judgment-list",
        "judgment-detail",
        "lease-detail",
        "home",
        "annotate-home",
        "annotate-judge",
        "annotate-done",
        "annotate-judged",
    ):
        assert name in checked, name
    for name in (
        "campaign-runs",
        "run-list",
        "pool-list",
        "qrels-list",
        "leaderboard",
        "suggestions",
        "api-suggestions",
    ):
        assert name in refused, name

    # the campaign as an annotator reads it: guidelines, no description, no run settings
    detail = api.get(f"/api/v1/campaigns/{seeded.campaign.pk}/").json()
    assert detail["guidelines"] == GUIDELINES
    assert not {"description", "num_runs", "run_pooling"} & set(detail)
    # (a researcher still reads the description and the run count)
    researcher = get_user_model().objects.get(username="blind-researcher")
    research = APIClient()
    research.force_authenticate(researcher)
    seen = research.get(f"/api/v1/campaigns/{seeded.campaign.pk}/").json()
    assert seen["description"] == DESCRIPTION and seen["num_runs"] == 3

    # the judging calls' own answers: a lease, a judgment, a change, an undo, a renewal
    c = seeded.campaign.pk
    lease = api.post(f"/api/v1/campaigns/{c}/leases/")
    assert lease.status_code in (200, 201), lease.content
    check_answer("api-leases", "POST leases", lease)
    lease_id = lease.json()["id"]
    renewed = api.post(f"/api/v1/leases/{lease_id}/renew/")
    assert renewed.status_code == 200
    check_answer("lease-renew", "POST renew", renewed)
    judged = api.post(f"/api/v1/leases/{lease_id}/judgment/", {"grade": OWN_GRADE}, format="json")
    assert judged.status_code == 201, judged.content
    check_answer("lease-judgment", "POST judgment", judged)
    changed = api.patch(f"/api/v1/judgments/{judged.json()['id']}/", {"grade": 1}, format="json")
    assert changed.status_code == 200
    check_answer("judgment-detail", "PATCH judgment", changed)
    undone = api.post(f"/api/v1/campaigns/{c}/undo/")
    assert undone.status_code in (201, 204)
    check_answer("api-undo", "POST undo", undone)
    # and the pages' judging forms, followed to the page they lead to
    for path in ("next", "undo"):
        r = pages.post(f"/annotate/{c}/{path}/", follow=True)
        assert r.status_code == 200, path
        check_answer(f"annotate-{path}", path, r)


def test_the_admin_sets_the_guidelines_in_the_api_and_the_admin_site(
    seeded: Seeded, api_client_for: Any
) -> None:
    api = api_client_for(seeded.admin)
    c = seeded.campaign.pk
    r = api.patch(f"/api/v1/campaigns/{c}/", {"guidelines": "Grade 2 only if on topic."})
    assert r.status_code == 200, r.content
    assert r.json()["guidelines"] == "Grade 2 only if on topic."
    created = api.post(
        "/api/v1/campaigns/", {"name": "With guidelines", "guidelines": "Read the narrative."}
    )
    assert created.status_code == 201, created.content
    assert created.json()["guidelines"] == "Read the narrative."
    assert created.json()["description"] == ""
    admin = Client()
    admin.force_login(seeded.admin)
    html = admin.get(f"/admin/campaigns/campaign/{c}/change/").content.decode()
    assert 'name="guidelines"' in html and "Grade 2 only if on topic." in html
    # and the annotator reads them, on the judging screen's help too
    pages = Client()
    pages.force_login(seeded.annotator)
    judge = pages.get(f"/annotate/{c}/").content.decode()
    assert "Grade 2 only if on topic." in judge
    assert "RESEARCHER-ONLY" not in judge


# --- (b) in Chromium: every link an annotator can follow --------------------------------------

# the browser fixture of the judging tests (Debian's Chromium, no network)
page = test_browser_judging.page


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_every_page_an_annotator_can_follow_in_the_browser_is_blind(
    page: Any, live_server: Any
) -> None:
    from judging.assessments.models import Judgment

    seeded = seed()
    base = live_server.url
    page.goto(f"{base}/login/")
    page.fill("input[name=username]", seeded.annotator.get_username())
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit], input[type=submit]")
    page.wait_for_url(f"{base}/")

    def check_page(url: str) -> None:
        html = page.content()
        found = leaks(html) + leaks(page.inner_text("body"))
        assert not found, (url, found)
        own_grade_only(html)

    # judge a couple of items from the keyboard on the way (the screen shows the next one)
    page.goto(f"{base}/annotate/{seeded.campaign.pk}/")
    page.wait_for_selector("#help", state="attached")
    check_page(page.url)
    before = Judgment.objects.filter(annotator=seeded.annotator).count()
    for i in range(2):
        docid = page.inner_text("body")
        page.keyboard.press(str(OWN_GRADE))
        page.wait_for_function("t => document.body.innerText !== t", arg=docid, timeout=10_000)
        page.wait_for_load_state()
        check_page(page.url)
        for _ in range(50):  # the judgment may be sent in the background
            if Judgment.objects.filter(annotator=seeded.annotator).count() >= before + i + 1:
                break
            page.wait_for_timeout(100)
    assert Judgment.objects.filter(annotator=seeded.annotator).count() >= before + 1

    # then every same-origin link from the home page, breadth first
    todo = [f"{base}/"]
    seen: set[str] = set()
    while todo and len(seen) < 80:
        url = todo.pop(0)
        if url in seen:
            continue
        seen.add(url)
        response = page.goto(url)
        assert response is not None
        if response.status != 200:
            assert response.status in (403, 404, 405), (url, response.status)
            continue
        check_page(url)
        for href in page.eval_on_selector_all("a[href]", "els => els.map(e => e.href)"):
            target = urljoin(url, href).split("#", 1)[0]
            parsed = urlparse(target)
            if f"{parsed.scheme}://{parsed.netloc}" == base and target not in seen:
                todo.append(target)
    visited = {urlparse(u).path for u in seen}
    c = seeded.campaign.pk
    assert {"/", "/annotate/", f"/annotate/{c}/"} <= visited, visited
    # earlier judgments reached by their links, among them items the other annotator judged too
    judged = {p for p in visited if p.startswith(f"/annotate/{c}/judged/")}
    assert str(seeded.ids["judgment"]) in {p.rstrip("/").rsplit("/", 1)[1] for p in judged}
