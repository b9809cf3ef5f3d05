"""Amazon Mechanical Turk (Topic.Crowd.MTURK), delegating to annotation.services.crowd.mturk and mturk_reconcile.

HITs are published as external questions after commit; submissions on the HIT page are provisional
until GetAssignment confirms them; reconcile (every 5 minutes) publishes what failed, confirms, pays
and expires. docs/mturk.md describes the whole sequence.
"""
from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from annotation.crowds.mturk_client import mturk_client_get
from annotation.models import Assignment, Hit, Topic
from annotation.services.crowd import mturk, mturk_reconcile
from annotation.services.crowd.platforms import CrowdPlatform, platform_register


class MturkPlatform(CrowdPlatform):
    key = Topic.Crowd.MTURK
    provisional = True

    def cost_per_assignment(self, *, reward: Decimal, assignments: int) -> Decimal:
        return mturk.mturk_cost_per_assignment(reward=reward, assignments=assignments)

    def hit_publish_on_commit(self, *, hit: Hit) -> None:
        mturk.mturk_hit_publish_on_commit(hit=hit)

    def assignment_verify(self, *, assignment: Assignment, now: datetime | None = None) -> str:
        return mturk.mturk_assignment_verify(assignment=assignment, client=mturk_client_get(), now=now)

    def reconcile(self) -> mturk_reconcile.ReconcileSummary:
        return mturk_reconcile.mturk_reconcile_all()

    def unpublished_count(self, *, topic: Topic) -> int:
        return mturk.mturk_unpublished_count(topic=topic)

    def configuration_problem(self) -> str | None:
        return mturk.mturk_configuration_problem()


platform_register(MturkPlatform())
