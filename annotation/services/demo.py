"""A synthetic news corpus with planted rare topics, and the demo set-up.

Each document has a title-like and a body-like field ("views"). A document of a
planted topic mentions one of the topic's title words in its title with
probability `title_rate` and, independently, one of its body words in its body
with probability `body_rate`; other documents mention them only rarely (false
positives at `noise_rate` per field). So a title keyword filter and a body
keyword filter are close to conditionally independent given relevance, as
seed 000 assumes. The planted topics are written to the metadata field `topics`
(a list): the truth a simulated crowd can read (`--truth-field topics --truth-value coffee`).

Generation is seeded: the same (documents, seed, topics) gives the same file.
"""
from __future__ import annotations

import gzip
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

import numpy as np
from django.conf import settings
from django.db import transaction

from annotation.models import Corpus


@dataclass(frozen=True)
class PlantedTopic:
    name: str
    prevalence: float
    title_words: tuple[str, ...]
    body_words: tuple[str, ...]
    title_rate: float = 0.6
    body_rate: float = 0.7
    noise_rate: float = 0.002


DEFAULT_TOPICS: tuple[PlantedTopic, ...] = (
    PlantedTopic("coffee", 0.01, ("coffee", "arabica", "espresso"), ("coffee beans", "robusta", "roasters", "ico quota")),
    PlantedTopic("cocoa", 0.005, ("cocoa", "chocolate"), ("cocoa butter", "grindings", "ivory coast crop")),
    PlantedTopic("gold", 0.02, ("gold", "bullion"), ("troy ounce", "gold mine", "comex gold")),
    PlantedTopic("shipping", 0.015, ("shipping", "freight", "tanker"), ("port congestion", "dockers", "vessel")),
)

_SYLLABLES = (
    "ba be bi bo bu da de di do du fa fe fi fo ka ke ki ko ku la le li lo lu ma me mi mo mu na ne ni no nu "
    "pa pe pi po pu ra re ri ro ru sa se si so su ta te ti to tu va ve vi vo za ze zi zo an en in on ar er or "
    "al el il ol st tr pl gr"
).split()
VOCABULARY_SIZE = 20_000
TITLE_WORDS = (5, 10)
BODY_WORDS = (80, 100)  # about 600 characters of body text


def _vocabulary(rng: np.random.Generator, reserved: set[str]) -> list[str]:
    words: dict[str, None] = {}
    while len(words) < VOCABULARY_SIZE:
        length = int(rng.integers(1, 4))
        word = "".join(_SYLLABLES[int(i)] for i in rng.integers(0, len(_SYLLABLES), size=length))
        if len(word) > 1 and word not in reserved:
            words.setdefault(word, None)
    return list(words)


