"""Highlighting on the judging screen: the topic's title, description and narrative words by
their Snowball stems (stop words and TREC boilerplate left out), the campaign's extra words and
phrases, strong marks for the title, and escaping that no document or term can get around."""

from __future__ import annotations

import html
import re
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judging.campaigns.models import highlight_terms_problems
from judging.web.highlight import highlight, paragraphs, query_terms, stem, topic_terms

MARK = re.compile(r'<mark class="([td])">(.*?)</mark>')


def marked(out: str) -> list[tuple[str, str]]:
    """(class, text) of every mark, the text unescaped."""
    return [(cls, html.unescape(text)) for cls, text in MARK.findall(out)]


def plain(out: str) -> str:
    """The text back from the highlighted HTML: marks removed, entities decoded."""
    return html.unescape(re.sub(r'<mark class="[td]">|</mark>', "", out))


def topic(title: str = "", description: str = "", narrative: str = "") -> Any:
    return SimpleNamespace(title=title, description=description, narrative=narrative)


def campaign(*extra: str) -> Any:
    return SimpleNamespace(highlight_terms=list(extra))


def test_a_title_word_marks_its_inflected_forms_and_not_other_words() -> None:
    terms = topic_terms(campaign(), topic("The cost of solar sails"))
    out = highlight("Costs rose; costing it, the COST and a costume. A sail, sailing.", terms)
    assert [t for _, t in marked(out)] == ["Costs", "costing", "COST", "sail", "sailing"]
    assert "costume" in plain(out)  # stem "costum": another word


def test_stems_are_english_snowball_stems() -> None:
    # Porter2 (snowballstem.org's English stemmer): these pairs are from its vocabulary table
    assert stem("generously") == "generous" and stem("happiness") == stem("happy") == "happi"
    assert stem("cries") == stem("cry") == "cri" and stem("running") == "run"


def test_a_word_whose_stem_changes_its_last_letter_still_marks_its_forms() -> None:
    # "happy" -> "happi", "cry" -> "cri": "happy" and "cry" do not start with their stems
    out = highlight("happiness, happy, hap", topic_terms(campaign(), topic("happiness")))
    assert [t for _, t in marked(out)] == ["happiness", "happy"]
    out = highlight("cries, cry, cried, crisp", topic_terms(campaign(), topic("crying")))
    assert [t for _, t in marked(out)] == ["cries", "cry", "cried"]


def test_description_and_narrative_words_are_marked_weaker_than_title_words() -> None:
    terms = topic_terms(
        campaign(),
        topic(
            title="solar sails",
            description="How do solar sails use light pressure?",
            narrative="A relevant document will discuss propulsion by photons.",
        ),
    )
    out = highlight("Solar sails: light pressure gives propulsion to photons.", terms)
    assert marked(out) == [
        ("t", "Solar"),
        ("t", "sails"),
        ("d", "light"),
        ("d", "pressure"),
        ("d", "propulsion"),
        ("d", "photons"),
    ]


def test_stop_words_and_trec_boilerplate_are_not_marked() -> None:
    narrative = (
        "A relevant document must identify or discuss the information about tariffs. Documents "
        "that merely mention the topic are not relevant; descriptions including examples are."
    )
    assert query_terms(narrative) == ["tariffs"]
    out = highlight(
        "Relevant documents discussed the relevance of information; they mention tariffs.",
        topic_terms(campaign(), topic(narrative=narrative)),
    )
    assert [t for _, t in marked(out)] == ["tariffs"]


def test_extra_terms_mark_phrases_whole_and_words_by_stem() -> None:
    terms = topic_terms(campaign("light pressure", "NASA", "COVID-19"), topic("sails"))
    out = highlight(
        "Light  pressure (light-pressure), the pressures of lighting; nasa's COVID 19 light.",
        terms,
    )
    assert marked(out) == [
        ("t", "Light  pressure"),
        ("t", "light-pressure"),
        ("t", "nasa"),
        ("t", "COVID 19"),
    ]
    # the phrase's words alone are not terms: "pressures", "lighting", "light" stay plain
    assert "pressures of lighting" in plain(out) and plain(out).endswith("light.")


def test_a_word_in_the_title_and_the_narrative_gets_the_strong_mark() -> None:
    terms = topic_terms(campaign(), topic("tariffs", narrative="tariffs and quotas"))
    assert marked(highlight("Tariffs, quotas", terms)) == [("t", "Tariffs"), ("d", "quotas")]


def test_plain_word_lists_still_highlight_as_before() -> None:
    out = highlight("Solar sails & <b>sails</b>", ["solar", "sails"])
    assert out == (
        '<mark class="t">Solar</mark> <mark class="t">sails</mark> &amp; '
        '&lt;b&gt;<mark class="t">sails</mark>&lt;/b&gt;'
    )
    assert highlight("nothing to mark <i>", []) == "nothing to mark &lt;i&gt;"


