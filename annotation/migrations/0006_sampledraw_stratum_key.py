from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('annotation', '0005_hit_open_by_topic'),
    ]

    operations = [
        migrations.AddField(
            model_name='sampledraw',
            name='stratum_key',
            field=models.CharField(blank=True, default='', max_length=64),
        ),
    ]
