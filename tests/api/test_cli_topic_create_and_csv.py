"""recall-cli for a pipeline engineer (issue "the friction a new analyst, manager and pipeline engineer still meet",
item 3): `recall topic create` (POST /api/v1/topics/, the API's fields) and `recall report --format csv` (the report
page's CSV, through GET /api/v1/topics/{id}/report/csv/). Run against a live server, as a pipeline runs it."""
from __future__ import annotations

import json
from decimal import Decimal

import pytest
from django.test import Client

from annotation.models import Topic
from api.services import api_token_create
from estimation.models import EstimateSnapshot
from tests.factories import ClassifierFactory, build_topic, corpus_build, user_with_role
from tests.factories import cli_env as _env
from tests.factories import cli_run as _recall


@pytest.mark.django_db(transaction=True)
def test_topic_create_from_the_command_line(live_server):
    corpus, ids = corpus_build(name="news", size=30)
    first = ClassifierFactory.create(corpus=corpus, name="title oil", ids=ids[:15])
    second = ClassifierFactory.create(corpus=corpus, name="body crude", ids=ids[10:25])
    further = ClassifierFactory.create(corpus=corpus, name="model", ids=ids[5:20])
    env = _env(live_server, api_token_create(user=user_with_role("pipeline", "analyst"), name="n").plaintext)

    created = _recall(env, "topic", "create", "--corpus", "news", "--name", "Oil", "--c1", "title oil",
                      "--c2", str(second.pk), "--extra", "model", "--instructions", "Is it about oil?",
                      "--seed-term", "oil", "--seed-term", "crude", "--target-recall", "0.9", "--hit-size", "4",
                      "--reward-per-hit", "0.25", "--budget", "40.00", "--aggregator", "dawid_skene",
                      "--allow-unsure")
    assert created.returncode == 0, created.stderr
    body = json.loads(created.stdout)
    topic = Topic.objects.get(pk=body["id"])
    assert (topic.name, topic.status, topic.corpus_id) == ("Oil", Topic.Status.DRAFT, corpus.pk)
    assert (topic.pair.c1_id, topic.pair.c2_id) == (first.pk, second.pk)
    assert body["extra_classifiers"] == [further.pk]
    assert topic.instructions == "Is it about oil?" and topic.seed_terms == ["oil", "crude"]
    assert (topic.target_recall, topic.hit_size, topic.reward_per_hit, topic.budget) == (
        0.9, 4, Decimal("0.25"), Decimal("40.00"))
    assert topic.aggregator == Topic.Aggregator.DAWID_SKENE and topic.allow_unsure is True
    assert "a draft" in created.stderr

    plain = _recall(env, "topic", "create", "--corpus", str(corpus.pk), "--name", "Plain", "--c1", "title oil",
                    "--c2", "body crude")
    assert plain.returncode == 0, plain.stderr
    assert Topic.objects.get(name="Plain").allow_unsure is False  # the API's defaults for what is not given

    # Refusals are the server's, in its words: a name taken, a classifier that does not exist.
    taken = _recall(env, "topic", "create", "--corpus", "news", "--name", "Oil", "--c1", "title oil",
                    "--c2", "body crude")
    assert taken.returncode == 1 and "error 400" in taken.stderr and "already exists" in taken.stderr
    unknown = _recall(env, "topic", "create", "--corpus", "news", "--name", "New", "--c1", "nope",
                      "--c2", "body crude")
    assert unknown.returncode == 1 and "No classifier named 'nope'" in unknown.stderr
    assert Topic.objects.count() == 2


@pytest.mark.django_db(transaction=True)
def test_report_as_csv_is_the_report_pages_csv(live_server):
    built = build_topic()
    manager = user_with_role("boss", "manager")
    env = _env(live_server, api_token_create(user=manager, name="n").plaintext)

    csv_run = _recall(env, "report", "--topic", str(built.topic.pk), "--format", "csv")
    assert csv_run.returncode == 0, csv_run.stderr
    page = Client()
    page.force_login(manager)
    download = page.get(f"/reports/topics/{built.topic.pk}/report.csv")
    assert download.status_code == 200
    assert csv_run.stdout == download.content.decode()
    lines = csv_run.stdout.splitlines()
    assert lines[0].startswith("#topic,") and any(line.startswith("row_type,") for line in lines)

    # A manager reads reports by topic id (looking a topic up by name needs the analyst role); JSON too.
    json_run = _recall(env, "report", "--topic", str(built.topic.pk))
    assert json_run.returncode == 0, json_run.stderr
    assert json.loads(json_run.stdout)["snapshot"]["version"] == 1

    version = EstimateSnapshot.objects.filter(topic=built.topic).get().version
    again = _recall(env, "report", "--topic", str(built.topic.pk), "--format", "csv", "--version", str(version))
    assert again.returncode == 0 and again.stdout == csv_run.stdout
    missing = _recall(env, "report", "--topic", str(built.topic.pk), "--format", "csv", "--version", "99")
    assert missing.returncode == 1 and "error 404" in missing.stderr and missing.stdout == ""
