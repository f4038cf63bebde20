"""Nugget banks as services: a draft numbered next, every edit operation with its history row,
stale edits refused, a published bank frozen, its content hash worked out by hand, keys never
reused, the limits, who sees which version, and the relevant segments a topic is drafted from.

The helpers at the top (a campaign with texts and a qrels version, a bank) are shared by the
other ``test_nugget_banks_*`` modules."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from judging.assessments import nugget_edits as edits
from judging.assessments.models import Nugget, NuggetBank, NuggetEdit, QrelsVersion
from judging.assessments.nugget_selectors import (
    bank_export,
    bank_segments,
    bank_topics,
    banks_visible,
    relevant_segments,
    topic_history,
)
from judging.assessments.nuggets import bank_create, bank_publish
from judging.assessments.services import qrels_import
from judging.campaigns.models import Campaign, Document, Topic
from judging.core.errors import Conflict, InvalidInput
from metrics.io.nuggets import DraftNugget
from tests.knobs import set_knobs

pytestmark = pytest.mark.django_db

TITLES = {"401": "does honey spoil", "402": "how do bees make honey", "403": "bee stings"}
TEXTS = {
    "d401-1": "Honey never spoils. Archaeologists found edible honey in Egyptian tombs.",
    "d401-2": "Honey keeps because it holds little water. Bacteria cannot grow in it.",
    "d401-3": "A car needs fuel.",
    "d402-1": "Bees make honey from nectar. They store it in wax cells.",
}
# d401-3 is judged not relevant (0); d403 has no relevant segment
QRELS = b"401 0 d401-1 2\n401 0 d401-2 1\n401 0 d401-3 0\n402 0 d402-1 2\n"


def texts_and_qrels(campaign: Campaign, admin: Any) -> QrelsVersion:
    """The campaign's topics titled, its documents' texts, and a qrels version over them."""
    for qid, title in TITLES.items():
        Topic.objects.filter(campaign=campaign, qid=qid).update(title=title)
    Document.objects.bulk_create(
        Document(campaign=campaign, docid=d, title=f"title of {d}", text=t)
        for d, t in TEXTS.items()
    )
    return qrels_import(campaign=campaign, data=QRELS, created_by=admin)


def n(text: str, importance: str = "vital", *sources: str) -> DraftNugget:
    return DraftNugget(text, importance, tuple(sources))  # type: ignore[arg-type]


DRAFT = {
    "401": [
        n("Honey never spoils", "vital", "d401-1"),
        n("Edible honey was found in Egyptian tombs", "okay", "d401-1"),
        n("Honey holds little water", "vital", "d401-2"),
    ],
    "402": [n("Bees make honey from nectar", "vital", "d402-1")],
}


def draft(campaign: Campaign, admin: Any, **kwargs: Any) -> NuggetBank:
    return bank_create(
        campaign=campaign,
        by=admin,
        source="imported",
        nuggets=kwargs.pop("nuggets", DRAFT),
        **kwargs,
    )


def listed(bank: NuggetBank, qid: str) -> list[tuple[str, str, str]]:
    """The topic's nuggets as (key, importance, text), in order."""
    (topic,) = bank_topics(bank, qid=qid)
    return [(x.key, x.importance, x.text) for x in topic.nuggets]


def base(bank: NuggetBank, qid: str) -> int:
    return bank_topics(bank, qid=qid)[0].last_edit


@pytest.fixture
def bank(campaign: Campaign, admin_user: Any) -> NuggetBank:
    return draft(campaign, admin_user)


# --- creating ----------------------------------------------------------------------------