def test_a_match_never_starts_inside_a_word() -> None:
    out = highlight("outcost recost cost-effective co-cost", ["cost"])
    assert [t for _, t in marked(out)] == ["cost", "cost"]  # of "cost-effective", "co-cost"


HOSTILE_TERMS = [
    "<script>alert(1)</script>",
    'x" onmouseover="alert(1)',
    ".*",
    "a|b(",
    "\\d+",
    "&amp;",
    "mark>",
    "</mark>",
]


def test_hostile_terms_and_text_are_escaped_and_cannot_break_the_markup() -> None:
    text = (
        '<script>alert(1)</script> x" onmouseover="alert(1) .* a|b( \\d+ 42 &amp; &lt; '
        "</mark><mark> mark> script"
    )
    terms = topic_terms(campaign(*HOSTILE_TERMS), topic('<b>script</b> & "mark"'))
    out = str(highlight(text, terms))
    assert "<script" not in out and 'onmouseover="' not in out
    assert re.sub(r'<mark class="[td]">|</mark>', "", out).count("<") == 0
    assert plain(out) == text  # every character kept, nothing added
    assert ("t", "script") in marked(out) and ("t", "mark") in marked(out)


@settings(max_examples=200, deadline=None)
@given(
    text=st.lists(
        st.sampled_from([*"abcos tin-'&<>\"\n", "cost", "coats", "İ", "ß", "ﬁ", "é"]), max_size=40
    ).map("".join),
    extra=st.lists(st.text(alphabet=st.sampled_from(list("abcost <>&|.*")), max_size=8)),
)
def test_highlighting_keeps_the_text_and_adds_only_marks(text: str, extra: list[str]) -> None:
    out = str(highlight(text, topic_terms(campaign(*extra), topic("cost of a tin", "coats"))))
    assert plain(out) == text
    assert re.sub(r'<mark class="[td]">|</mark>', "", out).count("<") == 0
    assert all(t and t == t.strip(" -'&<>\"\n") for _, t in marked(out))


def test_characters_that_lower_case_to_two_keep_the_marks_in_place() -> None:
    out = highlight("İstanbul costs İİ cost", ["cost"])
    assert marked(out) == [("t", "costs"), ("t", "cost")]
    assert plain(out) == "İstanbul costs İİ cost"


def test_paragraphs_and_the_document_title_use_the_same_terms() -> None:
    terms = topic_terms(campaign(), topic("solar sails"))
    parts = paragraphs("Sailing is\n\nsolar-powered\n", terms)
    assert [marked(p) for p in parts] == [[("t", "Sailing")], [("t", "solar")]]
    assert marked(paragraphs("Solar Sails", terms)[0]) == [("t", "Solar"), ("t", "Sails")]


def test_terms_list_what_is_marked_title_and_extra_terms_first() -> None:
    terms = topic_terms(campaign("Light Pressure"), topic("Sails", narrative="relevant photons"))
    assert list(terms) == ["sails", "light pressure", "photons"]


@pytest.mark.parametrize(
    "value, problems",
    [
        (["ok", "a phrase"], []),
        ("sails", [("highlight_terms", "must be a list of words or phrases (strings)")]),
        ([1], [("highlight_terms[0]", "must be a string, not int")]),
        (["ok", "  "], [("highlight_terms[1]", "must not be blank")]),
        (["x" * 101], [("highlight_terms[0]", "at most 100 characters, has 101")]),
        (
            ["tab\there"],
            [("highlight_terms[0]", "must not contain control characters (tab, newline, ...)")],
        ),
        (["t"] * 201, [("highlight_terms", "at most 200 terms, has 201")]),
    ],
)
def test_extra_terms_are_checked_with_their_location(value: Any, problems: Any) -> None:
    assert highlight_terms_problems(value) == problems


# --- the campaign's extra terms: API, Django admin, the judging page ---------------------------


