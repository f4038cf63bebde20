"""Published qrels, their rows and the judgments they rest on cannot be changed or deleted: not
through the admin, the API, an ORM cascade or raw SQL (the database's triggers, SQLite and
PostgreSQL); the export checks the stored hash; an undo after a publish reaches the next one."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.db import IntegrityError, connection, transaction
from django.db.models import ProtectedError
from django.test import Client

from judging.assessments import immutability
from judging.assessments.models import Judgment, JudgmentChange, QrelsEntry, QrelsVersion
from judging.assessments.queue import judgment_record, judgment_undo, lease_next
from judging.assessments.services import content_hash, qrels_export_lines
from judging.campaigns.models import Campaign, Document, Topic
from judging.core.bulk import insert_rows
from judging.core.errors import IntegrityFailure
from tests.conftest import need_service

pytestmark = pytest.mark.django_db


def snapshot(campaign: Campaign) -> dict[str, Any]:
    """Everything that must not move: every version's rows and hash, judgments and history."""
    return {
        "versions": sorted(
            QrelsVersion.objects.filter(campaign=campaign).values_list(
                "pk", "number", "content_hash", "num_judgments", "note"
            )
        ),
        "rows": sorted(
            QrelsEntry.objects.filter(version__campaign=campaign).values_list(
                "version_id", "topic_id", "docid", "grade"
            )
        ),
        "judgments": sorted(
            Judgment.objects.filter(campaign=campaign).values_list(
                "pk", "topic_id", "docid", "annotator_id", "grade"
            )
        ),
        "history": sorted(
            JudgmentChange.objects.filter(topic__campaign=campaign).values_list(
                "pk", "topic_id", "docid", "old_grade", "new_grade"
            )
        ),
    }


@pytest.fixture
def published(demo: Campaign) -> Iterator[tuple[Campaign, dict[str, Any]]]:
    """The demo (qrels v1 published from the simulated assessors' judgments) and its snapshot,
    which each test checks again at its end."""
    before = snapshot(demo)
    assert before["rows"] and before["judgments"] and before["history"]
    version = QrelsVersion.objects.get(campaign=demo)
    assert content_hash(qrels_export_lines(version)) == version.content_hash
    yield demo, before
    assert snapshot(demo) == before
    version.refresh_from_db()
    assert content_hash(qrels_export_lines(version)) == version.content_hash


@pytest.fixture
def superuser_client(client: Client) -> Client:
    user = get_user_model().objects.create_superuser("root", password="pw-for-tests-only")
    client.force_login(user)
    return client


def judged_topic(campaign: Campaign) -> Topic:
    return Topic.objects.get(pk=QrelsEntry.objects.filter(version__campaign=campaign)[0].topic_id)


# --- the admin --------------------------------------------------------------------------------


def test_the_admin_refuses_to_delete_a_topic_with_published_judgments_and_says_why(
    published: Any, superuser_client: Client
) -> None:
    campaign, _ = published
    topic = judged_topic(campaign)
    url = f"/admin/campaigns/topic/{topic.pk}/delete/"
    page = superuser_client.get(url).content.decode()
    assert "protected" in page and "are never deleted" in page
    assert "qrels entries" in page and "judgments" in page
    r = superuser_client.post(url, {"post": "yes"})
    assert r.status_code == 200  # the refusal page again, not a redirect after deleting
    assert Topic.objects.filter(pk=topic.pk).exists()


def test_the_admin_bulk_delete_of_topics_and_campaigns_is_refused(
    published: Any, superuser_client: Client
) -> None:
    campaign, _ = published
    topics = list(campaign.topics.values_list("pk", flat=True))
    r = superuser_client.post(
        "/admin/campaigns/topic/",
        {"action": "delete_selected", "_selected_action": topics, "post": "yes"},
    )
    assert r.status_code == 200 and "are never deleted" in r.content.decode()
    assert campaign.topics.count() == len(topics)
    r = superuser_client.post(f"/admin/campaigns/campaign/{campaign.pk}/delete/", {"post": "yes"})
    assert r.status_code == 200 and "are never deleted" in r.content.decode()
    assert Campaign.objects.filter(pk=campaign.pk).exists()