def test_a_draft_is_numbered_next_with_keys_and_one_draft_edit_per_topic(
    campaign: Campaign, admin_user: Any
) -> None:
    first = draft(campaign, admin_user, note="from nuggetizer")
    second = draft(campaign, admin_user, nuggets={"403": [n("Stings hurt")]})
    assert (first.number, second.number) == (1, 2)
    assert (first.state, first.source, first.note) == ("draft", "imported", "from nuggetizer")
    assert listed(first, "401") == [
        ("n1", "vital", "Honey never spoils"),
        ("n2", "okay", "Edible honey was found in Egyptian tombs"),
        ("n3", "vital", "Honey holds little water"),
    ]
    assert listed(first, "403") == []  # a topic not given has no nugget (and no edit)
    assert [t.last_edit > 0 for t in bank_topics(first)] == [True, True, False]
    (row,) = NuggetEdit.objects.filter(bank=first, topic__qid="402")
    assert (row.op, row.before, row.editor) == ("draft", [], admin_user)
    assert row.after == [
        {
            "key": "n1",
            "position": 0,
            "text": "Bees make honey from nectar",
            "importance": "vital",
            "sources": ["d402-1"],
        }
    ]


def test_a_copy_keeps_keys_sources_and_the_qrels_version(
    campaign: Campaign, admin_user: Any
) -> None:
    qrels = texts_and_qrels(campaign, admin_user)
    first = draft(campaign, admin_user, qrels=qrels)
    edits.nugget_delete(bank=first, qid="401", key="n2", base=base(first, "401"), by=admin_user)
    copy = bank_create(campaign=campaign, by=admin_user, source="copied", based_on=first)
    assert (copy.number, copy.based_on, copy.qrels) == (2, first, qrels)
    assert listed(copy, "401") == [
        ("n1", "vital", "Honey never spoils"),
        ("n3", "vital", "Honey holds little water"),
    ]
    assert Nugget.objects.get(bank=copy, key="n3").sources == ["d401-2"]


def test_a_bad_draft_names_every_problem_and_stores_nothing(
    campaign: Campaign, admin_user: Any
) -> None:
    with pytest.raises(InvalidInput) as caught:
        bank_create(
            campaign=campaign,
            by=admin_user,
            source="made-up",
            nuggets={
                "999": [n("x")],
                "401": [n(" "), n("ok", "maybe"), n("Same"), n("same ")],
            },
        )
    where = [(p.location, p.message) for p in caught.value.problems]
    assert where == [
        ("source", "'made-up' is not one of judge, extracted, imported, copied"),
        ("999", "topic '999' is not a topic of the campaign"),
        ("401[0].text", "is blank"),
        ("401[1].importance", "'maybe' is neither 'vital' nor 'okay'"),
        ("401[3].text", "the same nugget twice in the topic"),
    ]
    assert not NuggetBank.objects.exists()
    with pytest.raises(InvalidInput, match="not valid"):
        bank_create(campaign=campaign, by=admin_user, source="copied")  # based_on missing


def test_the_limits_are_the_settings(campaign: Campaign, admin_user: Any, settings: Any) -> None:
    set_knobs(settings, max_nuggets_per_topic=2, max_nugget_chars=10)
    with pytest.raises(InvalidInput) as caught:
        draft(campaign, admin_user, nuggets={"401": [n("a"), n("b"), n("c" * 11)]})
    assert [p.message for p in caught.value.problems] == [
        "3 nuggets; the limit is 2",
        "11 characters; the limit is 10",
    ]
    bank = draft(campaign, admin_user, nuggets={"401": [n("a"), n("b")]})
    with pytest.raises(InvalidInput, match="more than 2 nuggets"):
        edits.nugget_add(
            bank=bank, qid="401", text="c", importance="okay", base=base(bank, "401"), by=admin_user
        )
    with pytest.raises(InvalidInput, match="not valid"):
        edits.nugget_reword(
            bank=bank, qid="401", key="n1", text="x" * 11, base=base(bank, "401"), by=admin_user
        )


# --- editing -----------------------------------------------------------------------------


def test_add_puts_a_new_key_where_asked(bank: NuggetBank, annotator: Any) -> None:
    row = edits.nugget_add(
        bank=bank,
        qid="401",
        text="Honey is sweet",
        importance="okay",
        base=base(bank, "401"),
        by=annotator,
        position=1,
        sources=["d401-1", "d401-1"],
    )
    assert listed(bank, "401") == [
        ("n1", "vital", "Honey never spoils"),
        ("n4", "okay", "Honey is sweet"),
        ("n2", "okay", "Edible honey was found in Egyptian tombs"),
        ("n3", "vital", "Honey holds little water"),
    ]
    assert (row.op, row.before, row.editor) == ("add", [], annotator)
    assert row.after == [
        {
            "key": "n4",
            "position": 1,
            "text": "Honey is sweet",
            "importance": "okay",
            "sources": ["d401-1"],
        }
    ]


