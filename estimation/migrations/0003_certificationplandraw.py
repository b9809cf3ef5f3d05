"""The certification link moves to estimation's side (issue 10).

``annotation.SampleDraw.certification_plan`` (a foreign key from annotation into
estimation) is replaced by an opaque ``SampleDraw.stratum_key`` and this app's
``CertificationPlanDraw`` link.  Every existing certification draw gets its link
row and its key ``certification-plan:<plan id>``; the reverse restores the
foreign key values from the links.  annotation 0007 then drops the column.
"""
import django.db.models.deletion
from django.db import migrations, models


def stratum_key(plan_id: int) -> str:
    # Frozen copy of estimation.services.certification_plans.certification_stratum_key.
    return f"certification-plan:{plan_id}"


def links_create(apps, schema_editor):
    SampleDraw = apps.get_model("annotation", "SampleDraw")
    CertificationPlanDraw = apps.get_model("estimation", "CertificationPlanDraw")
    draws = list(SampleDraw.objects.filter(certification_plan__isnull=False).only("pk", "certification_plan_id"))
    CertificationPlanDraw.objects.bulk_create(
        [CertificationPlanDraw(plan_id=d.certification_plan_id, draw_id=d.pk) for d in draws], batch_size=1000)
    for draw in draws:
        SampleDraw.objects.filter(pk=draw.pk).update(stratum_key=stratum_key(draw.certification_plan_id))


def links_restore(apps, schema_editor):
    SampleDraw = apps.get_model("annotation", "SampleDraw")
    CertificationPlanDraw = apps.get_model("estimation", "CertificationPlanDraw")
    for draw_id, plan_id in CertificationPlanDraw.objects.values_list("draw_id", "plan_id"):
        SampleDraw.objects.filter(pk=draw_id).update(certification_plan_id=plan_id, stratum_key="")


class Migration(migrations.Migration):

    dependencies = [
        ('annotation', '0006_sampledraw_stratum_key'),
        ('estimation', '0002_certification_immutable'),
    ]

    operations = [
        migrations.CreateModel(
            name='CertificationPlanDraw',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('draw', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='certification_link', to='annotation.sampledraw')),
                ('plan', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='draw_links', to='estimation.certificationplan')),
            ],
            options={
                'ordering': ['plan', 'draw'],
            },
        ),
        migrations.RunPython(links_create, links_restore),
    ]
