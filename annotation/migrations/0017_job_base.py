"""One background-job base (core.jobs.Job) for corpus uploads, classifier builds and router builds.

Adds what the three did not all have: a machine-readable `error_detail`, a `heartbeat_at` column (the builds
and uploads kept a heartbeat inside their JSON details), and an upload's `started_at` and `total`.
Router builds that failed on bad upload lines before it get those lines as data in `error_detail` (read from
the "line N: problem" lines of their message, which is how they were written).
"""
import re

from django.db import migrations, models

BAD_LINE = re.compile(r"line (\d+): (.+)")


def router_build_lines_to_detail(apps, schema_editor):
    RouterBuild = apps.get_model("annotation", "RouterBuild")
    for build in RouterBuild.objects.filter(status="failed", error__contains="\nline ").only("pk", "error"):
        found = (BAD_LINE.fullmatch(text.strip()) for text in build.error.splitlines()[1:])
        lines = [{"line": int(match.group(1)), "problem": match.group(2)} for match in found if match]
        if lines:
            RouterBuild.objects.filter(pk=build.pk).update(error_detail={"lines": lines, "count": len(lines)})


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
        migrations.RunPython(router_build_lines_to_detail, migrations.RunPython.noop),
    ]
