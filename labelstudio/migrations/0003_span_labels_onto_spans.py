"""Span labels pulled before EvidenceSpan had a label field lived only on PulledItem: copy them
onto the spans (where pages and exports read them). Spans that already have a label keep it."""
from django.db import migrations


def copy_labels(apps, schema_editor) -> None:
    PulledItem = apps.get_model("labelstudio", "PulledItem")
    EvidenceSpan = apps.get_model("annotate", "EvidenceSpan")
    for span_id, label in (PulledItem.objects.filter(kind="span", span__isnull=False).exclude(label="")
                           .order_by("pk").values_list("span_id", "label")):
        EvidenceSpan.objects.filter(pk=span_id, label="").update(label=label)


class Migration(migrations.Migration):
    dependencies = [
        ("annotate", "0005_evidencespan_state"),
        ("labelstudio", "0002_contributions_identity"),
    ]

    operations = [migrations.RunPython(copy_labels, migrations.RunPython.noop)]
