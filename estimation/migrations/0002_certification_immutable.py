"""The database refuses to change a locked certification plan or any verdict.

The services already refuse; these triggers make a raw ``QuerySet.update()``,
a shell session or another program fail too, on SQLite and PostgreSQL:

* a plan that is locked or decided keeps its test definition (topic,
  classifier, metric, target, alpha, power, monitoring, sample size, pilot,
  seed, lock time), never goes back to draft, never goes from decided back to
  locked, and cannot be deleted;
* a verdict can be inserted, never updated or deleted.
"""
from django.db import migrations

FROZEN_COLUMNS = ("topic_id", "classifier_id", "metric", "target", "alpha", "power", "monitoring", "sample_size",
                  "pilot", "seed", "locked_at")
PLAN_TABLE = "estimation_certificationplan"
VERDICT_TABLE = "estimation_certificationverdict"
PLAN_MESSAGE = "certification plan is locked: its definition cannot change"
VERDICT_MESSAGE = "certification verdicts are immutable"


def _plan_changed(distinct: str) -> str:
    changed = " OR ".join(f"NEW.{c} {distinct} OLD.{c}" for c in FROZEN_COLUMNS)
    return (f"OLD.status IN ('locked', 'decided') AND ({changed} OR NEW.status = 'draft' "
            f"OR (OLD.status = 'decided' AND NEW.status <> 'decided'))")


SQLITE_CREATE = [
    f"""CREATE TRIGGER certificationplan_frozen BEFORE UPDATE ON {PLAN_TABLE}
        WHEN {_plan_changed("IS NOT")}
        BEGIN SELECT RAISE(ABORT, '{PLAN_MESSAGE}'); END""",
    f"""CREATE TRIGGER certificationplan_no_delete BEFORE DELETE ON {PLAN_TABLE}
        WHEN OLD.status IN ('locked', 'decided')
        BEGIN SELECT RAISE(ABORT, '{PLAN_MESSAGE}'); END""",
    f"""CREATE TRIGGER certificationverdict_no_update BEFORE UPDATE ON {VERDICT_TABLE}
        BEGIN SELECT RAISE(ABORT, '{VERDICT_MESSAGE}'); END""",
    f"""CREATE TRIGGER certificationverdict_no_delete BEFORE DELETE ON {VERDICT_TABLE}
        BEGIN SELECT RAISE(ABORT, '{VERDICT_MESSAGE}'); END""",
]
SQLITE_DROP = [
    "DROP TRIGGER IF EXISTS certificationplan_frozen",
    "DROP TRIGGER IF EXISTS certificationplan_no_delete",
    "DROP TRIGGER IF EXISTS certificationverdict_no_update",
    "DROP TRIGGER IF EXISTS certificationverdict_no_delete",
]

POSTGRES_CREATE = [
    f"""CREATE OR REPLACE FUNCTION certificationplan_frozen() RETURNS trigger AS $$
        BEGIN
            IF TG_OP = 'DELETE' THEN
                IF OLD.status IN ('locked', 'decided') THEN
                    RAISE EXCEPTION '{PLAN_MESSAGE}' USING ERRCODE = 'integrity_constraint_violation';
                END IF;
                RETURN OLD;
            END IF;
            IF {_plan_changed("IS DISTINCT FROM")} THEN
                RAISE EXCEPTION '{PLAN_MESSAGE}' USING ERRCODE = 'integrity_constraint_violation';
            END IF;
            RETURN NEW;
        END;
        $$ LANGUAGE plpgsql""",
    f"""CREATE TRIGGER certificationplan_frozen BEFORE UPDATE OR DELETE ON {PLAN_TABLE}
        FOR EACH ROW EXECUTE FUNCTION certificationplan_frozen()""",
    f"""CREATE OR REPLACE FUNCTION certificationverdict_immutable() RETURNS trigger AS $$
        BEGIN
            RAISE EXCEPTION '{VERDICT_MESSAGE}' USING ERRCODE = 'integrity_constraint_violation';
        END;
        $$ LANGUAGE plpgsql""",
    f"""CREATE TRIGGER certificationverdict_immutable BEFORE UPDATE OR DELETE ON {VERDICT_TABLE}
        FOR EACH ROW EXECUTE FUNCTION certificationverdict_immutable()""",
]
POSTGRES_DROP = [
    f"DROP TRIGGER IF EXISTS certificationplan_frozen ON {PLAN_TABLE}",
    "DROP FUNCTION IF EXISTS certificationplan_frozen()",
    f"DROP TRIGGER IF EXISTS certificationverdict_immutable ON {VERDICT_TABLE}",
    "DROP FUNCTION IF EXISTS certificationverdict_immutable()",
]


def _run(statements_by_vendor):
    def run(apps, schema_editor):
        statements = statements_by_vendor.get(schema_editor.connection.vendor)
        if statements is None:
            raise RuntimeError(
                f"no certification immutability triggers for database {schema_editor.connection.vendor!r}")
        for statement in statements:
            schema_editor.execute(statement)

    return run


class Migration(migrations.Migration):
    dependencies = [("estimation", "0001_initial")]

    operations = [
        migrations.RunPython(
            _run({"sqlite": SQLITE_CREATE, "postgresql": POSTGRES_CREATE}),
            _run({"sqlite": SQLITE_DROP, "postgresql": POSTGRES_DROP}),
        ),
    ]
