"""Drafting a nugget bank from the relevant segments of a qrels version: sentence extraction
(hand-worked on vectors chosen for the purpose, then with the real all-MiniLM-L6-v2), and an
openai-compatible judge against the local protocol server (the prompt sent, the reply read
strictly, a bad reply or a failed request reported for its topic, never a crash)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pytest

from judging.assessments.models import NuggetBank
from judging.assessments.nugget_selectors import bank_topics
from judging.autojudge import services
from judging.autojudge.embedding import available
from judging.autojudge.models import JudgeKind
from judging.autojudge.nugget_drafts import extracted_draft, judge_draft, select_sentences
from judging.autojudge.nugget_prompt import parse_nuggets
from judging.campaigns.models import Campaign
from judging.core.errors import InvalidInput
from tests.autojudge import protocol_server as ps
from tests.knobs import override_knobs
from tests.test_nugget_banks import TEXTS, texts_and_qrels

pytestmark = pytest.mark.django_db

KEY = "sk-nuggets-test-0123456789abcdef"

# unit vectors chosen so that every cosine below is worked out by hand; any other text: zero
VECTORS = {
    "does honey spoil": (1.0, 0.0, 0.0),
    "Honey never spoils.": (0.8, 0.6, 0.0),  # cosine with the topic 0.8
    "Archaeologists found edible honey in Egyptian tombs.": (0.6, 0.0, 0.8),  # 0.6
    # 0.6 with the topic, 0.48 + 0.48 = 0.96 with "Honey never spoils.": a near-duplicate of it
    "Honey keeps because it holds little water.": (0.6, 0.8, 0.0),
    "Bacteria cannot grow in it.": (0.0, 0.0, 1.0),  # 0 with the topic, 0.8 with the tombs one
}


class Lookup:
    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return np.array([VECTORS.get(t, (0.0, 0.0, 0.0)) for t in texts], dtype=np.float64)


def nuggets(bank: NuggetBank, qid: str) -> list[tuple[str, str, tuple[str, ...]]]:
    (topic,) = bank_topics(bank, qid=qid)
    return [(n.text, n.importance, n.sources) for n in topic.nuggets]


def test_extraction_keeps_the_most_similar_sentences_and_drops_near_duplicates(
    campaign: Campaign, admin_user: Any
) -> None:
    qrels = texts_and_qrels(campaign, admin_user)
    report = extracted_draft(
        campaign=campaign,
        qrels=qrels,
        by=admin_user,
        most=2,
        vital=1,
        min_words=2,
        encoder=Lookup(),
    )
    bank = report.bank
    assert (bank.source, bank.qrels, bank.state) == ("extracted", qrels, "draft")
    # ranked 0.8, 0.6, 0.6 (the tie: the earlier sentence), 0.0; the "water" sentence is a
    # near-duplicate of the first (0.96 >= 0.9): absorbed, its segment added to the sources;
    # the fourth is dropped (two kept already)
    assert nuggets(bank, "401") == [
        ("Honey never spoils.", "vital", ("d401-1", "d401-2")),
        ("Archaeologists found edible honey in Egyptian tombs.", "okay", ("d401-1",)),
    ]
    # zero vectors: all tied at 0, in text order, none a duplicate (cosine 0)
    assert nuggets(bank, "402") == [
        ("Bees make honey from nectar.", "vital", ("d402-1",)),
        ("They store it in wax cells.", "okay", ("d402-1",)),
    ]
    assert report.drafted == {"401": 2, "402": 2}
    assert report.skipped == {"403": "no relevant segment in qrels v1"}


def test_select_sentences_on_a_hand_worked_example() -> None:
    topic = np.array([1.0, 0.0])
    sentences = np.array([[0.6, 0.8], [1.0, 0.0], [0.8, 0.6], [0.0, 1.0]])
    # similarities to the topic 0.6, 1.0, 0.8, 0.0: walked in the order 1, 2, 0, 3.
    # At 0.9: 2 is 0.8 from 1, kept; 0 is 0.96 from 2, absorbed; 3 is 0 from 1 and 0.6 from 2,
    # kept. At 0.8: 2 is 0.8 from 1, absorbed; 0 is 0.6 from 1, kept; 3 is 0.8 from 0, absorbed.
    assert select_sentences(topic, sentences, most=3, duplicate=0.9) == [(1, []), (2, [0]), (3, [])]
    assert select_sentences(topic, sentences, most=3, duplicate=0.8) == [(1, [2]), (0, [3])]
    assert select_sentences(topic, sentences, most=1, duplicate=0.9) == [(1, [])]


def test_short_sentences_are_left_out_and_no_sentence_no_bank(
    campaign: Campaign, admin_user: Any
) -> None:
    qrels = texts_and_qrels(campaign, admin_user)
    with pytest.raises(InvalidInput) as caught:
        extracted_draft(
            campaign=campaign, qrels=qrels, by=admin_user, min_words=50, encoder=Lookup()
        )
    assert [str(p) for p in caught.value.problems] == [
        "401: no sentence in its relevant segments in qrels v1",
        "402: no sentence in its relevant segments in qrels v1",
        "403: no relevant segment in qrels v1",
    ]
    assert not NuggetBank.objects.exists()
    with pytest.raises(InvalidInput, match="parameters"):
        extracted_draft(campaign=campaign, qrels=qrels, by=admin_user, most=0, encoder=Lookup())


@pytest.mark.skipif(not available(), reason="the autojudge extra is not installed")
def test_extraction_with_the_real_model(campaign: Campaign, admin_user: Any) -> None:
    qrels = texts_and_qrels(campaign, admin_user)
    report = extracted_draft(campaign=campaign, qrels=qrels, by=admin_user, most=3, vital=1)
    relevant = {d: t for d, t in TEXTS.items() if d != "d401-3"}
    for qid in ("401", "402"):
        for text, _, sources in nuggets(report.bank, qid):
            assert sources and all(text in relevant[s] for s in sources)  # sentences, as they are
    # the model's cosines with "does honey spoil" (measured): 0.719 for the "water" sentence,
    # 0.522 for the tombs one, 0.325 for "Bacteria cannot grow in it."; "Honey never spoils."
    # (0.889) has three words, fewer than min_words (4): left out
    assert [(t, i) for t, i, _ in nuggets(report.bank, "401")] == [
        ("Honey keeps because it holds little water.", "vital"),
        ("Archaeologists found edible honey in Egyptian tombs.", "okay"),
        ("Bacteria cannot grow in it.", "okay"),
    ]


# --- an openai-compatible judge -------------------------------------------------------------


@pytest.fixture
def server() -> Iterator[ps.ProtocolServer]:
    with ps.ProtocolServer(KEY) as s:
        yield s


def chat_judge(campaign: Campaign, server: ps.ProtocolServer) -> Any:
    return services.judge_create(
        campaign=campaign, name="nuggeteer", kind=JudgeKind.OPENAI, model="llama-3-8b",
        params={"endpoint": "local"},
    )  # fmt: skip


def endpoint_knobs(server: ps.ProtocolServer) -> override_knobs:
    endpoints = {"local": {"base_url": server.base_url, "api_key": KEY}}
    return override_knobs(llm_endpoints=endpoints, llm_max_retries=0, llm_requests_per_minute=0)


def test_a_judge_drafts_each_topic_and_a_bad_reply_is_reported(
    campaign: Campaign, admin_user: Any, server: ps.ProtocolServer
) -> None:
    qrels = texts_and_qrels(campaign, admin_user)

    def responder(body: Any) -> ps.Reply:
        prompt = next(m["content"] for m in body["messages"] if m["role"] == "user")
        if prompt.startswith("Question: does honey spoil"):
            return ps.ok(
                "- vital | Honey never spoils | 1\n\nokay | It holds little water | 1, 2\n"
            )
        return ps.ok("Here are the nuggets: bees make honey.")

    server.responder = responder
    with endpoint_knobs(server):
        report = judge_draft(judge=chat_judge(campaign, server), qrels=qrels, by=admin_user, most=5)
    assert nuggets(report.bank, "401") == [
        ("Honey never spoils", "vital", ("d401-1",)),
        ("It holds little water", "okay", ("d401-1", "d401-2")),
    ]
    assert report.skipped == {
        "402": "reply line 1 is not 'vital|okay | nugget | passages': "
        "'Here are the nuggets: bees make honey.'",
        "403": "no relevant segment with text in qrels v1",
    }
    assert report.bank.source == "judge" and "nuggeteer v1" in report.bank.note
    assert len(server.requests) == 2  # 403 has nothing to send
    first = server.requests[0].body
    assert first["model"] == "llama-3-8b" and first["temperature"] == 0
    assert first["max_tokens"] >= 200  # 40 tokens a nugget asked for
    prompt = server.requests[0].prompt
    assert "[1] title of d401-1: Honey never spoils." in prompt
    assert "[2] title of d401-2: Honey keeps" in prompt and "A car needs fuel" not in prompt
    assert "at most 5 nuggets" in prompt
    assert KEY not in report.bank.note


def test_a_failing_endpoint_stores_nothing_and_says_why(
    campaign: Campaign, admin_user: Any, server: ps.ProtocolServer
) -> None:
    qrels = texts_and_qrels(campaign, admin_user)
    server.responder = lambda body: ps.status(503, message="overloaded")
    with endpoint_knobs(server), pytest.raises(InvalidInput) as caught:
        judge_draft(judge=chat_judge(campaign, server), qrels=qrels, by=admin_user)
    said = [str(p) for p in caught.value.problems]
    assert said[0].startswith("401: the endpoint failed: the endpoint failed (503): overloaded")
    assert said[2] == "403: no relevant segment with text in qrels v1"
    assert not NuggetBank.objects.exists()
    assert all(KEY not in s for s in said)


def test_an_imported_judge_cannot_draft(campaign: Campaign, admin_user: Any) -> None:
    qrels = texts_and_qrels(campaign, admin_user)
    judge = services.judge_create(
        campaign=campaign, name="file", kind=JudgeKind.IMPORTED, model="m"
    )
    with pytest.raises(InvalidInput, match="openai-compatible"):
        judge_draft(judge=judge, qrels=qrels, by=admin_user)


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        ("", "the reply is empty"),
        ("vital | a | 3", "reply line 1 names passage 3, not given (1 to 2)"),
        ("vital | a | 1\nsomething else", "reply line 2 is not 'vital|okay | nugget | passages': "
         "'something else'"),
        ("vital | a | 1\nokay | A | 2", "reply line 2 repeats a nugget"),
        ("vital |  | 1", "reply line 1 has no nugget text"),
        ("vital | abcdefghijk | 1", "reply line 1 has a nugget of 11 characters; the limit is 10"),
        ("vital | a | 1\nokay | b | 1\nokay | c | 2", "3 nuggets, more than the 2 asked for"),
        ("maybe | a | 1", "reply line 1 is not 'vital|okay | nugget | passages': 'maybe | a | 1'"),
    ],
)  # fmt: skip
def test_a_reply_is_read_strictly(reply: str, problem: str) -> None:
    assert parse_nuggets(reply, ["s1", "s2"], most=2, max_chars=10).problem == problem


def test_a_reply_in_the_asked_form_is_read_whole() -> None:
    got = parse_nuggets("1. VITAL | a b | 2, 1, 2\n* okay|c|1", ["s1", "s2"], most=2, max_chars=10)
    assert got.problem == ""
    assert [(n.text, n.importance, n.sources) for n in got.nuggets] == [
        ("a b", "vital", ("s2", "s1")),
        ("c", "okay", ("s1",)),
    ]
