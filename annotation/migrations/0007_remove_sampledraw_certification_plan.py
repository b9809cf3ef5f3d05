from django.db import migrations


class Migration(migrations.Migration):
    """Drop the foreign key into estimation once estimation 0003 has copied it into its link table."""

    dependencies = [
        ('annotation', '0006_sampledraw_stratum_key'),
        ('estimation', '0003_certificationplandraw'),
    ]

    operations = [
        migrations.RemoveField(
            model_name='sampledraw',
            name='certification_plan',
        ),
    ]
