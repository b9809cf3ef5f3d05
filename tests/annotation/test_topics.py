import numpy as np
import pytest
from django.core.management import CommandError, call_command

from annotation.models import ClassifierPair, Topic, TopicClassifier
from annotation.services.classifiers.pairs import pair_design_check
from annotation.services.topics.topic import PairRefused, TopicError, topic_create
from tests.factories import ClassifierFactory, CorpusFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def setup():
    corpus = CorpusFactory.create(name="news")
    # Overlapping retrieved sets, neither containing the other: a pair that can carry an estimate.
    c1, c2, c3 = (ClassifierFactory.create(corpus=corpus, name=n, ids=ids)
                  for n, ids in (("title-kw", range(0, 60)), ("body-kw", range(40, 150)), ("svm", range(20, 90))))
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


# --------------------------------------------------------------------------- pairs that can carry an estimate


def _earn_like_pair(corpus, *, seed: int = 11):
    """Issue 11's Reuters `earn` case: a title classifier of true recall 0.573 and a partner containing it.

    3,964 relevant documents of 10,788 (the ModApte `earn` split); the title classifier finds 57.3% of
    them (plus 1% of the rest), the partner is "title or body" — so A1 ⊆ A2 and B1 is empty.
    """
    rng = np.random.default_rng(seed)
    n, relevant = 10_788, 3_964
    is_relevant = np.arange(n) < relevant
    title = np.flatnonzero(np.where(is_relevant, rng.random(n) < 0.573, rng.random(n) < 0.01)) + 1
    body = np.flatnonzero(np.where(is_relevant, rng.random(n) < 0.8, rng.random(n) < 0.05)) + 1
    c1 = ClassifierFactory.create(corpus=corpus, name="earn title", ids=title.tolist())
    c2 = ClassifierFactory.create(corpus=corpus, name="earn title or body", ids=sorted(set(title) | set(body)))
    return c1, c2


def test_a_partner_containing_the_classifier_is_refused_reuters_earn():
    """Issue 11: with A1 ⊆ A2 the report showed recall 1.000 for both; such a pair must not be created."""
    corpus = CorpusFactory.create(name="reuters")
    c1, c2 = _earn_like_pair(corpus)
    with pytest.raises(PairRefused) as caught:
        topic_create(corpus=corpus, name="earn", c1=c1, c2=c2)
    message = caught.value.message
    assert "Classifier “earn title” retrieves nothing “earn title or body” does not" in message
    assert "1 by construction" in message and "a different view of the documents" in message
    # Either order of the pair is refused, and nothing is created.
    with pytest.raises(PairRefused, match="retrieves nothing"):
        topic_create(corpus=corpus, name="earn", c1=c2, c2=c1)
    assert not Topic.objects.exists() and not ClassifierPair.objects.exists()


@pytest.mark.parametrize(
    "ids1, ids2, code, words",
    [
        (range(0, 50), range(0, 50), "identical_sets", "exactly the same documents"),
        (range(0, 50), range(50, 90), "disjoint_pair", "no document in common"),
        (range(0, 50), range(10, 30), "nested_b2_empty", "Classifier “two” retrieves nothing “one” does not"),
        (range(10, 30), range(0, 50), "nested_b1_empty", "Classifier “one” retrieves nothing “two” does not"),
    ],
)
def test_pairs_that_cannot_carry_an_estimate_are_refused(ids1, ids2, code, words):
    corpus = CorpusFactory.create()
    c1 = ClassifierFactory.create(corpus=corpus, name="one", ids=list(ids1))
    c2 = ClassifierFactory.create(corpus=corpus, name="two", ids=list(ids2))
    check = pair_design_check(c1=c1, c2=c2)
    assert check.refused and code in check.codes
    with pytest.raises(PairRefused, match=words):
        topic_create(corpus=corpus, name="t", c1=c1, c2=c2)
    assert not Topic.objects.exists()


def test_small_regions_are_warnings_not_refusals():
    corpus = CorpusFactory.create()
    c1 = ClassifierFactory.create(corpus=corpus, name="one", ids=list(range(0, 100)))
    c2 = ClassifierFactory.create(corpus=corpus, name="two", ids=list(range(97, 300)))  # A12 = 3 documents
    check = pair_design_check(c1=c1, c2=c2)
    assert not check.refused and check.codes == ("a12_small",)
    assert "3 documents" in check.warnings[0]
    topic_create(corpus=corpus, name="t", c1=c1, c2=c2)  # created: the topic page shows the warning
    # With precision guesses and a planned sample, few expected relevant documents are warned about too.
    guessed = pair_design_check(c1=c1, c2=c2, precisions={"A12": 0.8, "B1": 0.01, "B2": 0.2},
                                judged={"A12": 3, "B1": 40, "B2": 40})
    assert "few_relevant_expected" in guessed.codes and not guessed.refused
    assert any("“one” only" in w for w in guessed.warnings)


def test_create_topic_command_refuses_a_nested_pair(setup):
    corpus, c1, _, _ = setup
    ClassifierFactory.create(corpus=corpus, name="title-kw subset", ids=list(range(0, 30)))
    with pytest.raises(CommandError, match="retrieves nothing"):
        call_command("create_topic", "--corpus", "news", "--name", "Coffee", "--pair", "title-kw", "title-kw subset")
    assert not Topic.objects.exists()
