"""factory_boy factories shared by the test modules."""
import hashlib

import factory
from django.contrib.auth import get_user_model

from annotation import models
from annotation.services.retrieved_sets import bitmap_from_ids, bitmap_to_bytes


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"user{n}")
    password = factory.django.Password("pw-for-tests-1")


class CorpusFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.Corpus

    name = factory.Sequence(lambda n: f"corpus-{n}")


class DocumentFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.Document

    corpus = factory.SubFactory(CorpusFactory)
    external_id = factory.Sequence(lambda n: f"doc-{n}")
    title = factory.Faker("sentence")
    text = factory.Faker("paragraph")
    metadata = factory.LazyFunction(dict)
    content_hash = factory.LazyAttribute(lambda o: hashlib.sha256(f"{o.title}\n{o.text}".encode()).hexdigest())


class ClassifierFactory(factory.django.DjangoModelFactory):
    """Pass `ids=[document pks]` to set the retrieved set."""

    class Meta:
        model = models.Classifier
        exclude = ("ids",)

    corpus = factory.SubFactory(CorpusFactory)
    name = factory.Sequence(lambda n: f"classifier-{n}")
    kind = models.Classifier.Kind.IDS
    definition = factory.LazyFunction(dict)
    ids = factory.LazyFunction(list)
    retrieved_bitmap = factory.LazyAttribute(lambda o: bitmap_to_bytes(bitmap_from_ids(o.ids)))
    retrieved_count = factory.LazyAttribute(lambda o: len(set(o.ids)))
    fingerprint = factory.LazyAttribute(lambda o: hashlib.sha256(repr(sorted(o.ids)).encode()).hexdigest())


class TopicFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.Topic

    corpus = factory.SubFactory(CorpusFactory)
    name = factory.Sequence(lambda n: f"topic-{n}")
    instructions = "Is this document about the topic?"
