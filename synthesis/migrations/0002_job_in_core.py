"""``SynthesisRun.job`` points at the core's Job (the same ``annotate_job`` table): state only."""
import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("casebook", "0001_initial"),
        ("synthesis", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="synthesisrun",
                    name="job",
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL,
                                            related_name="+", to="casebook.job"),
                ),
            ],
            database_operations=[],
        ),
    ]
