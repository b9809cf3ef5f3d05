"""Neighbour terms of a seed set, without stop words (seed 000 Sec. 6.1.1; issue 13 item 3).

Seed 000 builds the second keyword filter of a pair from the "high similarity
neighbours" of the seed terms: words y ranked by the Jaccard similarity
|A_y ∩ A_seed| / |A_y ∪ A_seed| or the overlap |A_y ∩ A_seed| / |A_y| of the
documents containing them with the documents the seed terms find.  On short
texts the raw ranking is led by function words ("just, not, it, is" for the
seeds "bad, worst, boring" on movie reviews): they occur in nearly every
document, so they are in nearly every seed document too.  Table 2 of the seed
shows what the neighbours should look like (rover, nasa, crater for mars).
Three filters, applied before scoring, keep the ranking to content words:

* a built-in English stop-word list (:data:`STOP_WORDS`, written here so the
  result does not depend on what is installed; contraction pieces such as
  "don" and "ll" included, since the tokenizer splits "don't");
* a minimum length (``min_length``, 3 characters: drops "it", "is", "ok");
* a document-frequency ceiling (``max_doc_share``, 0.5): a word in more than
  half of the documents ("movie" in a corpus of reviews) says nothing about a
  rare topic.  When the seed terms themselves find more than a quarter of the
  corpus the ceiling rises to twice the seed documents, so that a neighbour of
  a common topic is not dropped for being as common as the topic;
* a minimum lift (``min_lift``, 1.5): the share of seed documents among the
  word's documents, |A_y ∩ A_seed| / |A_y| (the overlap score), must be at least
  1.5 times the share of seed documents in the corpus.  A word no more common
  with the seeds than without them ("good" in "not good" and "good acting"
  alike) is no neighbour, however often it co-occurs.

The ceiling and the lift are shares measured on the corpus: they apply only
from ``MIN_DOCUMENTS_FOR_SHARES`` documents measured (below that a share is too
noisy to drop anything by).

It also says when the seed set is too small to rank anything reliably
(fewer than ``MIN_SEED_DOCUMENTS`` seed documents).
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, NamedTuple

import numpy as np

from annotation.models import Corpus, Document
from annotation.services.classifiers import keywords
from annotation.services.classifiers.classifier import ID_LOOKUP_CHUNK, PREVIEW_SEED, ClassifierError
from annotation.services.corpora.retrieved_sets import corpus_bitmap

Measure = Literal["jaccard", "overlap"]


class NeighbourTerm(NamedTuple):
    term: str
    score: float
    doc_count: int  # |A_y|: documents of the corpus containing the term


NEIGHBOUR_SAMPLE_DOCUMENTS = 50_000


def _rows_by_pk(pks: list[int], fields: Sequence[str]) -> Iterator[tuple]:
    for start in range(0, len(pks), ID_LOOKUP_CHUNK):
        yield from Document.objects.filter(pk__in=pks[start:start + ID_LOOKUP_CHUNK]).order_by().values_list(*fields)


def _candidate_token(token: str) -> bool:
    return len(token) > 1 and not token.isdigit()


def neighbour_terms_suggest(
    *,
    corpus: Corpus,
    seed_terms: Sequence[str],
    k: int = 10,
    measure: Literal["jaccard", "overlap"] = "jaccard",
    fields: Sequence[str] = keywords.FIELDS,
    min_doc_count: int = 2,
    sample_documents: int | None = NEIGHBOUR_SAMPLE_DOCUMENTS,
) -> list[NeighbourTerm]:
    """Top-k single words y by similarity of their document set A_y with A_seed (seed 000, Sec. 6.1.1).

    jaccard: |A_y ∩ A_seed| / |A_y ∪ A_seed|;  overlap: |A_y ∩ A_seed| / |A_y|.
    A_seed = documents matching any seed term (keyword semantics); a word's documents are
    those containing it as a whole word in the chosen fields. Words of the seed terms,
    single characters and numbers are left out, as are words in fewer than
    `min_doc_count` documents (with the overlap measure a word seen once, in a seed
    document, would otherwise score 1). Ties: more documents first, then alphabetical.
    Tokenising costs about 10 s per 100,000 documents, so corpora larger than
    `sample_documents` are measured on a fixed uniform sample of that many documents
    (both similarities are ratios of counts, estimated by the sample's ratios; doc_count
    is then scaled up to the corpus and min_doc_count applies to the sample).
    `sample_documents=None` always reads the whole corpus.
    """
    # Stop words, very common words and short tokens left out (issue 13); the warnings are in the full result.
    return term_suggestions_rank(corpus=corpus, seed_terms=seed_terms, k=k, measure=measure, fields=fields,
                                 min_doc_count=min_doc_count, sample_documents=sample_documents).terms

MIN_LENGTH = 3
MAX_DOC_SHARE = 0.5
MIN_DOCUMENTS_FOR_SHARES = 20
MIN_SEED_DOCUMENTS = 20
MIN_LIFT = 1.5
_WORD = re.compile(r"\w+")  # the tokens of neighbour_terms_suggest

# Function words of English: articles, pronouns, auxiliaries, prepositions, conjunctions, common adverbs and
# the pieces the tokenizer leaves of contractions (don't → don, t). Content words ("good", "bad") are not here:
# whether they are too common is the document-frequency ceiling's decision, per corpus.
STOP_WORDS: frozenset[str] = frozenset("""
a about above across after afterwards again against all almost alone along already also although always am among
amongst an and another any anybody anyhow anyone anything anyway anywhere are aren around as at be became
because become becomes becoming been before beforehand behind being below beside besides between beyond both but
by can cannot could couldn did didn do does doesn doing don down during each either else elsewhere enough etc
even ever every everybody everyone everything everywhere except few for former formerly from further had hadn
has hasn have haven having he hence her here hereafter hereby herein hers herself him himself his how however i
ie if in indeed instead into is isn it its itself just latter latterly least less ll many may maybe me meanwhile
might mine more moreover most mostly much must mustn my myself namely neither never nevertheless next no nobody
none noone nor not nothing now nowhere of off often on once only onto or other others otherwise ought our ours
ourselves out over own per perhaps quite rather re really s same seem seemed seeming seems several shall shan
she should shouldn since so some somehow someone something sometime sometimes somewhat somewhere still such t
than that thats the their theirs them themselves then thence there thereafter thereby therefore therein
thereupon these they this those though through throughout thru thus to together too toward towards un under
until up upon us ve very via was wasn we well were weren what whatever when whence whenever where whereafter
whereas whereby wherein whereupon wherever whether which while whither who whoever whole whom whose why will
with within without wouldn would yet you your yours yourself yourselves d m o y ain ma im ive youre
""".split())


@dataclass(frozen=True)
class TermSuggestions:
    """Result of :func:`term_suggestions_rank`: the top terms and what limits them."""

    terms: list[NeighbourTerm]
    seed_documents: int  # |A_seed| in the documents measured (the sample, on a large corpus)
    documents: int  # documents measured
    dropped: dict[str, int] = field(default_factory=dict)  # candidates left out, by reason
    warnings: list[str] = field(default_factory=list)


def term_candidates_score(
    *,
    doc_freq: Mapping[str, int],
    seed_freq: Mapping[str, int],
    seed_size: int,
    documents: int,
    excluded: Iterable[str] = (),
    k: int = 10,
    measure: Measure = "jaccard",
    min_doc_count: int = 2,
    min_length: int = MIN_LENGTH,
    max_doc_share: float | None = MAX_DOC_SHARE,
    min_lift: float = MIN_LIFT,
    stop_words: frozenset[str] = STOP_WORDS,
    scale: float = 1.0,
) -> tuple[list[NeighbourTerm], dict[str, int]]:
    """Rank candidate words by S_jaccard or S_overlap (seed 000 Sec. 6.1.1) after the filters (module doc).

    ``doc_freq[y]`` = |A_y| and ``seed_freq[y]`` = |A_y ∩ A_seed| in the ``documents`` measured;
    ``scale`` turns a sample's document counts into the corpus's. Returns the top ``k`` (ties: more documents
    first, then alphabetical) and the number of candidates each filter dropped.
    """
    excluded_set = set(excluded)
    shares = documents >= MIN_DOCUMENTS_FOR_SHARES
    ceiling = max(max_doc_share * documents, 2 * seed_size) if max_doc_share is not None and shares else None
    dropped: Counter[str] = Counter()
    scored = []
    for token, inter in seed_freq.items():
        if token in excluded_set:
            continue
        if len(token) < min_length or token.isdigit():
            dropped["too short or a number"] += 1
            continue
        if token in stop_words:
            dropped["stop word"] += 1
            continue
        size = doc_freq[token]
        if size < min_doc_count:
            dropped["too rare"] += 1
            continue
        if ceiling is not None and size > ceiling:
            dropped["in too many documents"] += 1
            continue
        if shares and inter / size < min_lift * seed_size / documents:
            dropped["no more common with the seeds"] += 1
            continue
        score = inter / (size + seed_size - inter) if measure == "jaccard" else inter / size
        scored.append(NeighbourTerm(term=token, score=score, doc_count=round(size * scale)))
    scored.sort(key=lambda item: (-item.score, -item.doc_count, item.term))
    return scored[:k], dict(dropped)


def term_suggestions_rank(
    *,
    corpus: Corpus,
    seed_terms: Sequence[str],
    k: int = 10,
    measure: Measure = "jaccard",
    fields: Sequence[str] = keywords.FIELDS,
    min_doc_count: int = 2,
    sample_documents: int | None = NEIGHBOUR_SAMPLE_DOCUMENTS,
    min_length: int = MIN_LENGTH,
    max_doc_share: float | None = MAX_DOC_SHARE,
    min_lift: float = MIN_LIFT,
    stop_words: frozenset[str] = STOP_WORDS,
) -> TermSuggestions:
    """Top-k neighbour words of the seed terms in ``corpus`` (seed 000 Sec. 6.1.1), stop words and very common
    words left out.

    A_seed = documents matching any seed term (keyword semantics, in ``fields``); a word's documents are those
    containing it as a whole word in those fields. Words of the seed terms are never suggested. Corpora larger than
    ``sample_documents`` are measured on a fixed uniform sample of that many documents (the scores are ratios of
    counts; ``doc_count`` is scaled to the corpus). ``max_doc_share=None`` turns the ceiling off, ``stop_words=
    frozenset()`` the list, ``min_lift=0`` the lift.
    """
    if measure not in ("jaccard", "overlap"):
        raise ClassifierError(f"unknown measure {measure!r}: jaccard or overlap")
    if k < 1:
        raise ClassifierError("k must be at least 1")
    if max_doc_share is not None and not 0.0 < max_doc_share <= 1.0:
        raise ClassifierError(f"the document-frequency ceiling must be a share in (0, 1], got {max_doc_share!r}")
    try:
        seed = keywords.terms_normalize(seed_terms)
        normalized_fields = keywords.fields_normalize(fields)
        matcher = keywords.KeywordMatcher(seed)
    except keywords.KeywordError as exc:
        raise ClassifierError(str(exc)) from exc
    excluded = {token for term in seed for token in keywords_tokens(term)}

    doc_freq: Counter[str] = Counter()
    seed_freq: Counter[str] = Counter()
    seed_size = documents = 0
    all_docs = corpus_bitmap(corpus=corpus)
    scale = 1.0
    if sample_documents is not None and len(all_docs) > sample_documents:
        rng = np.random.default_rng(PREVIEW_SEED)
        positions = np.sort(rng.choice(len(all_docs), size=sample_documents, replace=False))
        rows: Iterable[tuple] = _rows_by_pk([all_docs[int(i)] for i in positions], normalized_fields)
        scale = len(all_docs) / sample_documents
    else:
        rows = (Document.objects.filter(corpus=corpus).order_by().values_list(*normalized_fields)
                .iterator(chunk_size=keywords.SCAN_CHUNK_DOCUMENTS))
    for values in rows:
        documents += 1
        pieces = [value.lower() for value in values if value]
        tokens: set[str] = set()
        for piece in pieces:
            tokens.update(keywords_tokens(piece))
        doc_freq.update(tokens)
        joined = keywords.FIELD_SEPARATOR.join(pieces)
        if joined and matcher.matching_pieces(joined, [0]):
            seed_size += 1
            seed_freq.update(tokens)
    warnings = []
    if seed_size < MIN_SEED_DOCUMENTS:
        found = "no document" if seed_size == 0 else f"only {seed_size} document{'s' if seed_size != 1 else ''}"
        warnings.append(f"The seed terms match {found} of the {documents:,} measured: neighbours ranked from fewer "
                        f"than {MIN_SEED_DOCUMENTS} seed documents are guesses. Add seed terms (or fields) that "
                        "find more of the topic before trusting the list.")
    if seed_size == 0:
        return TermSuggestions(terms=[], seed_documents=0, documents=documents, warnings=warnings)
    terms, dropped = term_candidates_score(
        doc_freq=doc_freq, seed_freq=seed_freq, seed_size=seed_size, documents=documents, excluded=excluded, k=k,
        measure=measure, min_doc_count=min_doc_count, min_length=min_length, max_doc_share=max_doc_share,
        min_lift=min_lift, stop_words=stop_words, scale=scale)
    return TermSuggestions(terms=terms, seed_documents=seed_size, documents=documents, dropped=dropped,
                           warnings=warnings)


def keywords_tokens(text: str) -> list[str]:
    """The words of ``text`` as neighbour terms are counted (runs of word characters, as the keyword matcher's)."""
    return _WORD.findall(text)