def demo_corpus_records(
    *, documents: int, seed: int, topics: Sequence[PlantedTopic] = DEFAULT_TOPICS
) -> Iterator[dict]:
    """Yield `documents` records {id, title, body, topics, date}, deterministic in `seed`."""
    rng = np.random.default_rng(seed)
    reserved = {word for t in topics for phrase in (*t.title_words, *t.body_words) for word in phrase.split()}
    vocabulary = np.array(_vocabulary(rng, reserved), dtype=object)
    # Zipf-like word frequencies, as in natural text.
    weights = 1.0 / np.arange(1, len(vocabulary) + 1) ** 1.05
    cumulative = np.cumsum(weights / weights.sum())
    start = date(2025, 1, 1)
    batch = 2000
    for base in range(0, documents, batch):
        n = min(batch, documents - base)
        title_lengths = rng.integers(TITLE_WORDS[0], TITLE_WORDS[1] + 1, size=n)
        body_lengths = rng.integers(BODY_WORDS[0], BODY_WORDS[1] + 1, size=n)
        words = vocabulary[np.searchsorted(cumulative, rng.random(size=(n, TITLE_WORDS[1] + BODY_WORDS[1])))]
        membership = {t.name: rng.random(n) < t.prevalence for t in topics}
        draws = {t.name: rng.random((n, 4)) for t in topics}
        days = rng.integers(0, 365, size=n)
        for i in range(n):
            title = list(words[i, : title_lengths[i]])
            body = list(words[i, TITLE_WORDS[1] : TITLE_WORDS[1] + body_lengths[i]])
            planted = []
            for t in topics:
                u = draws[t.name][i]
                relevant = bool(membership[t.name][i])
                if relevant:
                    planted.append(t.name)
                if u[0] < (t.title_rate if relevant else t.noise_rate):
                    title.insert(int(u[2] * len(title)), t.title_words[int(u[3] * len(t.title_words))])
                if u[1] < (t.body_rate if relevant else t.noise_rate):
                    body.insert(int(u[3] * len(body)), t.body_words[int(u[2] * len(t.body_words))])
            sentences = [" ".join(body[j : j + 12]) for j in range(0, len(body), 12)]
            yield {
                "id": f"d{base + i + 1:07d}",
                "title": " ".join(title).capitalize(),
                "body": ". ".join(s.capitalize() for s in sentences) + ".",
                "topics": planted,
                "date": (start + timedelta(days=int(days[i]))).isoformat(),
            }


def demo_corpus_write(
    *, path: Path, documents: int, seed: int, topics: Sequence[PlantedTopic] = DEFAULT_TOPICS
) -> Path:
    """Write the records as JSON lines, gzipped when the name ends in .gz; returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".partial")
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(tmp, "wt", encoding="utf-8") as out:
        for record in demo_corpus_records(documents=documents, seed=seed, topics=topics):
            out.write(json.dumps(record, ensure_ascii=False))
            out.write("\n")
    tmp.replace(path)
    return path


# --- demo set-up ---------------------------------------------------------------

DEMO_CORPUS_NAME = "demo-news"
DEMO_TOPIC_NAME = "Coffee market news"
DEMO_DOCUMENTS = 20_000
DEMO_SEED = 20261122
DEMO_TOPIC = DEFAULT_TOPICS[0]
DEMO_INSTRUCTIONS = (
    "Is this news item about the coffee market: growing, trading, shipping, roasting or pricing coffee?\n"
    "Answer Relevant if coffee is a main subject of the item, even if the word 'coffee' does not appear "
    "(e.g. arabica or robusta prices, ICO quotas). Answer Not relevant if coffee is not its subject."
)


@dataclass
class DemoSetupResult:
    created: bool
    messages: list[str] = field(default_factory=list)


def demo_accounts_ensure() -> list[str]:
    """Demo accounts, one per role (annotation/services/accounts.py); returns lines to print."""
    from annotation.services.accounts import DemoAccountsRefused
    from annotation.services.accounts import demo_accounts_ensure as accounts_ensure

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
    from annotation.roles import roles_ensure
    from annotation.services.classifiers import classifier_create_keywords
    from annotation.services.corpus_import import corpus_import
    from annotation.services.topics import topic_create

    result = DemoSetupResult(created=False)
    roles_ensure()
    if Corpus.objects.filter(name=DEMO_CORPUS_NAME).exists():
        result.messages.append(f"The demo corpus {DEMO_CORPUS_NAME!r} already exists: nothing to do.")
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
    result.created = True
    result.messages += [
        f"Generated {documents} documents into {path}.",
        f"Imported corpus {corpus.name!r}: {summary.created} documents.",
        f"Classifier {title_filter.name!r}: {title_filter.retrieved_count} documents retrieved.",
        f"Classifier {body_filter.name!r}: {body_filter.retrieved_count} documents retrieved.",
        f"Topic {topic.name!r} (target recall {topic.target_recall}) pairing them.",
        "Role groups analyst, manager and annotator are in place.",
    ]
    result.messages.extend(demo_accounts_ensure())
    return result
