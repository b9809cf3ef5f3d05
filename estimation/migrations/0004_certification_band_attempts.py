"""Certification plans declare their δ1 band, their attempts and whether they include a dependence check.

Existing rows keep every value: the new columns get the defaults the product used implicitly
(δ1 band 0.8–1.25, one attempt, no family α, no dependence check).  The immutability triggers of
0002 are re-created so that a locked plan's new columns are frozen too.
"""
from django.conf import settings
from django.db import migrations, models

FROZEN_COLUMNS = ("topic_id", "classifier_id", "metric", "target", "alpha", "power", "monitoring", "sample_size",
                  "pilot", "seed", "locked_at", "delta1_low", "delta1_high", "attempts", "family_alpha",
                  "dependence_check")
OLD_FROZEN_COLUMNS = FROZEN_COLUMNS[:11]
PLAN_TABLE = "estimation_certificationplan"
PLAN_MESSAGE = "certification plan is locked: its definition cannot change"


def _plan_changed(columns: tuple[str, ...], distinct: str) -> str:
    changed = " OR ".join(f"NEW.{c} {distinct} OLD.{c}" for c in columns)
    return (f"OLD.status IN ('locked', 'decided') AND ({changed} OR NEW.status = 'draft' "
            f"OR (OLD.status = 'decided' AND NEW.status <> 'decided'))")


def _sqlite(columns: tuple[str, ...]) -> list[str]:
    # SQLite rebuilds the table to add columns and constraints, which drops its triggers: both plan
    # triggers are created again (the verdict table is not rebuilt).
    return ["DROP TRIGGER IF EXISTS certificationplan_frozen",
            "DROP TRIGGER IF EXISTS certificationplan_no_delete",
            f"""CREATE TRIGGER certificationplan_frozen BEFORE UPDATE ON {PLAN_TABLE}
                WHEN {_plan_changed(columns, "IS NOT")}
                BEGIN SELECT RAISE(ABORT, '{PLAN_MESSAGE}'); END""",
            f"""CREATE TRIGGER certificationplan_no_delete BEFORE DELETE ON {PLAN_TABLE}
                WHEN OLD.status IN ('locked', 'decided')
                BEGIN SELECT RAISE(ABORT, '{PLAN_MESSAGE}'); END"""]


def _postgres(columns: tuple[str, ...]) -> list[str]:
    return [f"""CREATE OR REPLACE FUNCTION certificationplan_frozen() RETURNS trigger AS $$
        BEGIN
            IF TG_OP = 'DELETE' THEN
                IF OLD.status IN ('locked', 'decided') THEN
                    RAISE EXCEPTION '{PLAN_MESSAGE}' USING ERRCODE = 'integrity_constraint_violation';
                END IF;
                RETURN OLD;
            END IF;
            IF {_plan_changed(columns, "IS DISTINCT FROM")} THEN
                RAISE EXCEPTION '{PLAN_MESSAGE}' USING ERRCODE = 'integrity_constraint_violation';
            END IF;
            RETURN NEW;
        END;
        $$ LANGUAGE plpgsql"""]


def _run(columns: tuple[str, ...]):
    def run(apps, schema_editor):
        vendor = schema_editor.connection.vendor
        statements = {"sqlite": _sqlite, "postgresql": _postgres}.get(vendor)
        if statements is None:
            raise RuntimeError(f"no certification immutability triggers for database {vendor!r}")
        for statement in statements(columns):
            schema_editor.execute(statement)

    return run


class Migration(migrations.Migration):

    dependencies = [
        ('annotation', '0007_remove_sampledraw_certification_plan'),
        ('estimation', '0003_certificationplandraw'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        # Reverse only: after the columns are removed (SQLite rebuilds the table, dropping its triggers), the
        # triggers of 0002 are created again.
        migrations.RunPython(migrations.RunPython.noop, _run(OLD_FROZEN_COLUMNS)),
        migrations.AddField(
            model_name='certificationplan',
            name='attempts',
            field=models.PositiveSmallIntegerField(default=1),
        ),
        migrations.AddField(
            model_name='certificationplan',
            name='delta1_high',
            field=models.FloatField(default=1.25),
        ),
        migrations.AddField(
            model_name='certificationplan',
            name='delta1_low',
            field=models.FloatField(default=0.8),
        ),
        migrations.AddField(
            model_name='certificationplan',
            name='dependence_check',
            field=models.BooleanField(default=False),
        ),
        migrations.AddField(
            model_name='certificationplan',
            name='family_alpha',
            field=models.FloatField(blank=True, null=True),
        ),
        migrations.AddConstraint(
            model_name='certificationplan',
            constraint=models.CheckConstraint(condition=models.Q(('delta1_low__gt', 0), ('delta1_low__lte', 1), ('delta1_high__gte', 1)), name='plan_delta1_band'),
        ),
        migrations.AddConstraint(
            model_name='certificationplan',
            constraint=models.CheckConstraint(condition=models.Q(('attempts__gte', 1)), name='plan_attempts_positive'),
        ),
        migrations.AddConstraint(
            model_name='certificationplan',
            constraint=models.CheckConstraint(condition=models.Q(('family_alpha__isnull', True), models.Q(('family_alpha__gt', 0), ('family_alpha__lt', 0.5)), _connector='OR'), name='plan_family_alpha_range'),
        ),
        migrations.RunPython(_run(FROZEN_COLUMNS), _run(OLD_FROZEN_COLUMNS)),
    ]
