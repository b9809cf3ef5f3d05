"""Migration 0004: the new plan columns are frozen on a locked plan, and the triggers survive a round trip."""
from __future__ import annotations

import pytest
from django.db import DatabaseError, connection, transaction
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from estimation.models import CertificationPlan
from tests.factories import c1, make_pair_world


def _trigger_names() -> set[str]:
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SELECT tgname FROM pg_trigger WHERE NOT tgisinternal")
        else:
            cursor.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")
        return {row[0] for row in cursor.fetchall()}


@pytest.mark.django_db
def test_the_new_columns_of_a_locked_plan_are_frozen():
    world = make_pair_world(n=300, seed=2)
    plan = CertificationPlan.objects.create(topic=world.topic, classifier=c1(world), metric="pair_recall",
                                            target=0.6, status="locked", locked_at=timezone.now(), seed=1)
    for change in ({"delta1_high": 1.5}, {"delta1_low": 0.9}, {"attempts": 3}, {"family_alpha": 0.1},
                   {"dependence_check": True}):
        with pytest.raises(DatabaseError), transaction.atomic():
            CertificationPlan.objects.filter(pk=plan.pk).update(**change)


@pytest.mark.django_db(transaction=True)
def test_the_triggers_survive_migrating_back_and_forth():
    expected = {"certificationplan_frozen"} | ({"certificationplan_no_delete"} if connection.vendor == "sqlite"
                                              else set())
    executor = MigrationExecutor(connection)
    executor.migrate([("estimation", "0003_certificationplandraw")])
    assert expected <= _trigger_names()
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
    assert expected <= _trigger_names()
