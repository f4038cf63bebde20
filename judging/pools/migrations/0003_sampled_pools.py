"""A sampled pool stores every pooled document: its stratum, and whether it was drawn for
judging (issue 32, point 3)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("pools", "0002_docid_up_to_1024_bytes")]

    operations = [
        migrations.AddField(
            model_name="pooldocument",
            name="sampled",
            field=models.BooleanField(
                default=True,
                db_default=True,
                help_text="Drawn for judging; False: in the pool, not sampled (its grade stays "
                "unknown).",
            ),
        ),
        migrations.AddField(
            model_name="pooldocument",
            name="stratum",
            field=models.CharField(
                blank=True,
                default="",
                db_default="",
                help_text="A sampled pool's stratum ('0': judged before the draw); empty "
                "otherwise.",
                max_length=8,
            ),
        ),
    ]
