import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0018_crowd_platform"),
    ]

    operations = [
        migrations.AddField(
            model_name="topic",
            name="scorer",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="annotation.classifier",
            ),
        ),
    ]
