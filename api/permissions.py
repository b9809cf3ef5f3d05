"""The pages' roles (annotation/roles.py), for the API: each view names the permission it needs."""
from __future__ import annotations

from typing import Any

from rest_framework.permissions import BasePermission
from rest_framework.request import Request

from annotation.roles import ANNOTATE, CONFIGURE, READ_REPORTS


class _Role(BasePermission):
    perm = ""
    message = "Your account does not have the role this endpoint needs."

    def has_permission(self, request: Request, view: Any) -> bool:
        user = request.user
        return bool(user and user.is_authenticated and user.has_perm(self.perm))


class Configure(_Role):
    """Analyst: corpora, classifiers, topics, launches."""

    perm = CONFIGURE
    message = "This needs the analyst role (configure topics)."


class ReadReports(_Role):
    """Manager (and analyst): reports, judgments, certification."""

    perm = READ_REPORTS
    message = "This needs the manager role (read reports)."


class Annotate(_Role):
    perm = ANNOTATE
    message = "This needs the annotator role."