def test_reword_and_importance_keep_the_key(bank: NuggetBank, annotator: Any) -> None:
    seen = base(bank, "401")
    text = "  Honey from tombs was edible "
    reword = edits.nugget_reword(bank=bank, qid="401", key="n2", text=text, base=seen, by=annotator)
    flip = edits.nugget_importance(
        bank=bank, qid="401", key="n2", importance="vital", base=reword.pk, by=annotator
    )
    assert listed(bank, "401")[1] == ("n2", "vital", "Honey from tombs was edible")
    assert (reword.before[0]["text"], reword.after[0]["text"]) == (
        "Edible honey was found in Egyptian tombs",
        "Honey from tombs was edible",
    )
    assert (flip.before[0]["importance"], flip.after[0]["importance"]) == ("okay", "vital")


def test_delete_keeps_the_nugget_in_the_history(bank: NuggetBank, annotator: Any) -> None:
    row = edits.nugget_delete(bank=bank, qid="401", key="n1", base=base(bank, "401"), by=annotator)
    assert [k for k, _, _ in listed(bank, "401")] == ["n2", "n3"]
    assert [x.position for x in bank_topics(bank, qid="401")[0].nuggets] == [0, 1]
    assert (row.before[0]["key"], row.before[0]["text"], row.after) == (
        "n1",
        "Honey never spoils",
        [],
    )


def test_merge_makes_one_new_nugget_with_the_sources_unioned(
    bank: NuggetBank, annotator: Any
) -> None:
    row = edits.nuggets_merge(
        bank=bank, qid="401", keys=["n3", "n1"], base=base(bank, "401"), by=annotator
    )
    # at the first one's place; texts joined in their order; vital as one of them was
    assert listed(bank, "401") == [
        ("n4", "vital", "Honey never spoils; Honey holds little water"),
        ("n2", "okay", "Edible honey was found in Egyptian tombs"),
    ]
    assert Nugget.objects.get(bank=bank, key="n4").sources == ["d401-1", "d401-2"]
    assert [b["key"] for b in row.before] == ["n1", "n3"] and row.after[0]["key"] == "n4"
    with pytest.raises(InvalidInput, match="two nuggets or more"):
        edits.nuggets_merge(bank=bank, qid="401", keys=["n4", "n4"], base=row.pk, by=annotator)


def test_split_makes_new_keys_in_place(bank: NuggetBank, annotator: Any) -> None:
    row = edits.nugget_split(
        bank=bank,
        qid="401",
        key="n2",
        parts=["Edible honey was found", " in Egyptian tombs", ""],
        base=base(bank, "401"),
        by=annotator,
    )
    assert listed(bank, "401") == [
        ("n1", "vital", "Honey never spoils"),
        ("n4", "okay", "Edible honey was found"),
        ("n5", "okay", "in Egyptian tombs"),
        ("n3", "vital", "Honey holds little water"),
    ]
    assert Nugget.objects.get(bank=bank, key="n5").sources == ["d401-1"]
    assert [a["key"] for a in row.after] == ["n4", "n5"] and row.before[0]["key"] == "n2"


def test_move_reorders_and_renumbers(bank: NuggetBank, annotator: Any) -> None:
    row = edits.nugget_move(
        bank=bank, qid="401", key="n3", to=0, base=base(bank, "401"), by=annotator
    )
    assert [k for k, _, _ in listed(bank, "401")] == ["n3", "n1", "n2"]
    assert (row.before[0]["position"], row.after[0]["position"]) == (2, 0)
    edits.nugget_move(bank=bank, qid="401", key="n3", to=99, base=row.pk, by=annotator)
    assert [k for k, _, _ in listed(bank, "401")] == ["n1", "n2", "n3"]


