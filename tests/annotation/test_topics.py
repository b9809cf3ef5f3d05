import pytest
from django.core.management import CommandError, call_command

from annotation.models import ClassifierPair, Topic, TopicClassifier
from annotation.services.topics import TopicError, topic_create
from tests.factories import ClassifierFactory, CorpusFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def setup():
    corpus = CorpusFactory.create(name="news")
    c1, c2, c3 = (ClassifierFactory.create(corpus=corpus, name=n) for n in ("title-kw", "body-kw", "svm"))
    return corpus, c1, c2, c3


def test_topic_create_with_pair_and_extras(setup):
    corpus, c1, c2, c3 = setup
    topic = topic_create(
        corpus=corpus, name="Coffee", c1=c1, c2=c2, instructions="Judge coffee.", target_recall=0.75,
        seed_terms=["Coffee", " coffee "], extra_classifiers=[c3],
    )
    assert (topic.corpus, topic.instructions, topic.target_recall, topic.seed_terms) == (corpus, "Judge coffee.", 0.75, ["coffee"])
    assert topic.status == Topic.Status.DRAFT
    pair = ClassifierPair.objects.get(topic=topic)
    assert (pair.c1, pair.c2) == (c1, c2)
    assert list(TopicClassifier.objects.filter(topic=topic).values_list("classifier", flat=True)) == [c3.pk]


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda s: {"c2": s[1]}, "two different classifiers"),
        (lambda s: {"c2": ClassifierFactory.create(name="elsewhere")}, "belongs to another corpus"),
        (lambda s: {"extra_classifiers": [ClassifierFactory.create(name="far")]}, "belongs to another corpus"),
        (lambda s: {"extra_classifiers": [s[3], s[3]]}, "listed twice"),
        (lambda s: {"extra_classifiers": [s[1]]}, "also listed as a further classifier"),
        (lambda s: {"target_recall": 1.0}, "strictly between 0 and 1"),
        (lambda s: {"target_recall": 0}, "strictly between 0 and 1"),
        (lambda s: {"target_recall": -0.2}, "strictly between 0 and 1"),
        (lambda s: {"name": "  "}, "needs a name"),
    ],
)
def test_topic_create_validation(setup, change, message):
    corpus, c1, c2, c3 = setup
    kwargs = {"corpus": corpus, "name": "Coffee", "c1": c1, "c2": c2, **change(setup)}
    with pytest.raises(TopicError, match=message):
        topic_create(**kwargs)
    assert not Topic.objects.exists()


def test_duplicate_topic_name(setup):
    corpus, c1, c2, _ = setup
    topic_create(corpus=corpus, name="Coffee", c1=c1, c2=c2)
    with pytest.raises(TopicError, match="already exists"):
        topic_create(corpus=corpus, name="Coffee", c1=c2, c2=c1)
    assert Topic.objects.count() == 1


def test_create_topic_command(setup, capsys):
    corpus, c1, c2, c3 = setup
    call_command(
        "create_topic", "--corpus", "news", "--name", "Coffee", "--pair", "title-kw", "body-kw",
        "--instructions", "Is it about coffee?", "--target-recall", "0.9", "--extra", "svm",
    )
    topic = Topic.objects.get(name="Coffee")
    assert (topic.target_recall, topic.instructions, topic.pair.c1, topic.pair.c2) == (0.9, "Is it about coffee?", c1, c2)
    assert "pair 'title-kw' × 'body-kw'" in capsys.readouterr().out


@pytest.mark.parametrize(
    "args, message",
    [
        (["--pair", "title-kw", "nope"], "has no classifier named 'nope'"),
        (["--pair", "title-kw", "title-kw"], "two different classifiers"),
        (["--pair", "title-kw", "body-kw", "--target-recall", "1.5"], "strictly between 0 and 1"),
    ],
)
def test_create_topic_command_errors(setup, args, message):
    with pytest.raises(CommandError, match=message):
        call_command("create_topic", "--corpus", "news", "--name", "Coffee", *args)
    assert not Topic.objects.exists()