def test_deleting_a_document_in_the_admin_leaves_the_qrels_alone(
    published: Any, superuser_client: Client
) -> None:
    campaign, _ = published
    docid = QrelsEntry.objects.filter(version__campaign=campaign)[0].docid
    document = Document.objects.get(campaign=campaign, docid=docid)
    r = superuser_client.post(f"/admin/campaigns/document/{document.pk}/delete/", {"post": "yes"})
    assert r.status_code == 302
    assert not Document.objects.filter(pk=document.pk).exists()
    # (the fixture checks that rows, hash, judgments and history are unchanged)


def test_the_admin_shows_qrels_versions_and_judgments_read_only(
    published: Any, superuser_client: Client
) -> None:
    campaign, _ = published
    version = QrelsVersion.objects.get(campaign=campaign)
    judgment = Judgment.objects.filter(campaign=campaign).first()
    assert judgment is not None
    for base, pk in (
        ("/admin/assessments/qrelsversion/", version.pk),
        ("/admin/assessments/judgment/", judgment.pk),
    ):
        page = superuser_client.get(f"{base}{pk}/change/")
        assert page.status_code == 200 and "never" in page.content.decode()
        assert superuser_client.post(f"{base}{pk}/delete/", {"post": "yes"}).status_code == 403
        assert superuser_client.post(f"{base}{pk}/change/", {"note": "x"}).status_code == 403
    r = superuser_client.post(
        "/admin/assessments/qrelsversion/",
        {"action": "delete_selected", "_selected_action": [version.pk], "post": "yes"},
    )
    assert QrelsVersion.objects.filter(pk=version.pk).exists(), r.status_code


def test_a_topic_nothing_rests_on_can_still_be_deleted(
    campaign: Campaign, superuser_client: Client
) -> None:
    topic = campaign.topics.get(qid="403")
    r = superuser_client.post(f"/admin/campaigns/topic/{topic.pk}/delete/", {"post": "yes"})
    assert r.status_code == 302 and not Topic.objects.filter(pk=topic.pk).exists()


# --- the API ----------------------------------------------------------------------------------


def test_the_api_refuses_to_change_or_delete_a_version_with_409(
    published: Any, api_client_for: Any, admin_user: Any
) -> None:
    campaign, _ = published
    version = QrelsVersion.objects.get(campaign=campaign)
    admin = api_client_for(admin_user)
    url = f"/api/v1/qrels/{version.pk}/"
    for r in (
        admin.delete(url),
        admin.patch(url, {"note": "edited", "content_hash": "0" * 64}, format="json"),
        admin.put(url, {"note": "edited"}, format="json"),
    ):
        assert r.status_code == 409, r.content
        body = r.json()
        assert body["error"] == "conflict" and "never changes" in body["detail"]


def test_the_api_answers_409_when_the_database_refuses(
    published: Any, api_client_for: Any, admin_user: Any
) -> None:
    """A refusal of the triggers or of a PROTECT key that reaches a view is a 409 in the one
    error shape, never a 500 (the handler, called as DRF calls it)."""
    from judging.api.errors import exception_handler

    campaign, _ = published
    with pytest.raises(ProtectedError) as protected:
        judged_topic(campaign).delete()
    r = exception_handler(protected.value, {})
    assert r is not None and r.status_code == 409
    assert r.data["error"] == "conflict" and "qrels entries" in r.data["detail"]
    with pytest.raises(IntegrityError) as refused, transaction.atomic():
        QrelsEntry.objects.filter(version__campaign=campaign).update(grade=9)
    r = exception_handler(refused.value, {})
    assert r is not None and r.status_code == 409
    assert r.data["detail"] == (
        "refused by the database: immutable: the rows of a stored qrels version never change"
    )


# --- ORM cascades and direct ORM writes -------------------------------------------------------


def test_orm_deletes_that_would_cascade_into_qrels_or_judgments_are_protected(
    published: Any,
) -> None:
    campaign, _ = published
    annotator = Judgment.objects.filter(campaign=campaign)[0].annotator
    for delete in (
        judged_topic(campaign).delete,
        campaign.delete,
        QrelsVersion.objects.get(campaign=campaign).delete,
        annotator.delete,
    ):
        with pytest.raises(ProtectedError), transaction.atomic():
            delete()


