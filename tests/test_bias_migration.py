"""Migration 0003 (topic subsets, reusability reports) keeps the bias reports stored before it.

Its own module: a transactional test cannot share one with the module-scoped demo fixture."""

from __future__ import annotations

import pytest

from judging.campaigns.models import Campaign
from judging.evaluation.models import BiasReport, Reusability
from tests.test_bias_service import tiny  # noqa: F401

pytestmark = pytest.mark.follow_ups


@pytest.mark.django_db(transaction=True)
def test_reports_stored_before_topic_subsets_are_kept_as_reports_of_every_topic(
    tiny: Campaign,  # noqa: F811
) -> None:
    """Migration 0003 gives stored reports the topics "" (all) and keeps them unique per key."""
    from django.db import IntegrityError, connection, transaction
    from django.db.migrations.executor import MigrationExecutor

    before = [("evaluation", "0002_biasreport_requested_by")]
    after = [("evaluation", "0003_topics_and_reusability")]
    report = BiasReport.objects.get(campaign=tiny, measure="AP")
    Reusability.objects.all().delete()  # a table the way back drops
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    try:
        executor.loader.build_graph()
        old = executor.loader.project_state(before).apps.get_model("evaluation", "BiasReport")
        kept = old.objects.get(pk=report.pk)
        assert not hasattr(kept, "topics")
        old.objects.create(
            campaign_id=tiny.pk, qrels_id=report.qrels_id, kind="loo_run", measure="P@5", depth=3
        )
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(after)
    try:
        # the model as it was at 0003 (later migrations give every report a job)
        then = executor.loader.project_state(after).apps.get_model("evaluation", "BiasReport")
        rows = then.objects.filter(campaign_id=tiny.pk).order_by("pk")
        assert [(r.measure, r.topics) for r in rows] == [("AP", ""), ("R@50", ""), ("P@5", "")]
        with pytest.raises(IntegrityError), transaction.atomic():
            then.objects.create(
                campaign_id=tiny.pk,
                qrels_id=report.qrels_id,
                kind="loo_run",
                measure="P@5",
                depth=3,
            )
        then.objects.create(  # the same key on a subset of topics is another report
            campaign_id=tiny.pk,
            qrels_id=report.qrels_id,
            kind="loo_run",
            measure="P@5",
            depth=3,
            topics="401",
        )
    finally:  # the later migrations back, for the tests after this one
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())


@pytest.mark.django_db(transaction=True)
def test_migration_0005_gives_every_stored_evaluation_its_leaderboard_summary(
    tiny: Campaign,  # noqa: F811
) -> None:
    """Evaluations stored before 0005 get their summary (measures, n_queries, excluded_summary),
    which the leaderboard reads, from their result."""
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    from judging.evaluation.models import Evaluation

    stored = {e.pk: e.result for e in Evaluation.objects.filter(run__campaign=tiny)}
    assert stored and all(r.get("measures") for r in stored.values())
    executor = MigrationExecutor(connection)
    executor.migrate([("evaluation", "0004_biaspart")])
    try:
        executor = MigrationExecutor(connection)
        executor.migrate([("evaluation", "0005_evaluation_summary")])
        # the model as it was at 0005 (later migrations give every evaluation a job)
        historical = executor.loader.project_state(
            [("evaluation", "0005_evaluation_summary")]
        ).apps.get_model("evaluation", "Evaluation")
        for ev in historical.objects.filter(pk__in=stored):
            result = stored[ev.pk]
            assert ev.summary == {
                k: result[k] for k in ("measures", "n_queries", "excluded_summary") if k in result
            }
            assert "per_query" not in ev.summary
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())
