import gzip
import json
from collections import Counter

import pytest
from django.contrib.auth.models import Group
from django.core.management import call_command

from annotation.models import Classifier, Corpus, Document, Topic
from annotation.services.demo import DEMO_CORPUS_NAME, DEMO_TOPIC_NAME, demo_corpus_records, demo_corpus_write
from annotation.services.keywords import KeywordMatcher
from annotation.services.retrieved_sets import region_counts


def test_generator_is_deterministic_and_shaped():
    first = list(demo_corpus_records(documents=300, seed=7))
    assert first == list(demo_corpus_records(documents=300, seed=7))
    assert first != list(demo_corpus_records(documents=300, seed=8))
    assert [r["id"] for r in first[:2]] == ["d0000001", "d0000002"]
    assert len({r["id"] for r in first}) == 300
    assert all(set(r) == {"id", "title", "body", "topics", "date"} and isinstance(r["topics"], list) for r in first)
    mean_body = sum(len(r["body"]) for r in first) / len(first)
    assert 450 < mean_body < 800


def test_planted_topics_have_the_designed_rates():
    records = list(demo_corpus_records(documents=20_000, seed=3))
    coffee = [r for r in records if "coffee" in r["topics"]]
    assert 0.007 < len(coffee) / len(records) < 0.013  # prevalence 1%
    title = KeywordMatcher(["coffee", "arabica", "espresso"])
    body = KeywordMatcher(["coffee beans", "robusta", "roasters", "ico quota"])
    in_title = [title.matches(r["title"]) for r in coffee]
    in_body = [body.matches(r["body"]) for r in coffee]
    both = sum(a and b for a, b in zip(in_title, in_body))
    n = len(coffee)
    assert abs(sum(in_title) / n - 0.6) < 0.08 and abs(sum(in_body) / n - 0.7) < 0.08
    # Conditionally independent views: P(both | relevant) ≈ P(title | relevant) P(body | relevant).
    assert abs(both / n - (sum(in_title) / n) * (sum(in_body) / n)) < 0.06
    noise = sum(title.matches(r["title"]) for r in records if "coffee" not in r["topics"]) / (len(records) - n)
    assert noise < 0.005


def test_demo_corpus_write_gzip(tmp_path):
    path = demo_corpus_write(path=tmp_path / "x.jsonl.gz", documents=50, seed=1)
    lines = gzip.open(path, "rt").read().splitlines()
    assert len(lines) == 50 and json.loads(lines[0])["id"] == "d0000001"
    assert not list(tmp_path.glob("*.partial"))


@pytest.mark.django_db
def test_demo_setup_creates_once(settings, tmp_path, capsys, monkeypatch):
    settings.VAR_DIR = tmp_path
    monkeypatch.setattr("annotation.services.demo.DEMO_DOCUMENTS", 3000)  # keeps the test fast
    call_command("demo_setup")
    out = capsys.readouterr().out
    corpus = Corpus.objects.get(name=DEMO_CORPUS_NAME)
    assert corpus.document_count == 3000 == Document.objects.filter(corpus=corpus).count()
    topic = Topic.objects.get(name=DEMO_TOPIC_NAME)
    assert topic.target_recall == 0.8 and topic.instructions
    counts = region_counts(c1=topic.pair.c1, c2=topic.pair.c2)
    assert counts["A12"] > 0 and counts["B1"] > 0 and counts["B2"] > 0
    assert {"analyst", "manager", "annotator"} <= set(Group.objects.values_list("name", flat=True))
    assert "Imported corpus" in out and "Topic 'Coffee market news'" in out
    # Truth is in the metadata for simulated crowds.
    truth = Counter(tuple(m["topics"]) for m in Document.objects.filter(corpus=corpus).values_list("metadata", flat=True))
    assert sum(v for k, v in truth.items() if "coffee" in k) > 10

    before = (Classifier.objects.count(), Topic.objects.count(), Document.objects.count())
    call_command("demo_setup")
    assert "already exists: nothing to do" in capsys.readouterr().out
    assert (Classifier.objects.count(), Topic.objects.count(), Document.objects.count()) == before