@pytest.mark.parametrize(
    "write",
    [
        lambda c: QrelsEntry.objects.filter(version__campaign=c).delete(),
        lambda c: QrelsEntry.objects.filter(version__campaign=c).update(grade=3),
        lambda c: QrelsVersion.objects.filter(campaign=c).update(content_hash="0" * 64),
        lambda c: QrelsVersion.objects.filter(campaign=c).update(num_judgments=1),
        lambda c: QrelsVersion.objects.filter(campaign=c).update(note="rewritten"),
        lambda c: Judgment.objects.filter(campaign=c).delete(),
        lambda c: Judgment.objects.filter(campaign=c).update(grade=3),
        lambda c: Judgment.objects.filter(campaign=c).update(docid="other"),
        lambda c: JudgmentChange.objects.filter(topic__campaign=c).delete(),
        lambda c: JudgmentChange.objects.filter(topic__campaign=c).update(new_grade=3),
    ],
    ids=[
        "entries-delete",
        "entries-update",
        "version-hash",
        "version-count",
        "version-note",
        "judgments-delete",
        "judgments-regrade-without-history",
        "judgments-move",
        "history-delete",
        "history-rewrite",
    ],
)
def test_the_database_refuses_orm_writes_that_bypass_the_services(
    published: Any, write: Callable[[Campaign], Any]
) -> None:
    campaign, _ = published
    with pytest.raises(IntegrityError, match="immutable:"), transaction.atomic():
        write(campaign)


def test_the_triggers_are_installed_on_this_database() -> None:
    assert immutability.installed(connection) == immutability.expected(connection.vendor)
    assert immutability.expected(connection.vendor)


def test_the_triggers_come_back_after_a_migration_that_rebuilt_a_table() -> None:
    """SQLite rebuilds a table to alter it, and the rebuilt table has no triggers: every
    ``migrate`` installs them again (post_migrate); installing twice changes nothing."""
    from judging.assessments.apps import _reinstall_triggers

    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute("DROP TRIGGER pj_qrelsentry_no_delete")
        else:
            cursor.execute("DROP TRIGGER pj_qrelsentry_no_delete ON assessments_qrelsentry")
    assert "pj_qrelsentry_no_delete" not in immutability.installed(connection)
    _reinstall_triggers(using="default")
    _reinstall_triggers(using="default")
    assert immutability.installed(connection) == immutability.expected(connection.vendor)


def test_the_guarded_columns_can_still_be_altered_by_a_later_migration() -> None:
    """No trigger names a column in a WHEN clause on PostgreSQL (which would forbid altering the
    column's type): a later migration may widen a guarded column."""
    if connection.vendor != "postgresql":
        pytest.skip("SQLite rebuilds the table instead (see the test above)")
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # no deferred checks pending: ALTER may
        cursor.execute("ALTER TABLE assessments_qrelsversion ALTER COLUMN source TYPE varchar(40)")
        cursor.execute(
            "ALTER TABLE assessments_judgmentchange ALTER COLUMN docid TYPE varchar(600)"
        )
        cursor.execute("ALTER TABLE assessments_judgment ALTER COLUMN docid TYPE varchar(600)")


# --- raw SQL ----------------------------------------------------------------------------------

RAW = [
    "UPDATE assessments_qrelsentry SET grade = grade + 1",
    "INSERT INTO assessments_qrelsentry (version_id, topic_id, docid, grade) "
    "SELECT version_id, topic_id, 'smuggled', grade FROM assessments_qrelsentry LIMIT 1",
    "UPDATE assessments_qrelsversion SET sealed = FALSE",
    "DELETE FROM assessments_qrelsentry",
    "UPDATE assessments_qrelsversion SET content_hash = 'forged'",
    "DELETE FROM assessments_qrelsversion",
    "UPDATE assessments_judgment SET grade = grade + 1",
    "DELETE FROM assessments_judgment",
    "UPDATE assessments_judgmentchange SET new_grade = 0",
    # a history row's spans are what it recorded (a passage's offsets, the answers marked)
    """UPDATE assessments_judgmentchange SET spans = '{"answers": [[0, 1]]}'""",
    "DELETE FROM assessments_judgmentchange",
]


