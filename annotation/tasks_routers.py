"""Celery task of router builds (annotation/services/classifiers/router_builds.py): thin, by build id, safe twice.

Imported by annotation/tasks.py so Celery's autodiscovery registers it in a real worker.
"""
from __future__ import annotations

from typing import Any

from celery import shared_task

from annotation.services.classifiers.router_builds import router_build_fail, router_build_run, router_builds_stuck_fail
from core.errors import ApplicationError


@shared_task(name="annotation.tasks_routers.router_build_task")
def router_build_task(*, build_id: int) -> dict[str, Any]:
    try:
        build = router_build_run(build_id=build_id)
    except ApplicationError as exc:  # a user mistake found by the build (bad lines): the row says it, no retry
        router_build_fail(build_id=build_id, exc=exc)
        return {"status": "failed", "router_id": None}
    except Exception as exc:
        router_build_fail(build_id=build_id, exc=exc)
        raise
    return {"status": build.status if build is not None else None,
            "router_id": build.router_id if build is not None else None}


@shared_task(name="annotation.tasks_routers.router_builds_stuck_task")
def router_builds_stuck_task() -> int:
    """Fail router builds waiting or running past ROUTER_BUILD_STUCK_SECONDS; beat runs it."""
    return router_builds_stuck_fail()
