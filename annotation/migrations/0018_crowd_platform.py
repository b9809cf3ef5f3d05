"""Crowd platforms (annotation/services/crowd/platforms/): platform-neutral external ids on the core models.

Hit.mturk_hit_id, Assignment.mturk_assignment_id and Worker.mturk_worker_id become `external_id`
(RenameField: data and unique indexes kept). A worker's id is now unique per platform:
Worker.platform names it, and every existing external worker was a Mechanical Turk one.
Topic.crowd keeps its choices out of migrations (annotation.models.CrowdField), so a new
platform's Topic.Crowd value needs no migration.
"""
from django.db import migrations, models
from django.db.models import Q


def _mturk_workers(apps, schema_editor):
    Worker = apps.get_model("annotation", "Worker")
    Worker.objects.filter(external_id__isnull=False).update(platform="mturk")


def _no_platform(apps, schema_editor):
    pass  # the column goes away with the reversed AddField


class Migration(migrations.Migration):
    dependencies = [("annotation", "0017_job_base")]

    operations = [
        migrations.AlterField(
            model_name="topic", name="crowd", field=models.CharField(default="local", max_length=16),
        ),
        migrations.RenameField(model_name="hit", old_name="mturk_hit_id", new_name="external_id"),
        migrations.RenameField(model_name="assignment", old_name="mturk_assignment_id", new_name="external_id"),
        migrations.RemoveConstraint(model_name="worker", name="worker_has_identity"),
        migrations.RenameField(model_name="worker", old_name="mturk_worker_id", new_name="external_id"),
        migrations.AddField(
            model_name="worker", name="platform", field=models.CharField(blank=True, default="", max_length=16),
        ),
        migrations.RunPython(_mturk_workers, _no_platform),
        # Unique per platform (the composite constraint) instead of unique across platforms.
        migrations.AlterField(
            model_name="worker", name="external_id", field=models.CharField(blank=True, max_length=64, null=True),
        ),
        migrations.AddConstraint(
            model_name="worker",
            constraint=models.CheckConstraint(
                condition=Q(user__isnull=False) | Q(external_id__isnull=False), name="worker_has_identity"
            ),
        ),
        migrations.AddConstraint(
            model_name="worker",
            constraint=models.UniqueConstraint(fields=["platform", "external_id"], name="worker_external_id_unique"),
        ),
        migrations.AddConstraint(
            model_name="worker",
            constraint=models.CheckConstraint(
                condition=Q(external_id__isnull=True) | ~Q(platform=""), name="worker_external_id_has_platform"
            ),
        ),
    ]
