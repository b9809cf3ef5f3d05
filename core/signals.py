"""Receivers that keep the permission cache (core/auth.py) honest: any change to who holds which
permission replaces its version token. Connected by `CoreConfig.ready` in every process, so a change
made anywhere (a page, the admin, `manage.py user_add`, a shell) is seen by every web process."""
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.db.models.signals import m2m_changed, post_delete, post_save
from django.dispatch import receiver

from core.auth import permissions_version_bump

_CHANGING = {"post_add", "post_remove", "post_clear"}
User = get_user_model()


@receiver(m2m_changed, sender=User.groups.through, dispatch_uid="core-perms-user-groups")
@receiver(m2m_changed, sender=User.user_permissions.through, dispatch_uid="core-perms-user-permissions")
@receiver(m2m_changed, sender=Group.permissions.through, dispatch_uid="core-perms-group-permissions")
def permissions_links_changed(sender: Any, action: str, **kwargs: Any) -> None:
    if action in _CHANGING:
        permissions_version_bump()


@receiver(post_delete, sender=User, dispatch_uid="core-perms-user-deleted")
@receiver(post_save, sender=Group, dispatch_uid="core-perms-group-saved")
@receiver(post_delete, sender=Group, dispatch_uid="core-perms-group-deleted")
@receiver(post_save, sender=Permission, dispatch_uid="core-perms-permission-saved")
@receiver(post_delete, sender=Permission, dispatch_uid="core-perms-permission-deleted")
def permissions_rows_changed(sender: Any, **kwargs: Any) -> None:
    permissions_version_bump()