def test_the_history_lists_every_edit_in_order(bank: NuggetBank, annotator: Any) -> None:
    topic = Topic.objects.get(campaign=bank.campaign, qid="401")
    one = edits.nugget_delete(bank=bank, qid="401", key="n1", base=base(bank, "401"), by=annotator)
    edits.nugget_importance(
        bank=bank, qid="401", key="n2", importance="vital", base=one.pk, by=annotator
    )
    history = topic_history(bank, topic)
    assert [(h.op, h.editor) for h in history] == [
        ("draft", "alice-admin"),
        ("delete", "ann-annotator"),
        ("importance", "ann-annotator"),
    ]


def test_a_stale_edit_is_refused_and_changes_nothing(
    bank: NuggetBank, annotator: Any, make_user: Any
) -> None:
    other = make_user("bob-annotator", "annotator")
    seen = base(bank, "401")  # both load the topic
    edits.nugget_reword(bank=bank, qid="401", key="n1", text="Honey keeps", base=seen, by=other)
    with pytest.raises(Conflict, match=r"changed since you loaded it: its latest is edit #\d+ "):
        edits.nugget_reword(
            bank=bank, qid="401", key="n1", text="Honey lasts", base=seen, by=annotator
        )
    assert listed(bank, "401")[0] == ("n1", "vital", "Honey keeps")
    assert NuggetEdit.objects.filter(bank=bank, topic__qid="401").count() == 2
    # another topic's base is its own: an edit of 402 is not stale for it
    edits.nugget_delete(bank=bank, qid="402", key="n1", base=base(bank, "402"), by=annotator)
    # a topic that never had an edit: base 0
    edits.nugget_add(
        bank=bank, qid="403", text="Stings hurt", importance="vital", base=0, by=annotator
    )
    with pytest.raises(Conflict):
        edits.nugget_add(
            bank=bank, qid="403", text="Ice helps", importance="okay", base=0, by=annotator
        )


def test_edits_name_unknown_keys_and_topics(bank: NuggetBank, annotator: Any) -> None:
    with pytest.raises(InvalidInput, match="no nugget 'n9'"):
        edits.nugget_delete(bank=bank, qid="401", key="n9", base=base(bank, "401"), by=annotator)
    with pytest.raises(Exception, match="no topic '999'"):
        edits.nugget_delete(bank=bank, qid="999", key="n1", base=0, by=annotator)
    with pytest.raises(InvalidInput, match="not valid"):
        edits.nugget_add(  # the same text as n1, spaces and case aside
            bank=bank,
            qid="401",
            text=" honey NEVER spoils",
            importance="vital",
            base=base(bank, "401"),
            by=annotator,
        )


# --- publishing --------------------------------------------------------------------------


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_the_hash_is_sha256_of_the_canonical_lines(campaign: Campaign, admin_user: Any) -> None:
    bank = draft(
        campaign,
        admin_user,
        nuggets={
            "402": [n("Bees make honey", "vital", "d402-1")],
            "401": [n("Honig", "okay"), n("é")],
        },
    )
    done = bank_publish(bank=bank, by=admin_user)
    # by topic, then position; sources are not hashed; UTF-8 as is
    lines = (
        '["401","n1",0,"okay","Honig"]\n'
        '["401","n2",1,"vital","é"]\n'
        '["402","n1",0,"vital","Bees make honey"]\n'
    )
    assert done.bank.content_hash == _sha(lines)
    assert (done.nuggets, done.empty_topics) == (3, ("403",))
    assert done.bank.state == "published" and done.bank.published_at is not None


def test_the_hash_is_stable_across_copies_and_sources(campaign: Campaign, admin_user: Any) -> None:
    first = bank_publish(bank=draft(campaign, admin_user), by=admin_user).bank
    copy = bank_create(campaign=campaign, by=admin_user, source="copied", based_on=first)
    Nugget.objects.filter(bank=copy).update(sources=["elsewhere"])
    assert bank_publish(bank=copy, by=admin_user).bank.content_hash == first.content_hash


