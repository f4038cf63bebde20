"""Items of other kinds than documents in the one judging queue (nugget creation and
assignment, citation support) and nugget banks; the guards cover an item's kind."""

from typing import Any

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def triggers_before(apps: Any, schema_editor: Any) -> None:
    from judging.assessments import immutability

    immutability.uninstall(schema_editor.connection)
    immutability.install(
        schema_editor.connection,
        history_columns=immutability.HISTORY_COLUMNS_BEFORE_0016,
        kinds=False,
    )


def no_triggers(apps: Any, schema_editor: Any) -> None:
    from judging.assessments import immutability

    immutability.uninstall(schema_editor.connection)


def triggers_now(apps: Any, schema_editor: Any) -> None:
    from judging.assessments import immutability

    immutability.uninstall(schema_editor.connection)
    immutability.install(schema_editor.connection)


class Migration(migrations.Migration):
    dependencies = [
        ("assessments", "0015_qrels_derivations"),
        ("campaigns", "0017_run_answers"),
        ("pools", "0003_sampled_pools"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RunPython(no_triggers, triggers_before),
        migrations.CreateModel(
            name="JudgingUnit",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "kind",
                    models.CharField(
                        choices=[
                            ("document", "document relevance"),
                            ("nugget_creation", "nugget creation"),
                            ("nugget_assignment", "nugget assignment"),
                            ("citation_support", "citation support"),
                        ],
                        max_length=20,
                    ),
                ),
                ("key", models.CharField(max_length=1024)),
                (
                    "payload",
                    models.JSONField(help_text="What the screen shows (assessments.units)."),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
            ],
        ),
        migrations.CreateModel(
            name="Nugget",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("key", models.CharField(max_length=40)),
                ("position", models.PositiveIntegerField()),
                ("text", models.TextField()),
                (
                    "importance",
                    models.CharField(choices=[("vital", "vital"), ("okay", "okay")], max_length=5),
                ),
                (
                    "sources",
                    models.JSONField(
                        blank=True, default=list, help_text="The segment ids it was drafted from."
                    ),
                ),
            ],
            options={
                "ordering": ["topic_id", "position", "pk"],
            },
        ),
        migrations.CreateModel(
            name="NuggetBank",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("number", models.PositiveIntegerField()),
                (
                    "state",
                    models.CharField(
                        choices=[
                            ("draft", "draft (being edited)"),
                            ("published", "published (frozen)"),
                        ],
                        default="draft",
                        max_length=10,
                    ),
                ),
                (
                    "source",
                    models.CharField(
                        help_text="How the draft began: judge, extracted, imported, copied.",
                        max_length=20,
                    ),
                ),
                ("note", models.TextField(blank=True)),
                (
                    "content_hash",
                    models.CharField(blank=True, help_text="Set when published.", max_length=64),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("published_at", models.DateTimeField(blank=True, null=True)),
            ],
        ),
        migrations.CreateModel(
            name="NuggetEdit",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("op", models.CharField(max_length=12)),
                ("before", models.JSONField(default=list)),
                ("after", models.JSONField(default=list)),
                ("edited_at", models.DateTimeField(auto_now_add=True)),
            ],
            options={
                "ordering": ["edited_at", "pk"],
            },
        ),
        migrations.RemoveConstraint(
            model_name="adjudication",
            name="adjudication_unique",
        ),
        migrations.RemoveConstraint(
            model_name="golditem",
            name="gold_item_unique",
        ),
        migrations.RemoveConstraint(
            model_name="judgingslot",
            name="slot_unique",
        ),
        migrations.RemoveConstraint(
            model_name="judgment",
            name="judgment_unique",
        ),
        migrations.AddField(
            model_name="adjudication",
            name="kind",
            field=models.CharField(
                choices=[
                    ("document", "document relevance"),
                    ("nugget_creation", "nugget creation"),
                    ("nugget_assignment", "nugget assignment"),
                    ("citation_support", "citation support"),
                ],
                default="document",
                help_text="What is judged; ``docid`` is the item's key in its kind (assessments.units).",
                max_length=20,
            ),
        ),
        migrations.AddField(
            model_name="adjudicationchange",
            name="kind",
            field=models.CharField(
                choices=[
                    ("document", "document relevance"),
                    ("nugget_creation", "nugget creation"),
                    ("nugget_assignment", "nugget assignment"),
                    ("citation_support", "citation support"),
                ],
                default="document",
                help_text="What is judged; ``docid`` is the item's key in its kind (assessments.units).",
                max_length=20,
            ),
        ),
        migrations.AddField(
            model_name="golditem",
            name="kind",
            field=models.CharField(
                choices=[
                    ("document", "document relevance"),
                    ("nugget_creation", "nugget creation"),
                    ("nugget_assignment", "nugget assignment"),
                    ("citation_support", "citation support"),
                ],
                default="document",
                help_text="What is judged; ``docid`` is the item's key in its kind (assessments.units).",
                max_length=20,
            ),
        ),
        migrations.AddField(
            model_name="judgingslot",
            name="kind",
            field=models.CharField(
                choices=[
                    ("document", "document relevance"),
                    ("nugget_creation", "nugget creation"),
                    ("nugget_assignment", "nugget assignment"),
                    ("citation_support", "citation support"),
                ],
                default="document",
                help_text="What is judged; ``docid`` is the item's key in its kind (assessments.units).",
                max_length=20,
            ),
        ),
        migrations.AddField(
            model_name="judgment",
            name="kind",
            field=models.CharField(
                choices=[
                    ("document", "document relevance"),
                    ("nugget_creation", "nugget creation"),
                    ("nugget_assignment", "nugget assignment"),
                    ("citation_support", "citation support"),
                ],
                default="document",
                help_text="What is judged; ``docid`` is the item's key in its kind (assessments.units).",
                max_length=20,
            ),
        ),
        migrations.AddField(
            model_name="judgmentchange",
            name="kind",
            field=models.CharField(
                choices=[
                    ("document", "document relevance"),
                    ("nugget_creation", "nugget creation"),
                    ("nugget_assignment", "nugget assignment"),
                    ("citation_support", "citation support"),
                ],
                default="document",
                help_text="What is judged; ``docid`` is the item's key in its kind (assessments.units).",
                max_length=20,
            ),
        ),
        migrations.AddConstraint(
            model_name="adjudication",
            constraint=models.UniqueConstraint(
                fields=("topic", "kind", "docid"), name="adjudication_unique"
            ),
        ),
        migrations.AddConstraint(
            model_name="golditem",
            constraint=models.UniqueConstraint(
                fields=("topic", "kind", "docid"), name="gold_item_unique"
            ),
        ),
        migrations.AddConstraint(
            model_name="judgingslot",
            constraint=models.UniqueConstraint(
                condition=models.Q(("gold_for__isnull", True)),
                fields=("topic", "kind", "docid", "slot"),
                name="slot_unique",
            ),
        ),
        migrations.AddConstraint(
            model_name="judgment",
            constraint=models.UniqueConstraint(
                fields=("topic", "kind", "docid", "annotator"), name="judgment_unique"
            ),
        ),
        migrations.AddField(
            model_name="judgingunit",
            name="campaign",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="campaigns.campaign",
            ),
        ),
        migrations.AddField(
            model_name="judgingunit",
            name="topic",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE, related_name="+", to="campaigns.topic"
            ),
        ),
        migrations.AddField(
            model_name="nugget",
            name="topic",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT, related_name="+", to="campaigns.topic"
            ),
        ),
        migrations.AddField(
            model_name="nuggetbank",
            name="based_on",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="assessments.nuggetbank",
            ),
        ),
        migrations.AddField(
            model_name="nuggetbank",
            name="campaign",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT,
                related_name="nugget_banks",
                to="campaigns.campaign",
            ),
        ),
        migrations.AddField(
            model_name="nuggetbank",
            name="created_by",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AddField(
            model_name="nuggetbank",
            name="qrels",
            field=models.ForeignKey(
                blank=True,
                help_text="The qrels version whose relevant segments it was drafted from.",
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="assessments.qrelsversion",
            ),
        ),
        migrations.AddField(
            model_name="nugget",
            name="bank",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="nuggets",
                to="assessments.nuggetbank",
            ),
        ),
        migrations.AddField(
            model_name="nuggetedit",
            name="bank",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="edits",
                to="assessments.nuggetbank",
            ),
        ),
        migrations.AddField(
            model_name="nuggetedit",
            name="editor",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AddField(
            model_name="nuggetedit",
            name="topic",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT, related_name="+", to="campaigns.topic"
            ),
        ),
        migrations.AddConstraint(
            model_name="judgingunit",
            constraint=models.UniqueConstraint(
                fields=("topic", "kind", "key"), name="judging_unit_unique"
            ),
        ),
        migrations.AddConstraint(
            model_name="nuggetbank",
            constraint=models.UniqueConstraint(
                fields=("campaign", "number"), name="nugget_bank_number"
            ),
        ),
        migrations.AddConstraint(
            model_name="nugget",
            constraint=models.UniqueConstraint(
                fields=("bank", "topic", "key"), name="nugget_key_unique"
            ),
        ),
        migrations.RunPython(triggers_now, no_triggers),
    ]
