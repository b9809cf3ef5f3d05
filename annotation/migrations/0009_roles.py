"""The three role groups on every database (issue 15): a fresh production deploy has them.

Before this, only `demo_setup` (refused under production settings) created them. The
mapping is frozen here as it was when written (annotation/roles.py is the live one;
`roles_ensure()`, which `user_add` calls, brings the groups up to date if it changes).
Existing groups and their members are kept; only missing permissions are added.
"""
from django.contrib.auth.management import create_permissions
from django.db import migrations

ROLE_PERMISSIONS = {
    "analyst": ("configure_topics", "read_reports"),
    "manager": ("read_reports",),
    "annotator": ("annotate",),
}


def roles_create(apps, schema_editor):
    # Permissions are normally created after all migrations (post_migrate); make sure ours
    # exist now, on a database that is being created by this very migrate.
    app_config = apps.get_app_config("annotation")
    app_config.models_module = True
    create_permissions(app_config, apps=apps, verbosity=0, using=schema_editor.connection.alias)
    app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    db = schema_editor.connection.alias
    for role, codenames in ROLE_PERMISSIONS.items():
        group, _ = Group.objects.using(db).get_or_create(name=role)
        perms = Permission.objects.using(db).filter(content_type__app_label="annotation", codename__in=codenames)
        group.permissions.add(*perms)


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0008_region_neither"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    # Reversing keeps the groups: they may hold users by then.
    operations = [migrations.RunPython(roles_create, migrations.RunPython.noop)]