@pytest.mark.parametrize("sql", RAW)
def test_raw_sql_cannot_change_qrels_or_judgments(published: Any, sql: str) -> None:
    with (
        pytest.raises(IntegrityError, match="immutable:"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(sql)


# --- no row is added to a stored version (issue 29, point 20) ---------------------------------

SMUGGLED = "smuggled-doc"


def _insert_one(version: QrelsVersion, topic: Topic) -> None:
    QrelsEntry.objects.create(version=version, topic=topic, docid=SMUGGLED, grade=2)


def _insert_bulk(version: QrelsVersion, topic: Topic) -> None:
    QrelsEntry.objects.bulk_create(
        [QrelsEntry(version=version, topic=topic, docid=SMUGGLED, grade=2)]
    )


def _insert_sql(version: QrelsVersion, topic: Topic) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO assessments_qrelsentry (version_id, topic_id, docid, grade) "
            "VALUES (%s, %s, %s, 2)",
            [version.pk, topic.pk, SMUGGLED],
        )


def _insert_fast(version: QrelsVersion, topic: Topic) -> None:
    """The services' own bulk path: COPY on PostgreSQL, executemany on SQLite."""
    columns = ("version_id", "topic_id", "docid", "grade", "judge_id")
    insert_rows(QrelsEntry, columns, [(version.pk, topic.pk, SMUGGLED, 2, None)])


@pytest.mark.parametrize(
    "insert",
    [_insert_one, _insert_bulk, _insert_sql, _insert_fast],
    ids=["orm-create", "orm-bulk-create", "raw-sql", "bulk-insert"],
)
def test_no_row_is_added_to_a_stored_version(
    published: Any, insert: Callable[[QrelsVersion, Topic], None]
) -> None:
    """Before: UPDATE and DELETE were refused but INSERT accepted, and the export then answered
    409 (its rows no longer hashed to the version's hash). The fixture checks the rows and the
    export's hash at the end."""
    campaign, _ = published
    version = QrelsVersion.objects.get(campaign=campaign)
    assert version.sealed
    with pytest.raises(IntegrityError, match=immutability.ENTRY_INSERT), transaction.atomic():
        insert(version, judged_topic(campaign))


def test_an_added_row_is_a_409_naming_the_refusal(published: Any) -> None:
    from judging.api.errors import exception_handler

    campaign, _ = published
    version = QrelsVersion.objects.get(campaign=campaign)
    with pytest.raises(IntegrityError) as refused, transaction.atomic():
        _insert_one(version, judged_topic(campaign))
    r = exception_handler(refused.value, {})
    assert r is not None and r.status_code == 409
    assert r.data["detail"] == f"refused by the database: {immutability.ENTRY_INSERT}"


def test_a_stored_version_is_never_unsealed(published: Any) -> None:
    campaign, _ = published
    with pytest.raises(IntegrityError, match="immutable:"), transaction.atomic():
        QrelsVersion.objects.filter(campaign=campaign).update(sealed=False)


def test_publishing_and_importing_still_store_their_rows_and_seal_the_version(
    demo: Campaign, admin_user: Any
) -> None:
    """The rows of a new version are written in the transaction that stores it, before it is
    sealed: publishing (the judgments) and importing (a file) store every row."""
    from judging.assessments.services import qrels_import, qrels_publish

    annotator = get_user_model().objects.get(username="annotator")
    lease = lease_next(campaign=demo, annotator=annotator)
    assert lease is not None
    judgment_record(lease_id=lease.pk, annotator=annotator, grade=2)
    published, created = qrels_publish(campaign=demo, created_by=admin_user)
    lines = qrels_export_lines(QrelsVersion.objects.get(campaign=demo, number=1))
    imported = qrels_import(campaign=demo, data="".join(lines).encode(), created_by=admin_user)
    assert created and published.number == 2 and imported.number == 3
    for version in (published, imported):
        version.refresh_from_db()
        assert version.sealed
        assert QrelsEntry.objects.filter(version=version).count() == version.num_judgments > 0
        assert content_hash(qrels_export_lines(version)) == version.content_hash
        with pytest.raises(IntegrityError, match=immutability.ENTRY_INSERT), transaction.atomic():
            _insert_one(version, judged_topic(demo))


@pytest.mark.services
def test_postgresql_takes_a_copy_into_an_unsealed_version_and_refuses_one_once_sealed(
    published: Any,
) -> None:
    """PostgreSQL's guard runs once per statement, on the rows it added: a COPY of many rows
    into a version being stored passes, one row more after the seal is refused."""
    need_service(connection.vendor == "postgresql", "the COPY path needs PostgreSQL")
    campaign, _ = published
    topic = judged_topic(campaign)
    columns = ("version_id", "topic_id", "docid", "grade", "judge_id")
    with transaction.atomic():
        version = QrelsVersion.objects.create(
            campaign=campaign, number=99, source="imported", content_hash="x", sealed=False
        )
        insert_rows(
            QrelsEntry, columns, [(version.pk, topic.pk, f"d{i}", 1, None) for i in range(5000)]
        )
        QrelsVersion.objects.filter(pk=version.pk).update(sealed=True)
        assert QrelsEntry.objects.filter(version=version).count() == 5000
        with pytest.raises(IntegrityError, match=immutability.ENTRY_INSERT), transaction.atomic():
            insert_rows(QrelsEntry, columns, [(version.pk, topic.pk, "one-more", 1, None)])
        transaction.set_rollback(True)
    assert not QrelsVersion.objects.filter(pk=version.pk).exists()


def test_what_may_change_still_can(published: Any) -> None:
    """The attribution of a version, and a judgment's slot (queue bookkeeping), are not what the
    version says: a deleted admin account or slot may unlink them."""
    campaign, _ = published
    # the triggers would raise; the counts show the rows were really there to change
    assert QrelsVersion.objects.filter(campaign=campaign).update(created_by=None) > 0
    assert Judgment.objects.filter(campaign=campaign).update(slot=None) > 0


# --- the services: judging goes on, undo reaches the next version ----------------------------


def test_an_undo_after_a_publish_is_reflected_by_the_next_publish(
    demo: Campaign, api_client_for: Any, admin_user: Any
) -> None:
    """The demo annotator judges an item of topic 6 (left to them), it is published in v2, they
    undo it: v3 has the item no more (it was "nothing changed", v2 again)."""
    annotator = get_user_model().objects.get(username="annotator")
    admin = api_client_for(admin_user)
    lease = lease_next(campaign=demo, annotator=annotator)
    assert lease is not None
    item = (lease.slot.topic.qid, lease.slot.docid)
    judgment_record(lease_id=lease.pk, annotator=annotator, grade=2)

    def publish() -> Any:
        return admin.post(f"/api/v1/campaigns/{demo.pk}/qrels/publish/", {}, format="json")

    def rows(version_id: int) -> dict[tuple[str, str], int]:
        return {
            (q, d): g
            for q, d, g in QrelsEntry.objects.filter(version_id=version_id).values_list(
                "topic__qid", "docid", "grade"
            )
        }

    v2 = publish()
    assert v2.status_code == 201 and rows(v2.json()["id"])[item] == 2
    judgment_undo(campaign=demo, annotator=annotator)
    v3 = publish()
    assert v3.status_code == 201, v3.content  # not "nothing changed"
    assert v3.json()["number"] == 3
    expected = {k: g for k, g in rows(v2.json()["id"]).items() if k != item}
    assert rows(v3.json()["id"]) == expected
    assert rows(v2.json()["id"])[item] == 2  # v2 is what it was
    # the undo is in the history; the judgment row is gone only because it was recorded
    assert JudgmentChange.objects.filter(
        annotator=annotator, docid=item[1], new_grade=None
    ).exists()


# --- the export's hash check ------------------------------------------------------------------


@contextmanager
def triggers_off() -> Iterator[None]:
    """What only someone with the database owner's rights can do: switch the triggers off (in
    the test's transaction, rolled back after it)."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL session_replication_role = replica")  # superuser only
        try:
            yield
        finally:
            with connection.cursor() as cursor:
                cursor.execute("SET LOCAL session_replication_role = origin")
    else:
        with immutability.unguarded():
            yield


def test_an_export_whose_rows_no_longer_match_the_stored_hash_is_refused_and_logged(
    demo: Campaign, api_client_for: Any, researcher: Any, caplog: Any
) -> None:
    version = QrelsVersion.objects.get(campaign=demo)
    with triggers_off():
        QrelsEntry.objects.filter(pk=QrelsEntry.objects.filter(version=version)[0].pk).delete()
    with caplog.at_level(logging.ERROR, logger="judging.assessments.services"):
        r = api_client_for(researcher).get(f"/api/v1/qrels/{version.pk}/export/")
    assert r.status_code == 409
    body = r.json()
    assert body["error"] == "integrity_check_failed"
    assert f"qrels version {version.number} fails its integrity check" in body["detail"]
    assert any("fails its hash check" in rec.getMessage() for rec in caplog.records)
    with pytest.raises(IntegrityFailure):
        qrels_export_lines(version)
    with pytest.raises(CommandError, match="integrity check"):
        call_command("export_qrels", "--campaign", str(demo.pk))
