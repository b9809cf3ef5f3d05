"""The models and the committed migrations agree: a model change without its migration fails here."""
from io import StringIO

import pytest
from django.core.management import call_command


@pytest.mark.django_db
def test_no_model_change_lacks_a_migration():
    out = StringIO()
    try:
        call_command("makemigrations", "--check", "--dry-run", stdout=out, stderr=out)
    except SystemExit as exc:  # --check exits non-zero when a migration is missing
        pytest.fail(f"missing migration:\n{out.getvalue()} (exit {exc.code})")


BEFORE_LINK = [("annotation", "0006_sampledraw_stratum_key"), ("estimation", "0002_certification_immutable")]


def _migrate(targets):
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    executor.loader.build_graph()
    return executor.loader.project_state(targets).apps


def _leaves():
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    return MigrationExecutor(connection).loader.graph.leaf_nodes()


@pytest.mark.django_db(transaction=True)
def test_certification_links_move_to_estimation_and_back():
    """estimation 0003 turns every SampleDraw.certification_plan into a link row and a stratum key."""
    from estimation.models import CertificationPlan
    from tests.factories import ClassifierFactory, TopicFactory

    topic = TopicFactory.create()
    classifier = ClassifierFactory.create(corpus=topic.corpus)
    # Draft plans: a locked one could not be deleted by the flush after this test (migration 0002).
    plans = [CertificationPlan.objects.create(topic=topic, classifier=classifier, metric="f1", target=0.7)
             for _ in range(2)]
    leaves = _leaves()
    try:
        old = _migrate(BEFORE_LINK)
        SampleDraw = old.get_model("annotation", "SampleDraw")
        common = dict(topic_id=topic.pk, region="U", seed=1, region_size=10, requested=1, drawn=1)
        pair = SampleDraw.objects.create(purpose="pair", **common)
        first = SampleDraw.objects.create(purpose="certification", certification_plan_id=plans[0].pk, **common)
        second = SampleDraw.objects.create(purpose="certification", certification_plan_id=plans[0].pk, **common)
        third = SampleDraw.objects.create(purpose="certification", certification_plan_id=plans[1].pk, **common)

        new = _migrate(leaves)
        Link = new.get_model("estimation", "CertificationPlanDraw")
        Draw = new.get_model("annotation", "SampleDraw")
        assert sorted(Link.objects.values_list("draw_id", "plan_id")) == [
            (first.pk, plans[0].pk), (second.pk, plans[0].pk), (third.pk, plans[1].pk)]
        keys = dict(Draw.objects.values_list("pk", "stratum_key"))
        assert keys == {pair.pk: "", first.pk: f"certification-plan:{plans[0].pk}",
                        second.pk: f"certification-plan:{plans[0].pk}", third.pk: f"certification-plan:{plans[1].pk}"}
        assert Draw.objects.count() == 4

        back = _migrate(BEFORE_LINK)
        restored = dict(back.get_model("annotation", "SampleDraw").objects.values_list("pk", "certification_plan_id"))
        assert restored == {pair.pk: None, first.pk: plans[0].pk, second.pk: plans[0].pk, third.pk: plans[1].pk}
    finally:
        _migrate(leaves)
