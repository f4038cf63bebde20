"""A pool version may take from answer runs only what their answers received or cite (issue 35,
point 4): the ``segments`` option, ``ranked`` (every version so far) by default."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("pools", "0003_sampled_pools")]

    operations = [
        migrations.AlterField(
            model_name="poolversion",
            name="depth",
            field=models.PositiveIntegerField(
                help_text="Ranks 1..depth of every contributing run (an answer run's answered "
                "topics under segments received or cited: its answer's whole list)."
            ),
        ),
        migrations.AddField(
            model_name="poolversion",
            name="segments",
            field=models.CharField(
                choices=[
                    ("ranked", "Ranked lists"),
                    ("received", "What the generator received"),
                    ("cited", "What the answers cite"),
                ],
                db_default="ranked",
                default="ranked",
                help_text="What an answer run contributes for a topic it answered. ranked: its "
                "ranked list (its references) cut to the depth, as any run. received: every "
                "reference of its answer, whatever the depth (what the generator received). "
                "cited: only the references some sentence of its answer cites, in reference "
                "order, whatever the depth (what the reader saw). Runs without an answer for the "
                "topic contribute their ranked list cut to the depth; the strategy and the budget "
                "apply as usual.",
                max_length=10,
            ),
        ),
    ]