def test_a_published_bank_is_frozen(bank: NuggetBank, admin_user: Any, annotator: Any) -> None:
    bank_publish(bank=bank, by=admin_user)
    last = base(bank, "401")
    mine = {"bank": bank, "qid": "401", "base": last, "by": annotator}
    calls: list[tuple[Any, dict[str, Any]]] = [
        (edits.nugget_add, {"text": "x", "importance": "okay"}),
        (edits.nugget_reword, {"key": "n1", "text": "x"}),
        (edits.nugget_importance, {"key": "n1", "importance": "okay"}),
        (edits.nugget_delete, {"key": "n1"}),
        (edits.nuggets_merge, {"keys": ["n1", "n2"]}),
        (edits.nugget_split, {"key": "n1", "parts": ["a", "b"]}),
        (edits.nugget_move, {"key": "n1", "to": 2}),
    ]
    for call, args in calls:
        with pytest.raises(Conflict, match="is published: it is frozen"):
            call(**mine, **args)
    with pytest.raises(Conflict, match="published already"):
        bank_publish(bank=bank, by=admin_user)
    assert listed(bank, "401")[0] == ("n1", "vital", "Honey never spoils")
    assert NuggetEdit.objects.filter(bank=bank).count() == 2  # the two topics' drafts


def test_an_altered_published_bank_is_not_exported(bank: NuggetBank, admin_user: Any) -> None:
    bank_publish(bank=bank, by=admin_user)
    assert [t.qid for t in bank_export(bank)] == ["401", "402"]
    Nugget.objects.filter(bank=bank, key="n1", topic__qid="401").update(text="altered")
    with pytest.raises(Conflict, match="fails its integrity check"):
        bank_export(bank)


def test_a_key_never_names_two_nuggets_of_a_topic(campaign: Campaign, admin_user: Any) -> None:
    first = draft(campaign, admin_user)
    edits.nugget_delete(bank=first, qid="401", key="n3", base=base(first, "401"), by=admin_user)
    # a fresh draft (not a copy) and an add after the delete: n3 was used, so n4 and on
    fresh = draft(campaign, admin_user, nuggets={"401": [n("Honey is sweet")]})
    assert listed(fresh, "401") == [("n4", "vital", "Honey is sweet")]
    edits.nugget_add(
        bank=first,
        qid="401",
        text="Honey is old",
        importance="okay",
        base=base(first, "401"),
        by=admin_user,
    )
    assert [k for k, _, _ in listed(first, "401")] == ["n1", "n2", "n5"]


# --- reading -----------------------------------------------------------------------------


def test_researchers_see_published_versions_only(
    campaign: Campaign, admin_user: Any, annotator: Any, researcher: Any
) -> None:
    from django.contrib.auth.models import AnonymousUser

    published = bank_publish(bank=draft(campaign, admin_user), by=admin_user).bank
    drafted = draft(campaign, admin_user)
    assert list(banks_visible(admin_user, campaign)) == [drafted, published]
    assert list(banks_visible(annotator, campaign)) == [drafted, published]
    assert list(banks_visible(researcher, campaign)) == [published]
    assert list(banks_visible(AnonymousUser(), campaign)) == []


def test_the_segments_are_the_topics_relevant_ones_with_their_citations(
    campaign: Campaign, admin_user: Any
) -> None:
    qrels = texts_and_qrels(campaign, admin_user)
    bank = draft(campaign, admin_user, qrels=qrels)
    topic = Topic.objects.get(campaign=campaign, qid="401")
    segments = bank_segments(bank, topic)
    # d401-3 is graded 0: not relevant
    assert [(s.id, s.cited_by) for s in segments] == [("d401-1", ("n1", "n2")), ("d401-2", ("n3",))]
    assert segments[0].text == TEXTS["d401-1"] and segments[0].title == "title of d401-1"
    assert relevant_segments(None, topic) == []
    assert relevant_segments(qrels, Topic.objects.get(campaign=campaign, qid="403")) == []
