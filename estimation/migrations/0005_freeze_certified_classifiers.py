"""Classifiers certified by a locked or decided plan may no longer change (annotation.Classifier.frozen_reason).

New locks freeze their classifier (certification_plan_lock); this freezes the classifiers of plans locked
before, so a threshold can no longer be moved under a locked plan (issue 15 item 7).
"""
from django.db import migrations


def freeze(apps, schema_editor):
    CertificationPlan = apps.get_model("estimation", "CertificationPlan")
    Classifier = apps.get_model("annotation", "Classifier")
    for plan_id, classifier_id in (CertificationPlan.objects.exclude(status="draft")
                                   .order_by("pk").values_list("pk", "classifier_id")):
        Classifier.objects.filter(pk=classifier_id, frozen_reason="").update(
            frozen_reason=f"certification plan {plan_id} (locked) certifies it as it is; "
                          "create a new classifier to try another threshold")


class Migration(migrations.Migration):
    dependencies = [
        ("estimation", "0004_certification_band_attempts"),
        ("annotation", "0011_classifier_frozen_reason"),
    ]

    operations = [migrations.RunPython(freeze, migrations.RunPython.noop)]
