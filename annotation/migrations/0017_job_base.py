"""One background-job base (core.jobs.Job) for corpus uploads, classifier builds and router builds."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("annotation", "0016_router_builds")]

    operations: list[migrations.operations.base.Operation] = []
