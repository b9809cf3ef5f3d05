"""The demo set-up (`manage.py demo_setup`, run by `bin/run`): the generated corpus (annotation.demo.corpus)
imported, its keyword classifiers, the configured topic and topic set, and one account per role (local settings
only; production refuses them)."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.db import transaction

from annotation.demo.corpus import DEFAULT_TOPICS, demo_corpus_write
from annotation.models import Corpus, Topic
from annotation.roles import roles_ensure
from annotation.services.accounts import DemoAccountsRefused
from annotation.services.accounts import demo_accounts_ensure as accounts_ensure
from annotation.services.classifiers.classifier import classifier_create_keywords
from annotation.services.classifiers.routers import router_create_from_keywords
from annotation.services.corpora.corpus_import import corpus_import
from annotation.services.topics.topic import topic_create
from annotation.services.topics.topic_sets import topic_set_create

# --- demo set-up ---------------------------------------------------------------

DEMO_CORPUS_NAME = "demo-news"
DEMO_TOPIC_NAME = "Coffee market news"
DEMO_DOCUMENTS = 20_000
DEMO_SEED = 20261122
DEMO_TOPIC = DEFAULT_TOPICS[0]
DEMO_INSTRUCTIONS = (
    "Is this news item about the coffee market: growing, trading, shipping, roasting or pricing coffee?\n"
    "Answer On topic if coffee is a main subject of the item, even if the word 'coffee' does not appear "
    "(e.g. arabica or robusta prices, ICO quotas). Answer Off topic if coffee is not its subject."
)

# The demo topic set (seed 002): the four planted topics as mutually exclusive classes, routed by one
# keyword rule per class and view (headline words in headlines, then body words in bodies; first match
# wins). Planted topics are in metadata["topics"], so `simulate_crowd --truth-field topics` knows each
# story's true class.
DEMO_TOPIC_SET_NAME = "Commodity desk routing"
DEMO_TOPIC_SET_INSTRUCTIONS = (
    "Which desk should this news item go to? Choose the one commodity the item is mainly about, or "
    "'None of these' when none of them is its subject (a passing mention does not count)."
)


def _demo_topic_set_ensure(*, corpus: Corpus) -> list[str]:
    """The demo topic set with its keyword router; nothing if a topic set of that name exists."""
    if Topic.objects.filter(name=DEMO_TOPIC_SET_NAME).exists():
        return []
    classes = [(t.name.capitalize(), f"The item is mainly about {t.name}.") for t in DEFAULT_TOPICS]
    with transaction.atomic():
        topic_set = topic_set_create(
            corpus=corpus, name=DEMO_TOPIC_SET_NAME, classes=classes, instructions=DEMO_TOPIC_SET_INSTRUCTIONS
        )
        # Headline words in headlines first (the surest sign), then body words in bodies.
        rules = [
            {"class": position, "terms": list(t.title_words), "fields": ["title"]}
            for position, t in enumerate(DEFAULT_TOPICS, start=1)
        ] + [
            {"class": position, "terms": list(t.body_words), "fields": ["text"]}
            for position, t in enumerate(DEFAULT_TOPICS, start=1)
        ]
        router = router_create_from_keywords(topic=topic_set, name="Desk keywords", rules=rules)
    routed = sum(router.predicted_counts[1:])
    return [f"Topic set {topic_set.name!r} ({len(classes)} topics) with router {router.name!r}: "
            f"{routed} documents routed to a topic."]


@dataclass
class DemoSetupResult:
    created: bool
    messages: list[str] = field(default_factory=list)


def demo_accounts_ensure() -> list[str]:
    """Demo accounts, one per role (annotation/services/accounts.py); returns lines to print."""
    try:
        accounts = accounts_ensure()
    except DemoAccountsRefused as exc:
        return [str(exc)]
    return ["Demo accounts (local use only) — sign in at /accounts/login/:"] + [
        f"  {role:<10} user {username!r:<14} password {password!r}" for role, username, password in accounts
    ]


def demo_setup_run(*, documents: int | None = None, seed: int = DEMO_SEED, directory: Path | None = None) -> DemoSetupResult:
    """Create the demo corpus, its two keyword classifiers and the demo topic; nothing if it exists.

    All or nothing: if any step fails, no demo corpus is left behind and the next run starts afresh.
    """
    documents = documents or DEMO_DOCUMENTS
    result = DemoSetupResult(created=False)
    roles_ensure()
    if Corpus.objects.filter(name=DEMO_CORPUS_NAME).exists():
        result.messages.append(f"The demo corpus {DEMO_CORPUS_NAME!r} already exists: nothing to do.")
        result.messages.extend(_demo_topic_set_ensure(corpus=Corpus.objects.get(name=DEMO_CORPUS_NAME)))
        result.messages.extend(demo_accounts_ensure())
        return result
    directory = Path(directory or settings.VAR_DIR / "demo")
    path = demo_corpus_write(path=directory / f"{DEMO_CORPUS_NAME}-{documents}-{seed}.jsonl.gz", documents=documents, seed=seed)
    with transaction.atomic():
        summary = corpus_import(path=path, corpus_name=DEMO_CORPUS_NAME, text_fields=("title", "body"))
        corpus = Corpus.objects.get(pk=summary.corpus_id)
        title_filter = classifier_create_keywords(
            corpus=corpus, name=f"{DEMO_TOPIC.name} (title keywords)", terms=DEMO_TOPIC.title_words, fields=("title",)
        )
        body_filter = classifier_create_keywords(
            corpus=corpus, name=f"{DEMO_TOPIC.name} (body keywords)", terms=DEMO_TOPIC.body_words, fields=("text",)
        )
        topic = topic_create(
            corpus=corpus,
            name=DEMO_TOPIC_NAME,
            c1=title_filter,
            c2=body_filter,
            instructions=DEMO_INSTRUCTIONS,
            target_recall=0.8,
            seed_terms=DEMO_TOPIC.title_words[:1],
        )
        topic_set_lines = _demo_topic_set_ensure(corpus=corpus)
    result.created = True
    result.messages += [
        f"Generated {documents} documents into {path}.",
        f"Imported corpus {corpus.name!r}: {summary.created} documents.",
        f"Classifier {title_filter.name!r}: {title_filter.retrieved_count} documents retrieved.",
        f"Classifier {body_filter.name!r}: {body_filter.retrieved_count} documents retrieved.",
        f"Topic {topic.name!r} (target recall {topic.target_recall}) pairing them.",
        *topic_set_lines,
        "Role groups analyst, manager and annotator are in place.",
    ]
    result.messages.extend(demo_accounts_ensure())
    return result
