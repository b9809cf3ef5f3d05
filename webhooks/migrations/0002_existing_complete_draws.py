"""Draws already complete when the webhooks app is installed are recorded as announced, so the first new label
of a topic after the deploy does not send sample.completed for its whole history."""
from django.db import migrations
from django.db.models import Exists, OuterRef, Q


def record_complete_draws(apps, schema_editor):
    SampleDraw = apps.get_model("annotation", "SampleDraw")
    SampledDocument = apps.get_model("annotation", "SampledDocument")
    Label = apps.get_model("annotation", "Label")
    Completion = apps.get_model("webhooks", "WebhookSampleCompletion")
    labelled = Label.objects.filter(Q(majority__isnull=False) | Q(gold__isnull=False), topic_id=OuterRef("topic_id"),
                                    document_id=OuterRef("document_id"))
    incomplete = SampledDocument.objects.filter(draw=OuterRef("pk")).exclude(Exists(labelled))
    draws = (SampleDraw.objects.filter(Exists(SampledDocument.objects.filter(draw=OuterRef("pk"))))
             .exclude(Exists(incomplete)).values_list("pk", "topic_id"))
    Completion.objects.bulk_create([Completion(draw_id=pk, topic_id=topic_id) for pk, topic_id in draws.iterator()],
                                   batch_size=1000, ignore_conflicts=True)


class Migration(migrations.Migration):
    dependencies = [
        ("webhooks", "0001_initial"),
    ]

    operations = [migrations.RunPython(record_complete_draws, migrations.RunPython.noop)]
