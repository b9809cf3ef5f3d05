"""One background-job base (core.jobs.Job) for corpus uploads, classifier builds and router builds.

Adds what the three did not all have: a machine-readable `error_detail`, a `heartbeat_at` column (the builds
and uploads kept a heartbeat inside their JSON details), and an upload's `started_at` and `total`.
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("annotation", "0016_router_builds")]

    operations = [
        migrations.AddField(model_name="classifierbuild", name="error_detail",
                            field=models.JSONField(blank=True, null=True)),
        migrations.AddField(model_name="classifierbuild", name="heartbeat_at",
                            field=models.DateTimeField(blank=True, null=True)),
        migrations.AddField(model_name="corpusupload", name="error_detail",
                            field=models.JSONField(blank=True, null=True)),
        migrations.AddField(model_name="corpusupload", name="heartbeat_at",
                            field=models.DateTimeField(blank=True, null=True)),
        migrations.AddField(model_name="corpusupload", name="started_at",
                            field=models.DateTimeField(blank=True, null=True)),
        migrations.AddField(model_name="corpusupload", name="total",
                            field=models.PositiveBigIntegerField(default=0)),
        migrations.AddField(model_name="routerbuild", name="error_detail",
                            field=models.JSONField(blank=True, null=True)),
        migrations.AddField(model_name="routerbuild", name="heartbeat_at",
                            field=models.DateTimeField(blank=True, null=True)),
    ]
