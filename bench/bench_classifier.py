"""Keyword classifiers over a large corpus: `python bench/bench_classifier.py --documents 1000000`.

Targets: a keyword classifier of 10 terms built in <= 10 s on 1,000,000 documents of ~600
characters; keyword_preview <= 1 s. Also times neighbour_terms_suggest (no target).
Uses the corpus "bench-<N>" left by `bench_import.py --keep` (imports it, untimed, if absent).
"""
from __future__ import annotations

import argparse
import time
import uuid

from common import corpus_file, corpus_name, django_setup, timed, verdict

RARE_TERMS = ["coffee", "arabica", "espresso", "coffee beans", "robusta", "roasters", "ico quota", "gold", "bullion", "troy ounce"]


def frequent_terms(corpus, n: int = 10, ranks: tuple[int, ...] = (0, 2, 9, 29, 99, 299, 499, 799, 999, 1499)) -> list[str]:
    """Background words at the given frequency ranks: harder cases (many hits to check)."""
    from annotation.models import Document

    counts: dict[str, int] = {}
    for text in Document.objects.filter(corpus=corpus).order_by("pk").values_list("text", flat=True)[:2000]:
        for word in text.lower().replace(".", " ").split():
            counts[word] = counts.get(word, 0) + 1
    ranked = sorted(counts, key=lambda w: -counts[w])
    return [ranked[r] for r in ranks[:n] if r < len(ranked)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--documents", type=int, default=100_000)
    parser.add_argument("--skip-neighbours", action="store_true")
    args = parser.parse_args()
    vendor = django_setup()
    from annotation.models import Classifier, Corpus
    from annotation.services.classifiers import classifier_create_keywords, keyword_preview, neighbour_terms_suggest
    from annotation.services.corpus_import import corpus_import

    name = corpus_name(args.documents)
    if not Corpus.objects.filter(name=name).exists():
        corpus_import(path=corpus_file(args.documents), corpus_name=name)
    corpus = Corpus.objects.get(name=name)
    print(f"[{vendor}] corpus {name}: {corpus.document_count:,} documents")
    tag = uuid.uuid4().hex[:6]
    try:
        mid_ranks = (29, 49, 99, 149, 199, 299, 499, 799, 999, 1499)
        for label, terms in (
            ("10 rare topic terms", RARE_TERMS),
            ("10 frequent words", frequent_terms(corpus)),
            ("10 mid-frequency words", frequent_terms(corpus, ranks=mid_ranks)),
        ):
            cpu = time.process_time()
            classifier, seconds = timed(classifier_create_keywords, corpus=corpus, name=f"bench-{tag}-{label}", terms=terms)
            cpu = time.process_time() - cpu
            print(f"[{vendor}] keyword classifier, {label} {terms}: {seconds:.2f} s wall, {cpu:.2f} s CPU, "
                  f"{classifier.retrieved_count:,} retrieved; {verdict(seconds, 10.0)}")
        for label, terms in (("10 rare topic terms", RARE_TERMS), ("10 frequent words", frequent_terms(corpus))):
            preview, seconds = timed(keyword_preview, corpus=corpus, terms=terms)
            preview, seconds = timed(keyword_preview, corpus=corpus, terms=terms)  # second call: warm page cache
            print(f"[{vendor}] keyword_preview, {label}: {seconds:.2f} s (scanned {preview.scanned:,}, "
                  f"estimated {preview.retrieved:,}, {len(preview.overlaps)} overlaps); {verdict(seconds, 1.0)}")
        if not args.skip_neighbours:
            for sample in (50_000, None):
                terms, seconds = timed(
                    neighbour_terms_suggest, corpus=corpus, seed_terms=["coffee"], k=10, sample_documents=sample
                )
                print(f"[{vendor}] neighbour_terms_suggest(coffee), {'sample of 50,000' if sample else 'whole corpus'}: "
                      f"{seconds:.1f} s (no target); top: " + ", ".join(f"{t.term} {t.score:.3f}" for t in terms[:6]))
    finally:
        Classifier.objects.filter(corpus=corpus, name__startswith=f"bench-{tag}").delete()


if __name__ == "__main__":
    main()