@pytest.mark.django_db
def test_admins_set_extra_terms_by_api_and_bad_ones_are_named_by_index(
    campaign: Any, api_client_for: Any, admin_user: Any
) -> None:
    api = api_client_for(admin_user)
    url = f"/api/v1/campaigns/{campaign.pk}/"
    r = api.patch(url, {"highlight_terms": ["ok", "x" * 101, "a\nb", 7]}, format="json")
    assert r.status_code == 400, r.json()
    assert [(p["location"], p["message"]) for p in r.json()["problems"]] == [
        ("highlight_terms[1]", "at most 100 characters, has 101"),
        ("highlight_terms[2]", "must not contain control characters (tab, newline, ...)"),
        ("highlight_terms[3]", "must be a string, not int"),
    ]
    r = api.patch(url, {"highlight_terms": "solar"}, format="json")
    assert r.status_code == 400
    assert r.json()["problems"][0]["location"] == "highlight_terms"
    campaign.refresh_from_db()
    assert campaign.highlight_terms == []

    r = api.patch(url, {"highlight_terms": ["light pressure", "NASA"]}, format="json")
    assert r.status_code == 200, r.json()
    assert r.json()["highlight_terms"] == ["light pressure", "NASA"]
    campaign.refresh_from_db()
    assert campaign.highlight_terms == ["light pressure", "NASA"]

    r = api.post(
        "/api/v1/campaigns/",
        {"name": "With terms", "highlight_terms": ["x" * 101]},
        format="json",
    )
    assert r.status_code == 400 and r.json()["problems"][0]["location"] == "highlight_terms[0]"
    r = api.post(
        "/api/v1/campaigns/", {"name": "With terms", "highlight_terms": ["sails"]}, format="json"
    )
    assert r.status_code == 201 and r.json()["highlight_terms"] == ["sails"]


@pytest.mark.django_db
def test_a_researcher_cannot_set_extra_terms(
    campaign: Any, api_client_for: Any, researcher: Any
) -> None:
    r = api_client_for(researcher).patch(
        f"/api/v1/campaigns/{campaign.pk}/", {"highlight_terms": ["x"]}, format="json"
    )
    assert r.status_code == 403
    campaign.refresh_from_db()
    assert campaign.highlight_terms == []


@pytest.mark.django_db
def test_the_django_admin_edits_extra_terms_one_a_line_and_checks_them(
    campaign: Any, admin_user: Any, rf: Any
) -> None:
    from django.contrib import admin as django_admin

    from judging.campaigns.admin import CampaignAdmin
    from judging.campaigns.models import Campaign

    campaign.highlight_terms = ["light pressure", "NASA"]
    campaign.save()
    request = rf.get("/")
    request.user = admin_user
    model_admin = CampaignAdmin(Campaign, django_admin.site)
    form_class = model_admin.get_form(request, campaign)
    form = form_class(instance=campaign)
    assert form.initial["highlight_terms"] == "light pressure\nNASA"

    def data(terms: str) -> dict[str, Any]:
        import json

        out: dict[str, Any] = {}
        for name in form.fields:
            value = form.initial.get(name)
            if isinstance(value, list | dict) and name != "highlight_terms":
                value = json.dumps(value)
            if value is None:
                continue
            out[name] = value
        out["highlight_terms"] = terms
        return out

    good = form_class(data(" solar sails \n\nphotons\n"), instance=campaign)
    assert good.is_valid(), good.errors
    assert good.cleaned_data["highlight_terms"] == ["solar sails", "photons"]
    bad = form_class(data("ok\n" + "x" * 101), instance=campaign)
    assert not bad.is_valid()
    assert "highlight_terms[1]: at most 100 characters, has 101" in bad.errors["highlight_terms"]


@pytest.mark.django_db
def test_the_judging_page_marks_narrative_and_extra_terms_and_escapes_hostile_ones(
    campaign: Any, researcher: Any, annotator: Any, as_committed: Any
) -> None:
    from django.test import Client

    from judging.campaigns.models import Document
    from judging.workflows.pools import pool_requested
    from judging.workflows.runs import run_submitted

    campaign.highlight_terms = ["light pressure", '"><img>']
    campaign.save()
    campaign.topics.filter(qid="401").update(
        title="solar sails", description="What do sails cost?", narrative="Photons matter."
    )
    run_submitted(campaign=campaign, owner=researcher, tag="hidden", results={"401": {"D1": 1.0}})
    Document.objects.create(
        campaign=campaign,
        docid="D1",
        title="Costing a sail",
        text="<img src=x onerror=alert(1)> photon costs and light-pressure; img onerror",
    )
    with as_committed():
        pool_requested(campaign=campaign, strategy="depth", depth=10)
    client = Client()
    client.force_login(annotator)
    page = client.get(f"/annotate/{campaign.pk}/").content.decode()
    if 'id="next-form"' in page:  # without a lease the page posts for the next document
        page = client.post(f"/annotate/{campaign.pk}/next/", follow=True).content.decode()
    doc = page[page.index('id="doc-text"') :]
    assert "<img" not in page
    assert "&lt;" + '<mark class="t">img</mark>' + " src=" in doc
    assert '<mark class="d">photon</mark> <mark class="d">costs</mark>' in doc
    assert '<mark class="t">light-pressure</mark>' in doc
    assert doc.count('<mark class="t">img</mark>') == 2 and "onerror</mark>" not in doc
    title = page[page.index('id="doc-title">') :]
    assert title.startswith(
        'id="doc-title"><mark class="d">Costing</mark> a <mark class="t">sail</mark>'
    )
