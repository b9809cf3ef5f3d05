"""The three roles — analyst, annotator, manager — as groups with explicit permissions.

Views declare the permission they need with `role_required`; assigning a user to
a group in the admin is all it takes to give them a role.
"""
from collections.abc import Callable

from django.contrib.auth.decorators import login_required, permission_required
from django.contrib.auth.models import Group, Permission

CONFIGURE = "annotation.configure_topics"
READ_REPORTS = "annotation.read_reports"
ANNOTATE = "annotation.annotate"

ROLE_PERMISSIONS: dict[str, tuple[str, ...]] = {
    "analyst": (CONFIGURE, READ_REPORTS),
    "manager": (READ_REPORTS,),
    "annotator": (ANNOTATE,),
}


def roles_ensure() -> dict[str, Group]:
    """Create the role groups with their permissions; safe to run any number of times."""
    groups = {}
    for role, perms in ROLE_PERMISSIONS.items():
        group, _ = Group.objects.get_or_create(name=role)
        codenames = [perm.split(".", 1)[1] for perm in perms]
        group.permissions.set(Permission.objects.filter(content_type__app_label="annotation", codename__in=codenames))
        groups[role] = group
    return groups


def role_required(perm: str) -> Callable:
    """Anonymous visitors go to sign-in; signed-in users without the permission get 403."""

    def decorator(view: Callable) -> Callable:
        return login_required(permission_required(perm, raise_exception=True)(view))

    return decorator
