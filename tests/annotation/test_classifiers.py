import pytest
from django.core.management import CommandError, call_command

from annotation.models import Classifier, ClassifierScore, Region
from annotation.services.classifiers.classifier import (
    ClassifierError,
    classifier_create_from_ids,
    classifier_create_from_scores,
    classifier_create_keywords,
    classifier_fingerprint,
    classifier_freeze,
    classifier_set_threshold,
    keyword_preview,
)
from annotation.services.classifiers.keywords import KeywordMatcher, terms_parse
from annotation.services.classifiers.term_suggestions import neighbour_terms_suggest
from annotation.services.corpora.retrieved_sets import bitmap_from_ids, classifier_bitmap
from tests.factories import ClassifierFactory, CorpusFactory, DocumentFactory, TopicFactory

pytestmark = pytest.mark.django_db


def make_corpus(docs: dict[str, tuple[str, str]]):
    """docs: external id -> (title, text); returns (corpus, {external id: pk}) with the corpus bitmap set."""
    corpus = CorpusFactory.create()
    pks = {eid: DocumentFactory.create(corpus=corpus, external_id=eid, title=t, text=x).pk for eid, (t, x) in docs.items()}
    from annotation.services.corpora.retrieved_sets import bitmap_to_bytes

    corpus.documents_bitmap = bitmap_to_bytes(bitmap_from_ids(pks.values()))
    corpus.document_count = len(pks)
    corpus.save()
    return corpus, pks


def retrieved_ids(classifier, pks):
    by_pk = {pk: eid for eid, pk in pks.items()}
    return {by_pk[pk] for pk in classifier_bitmap(classifier=classifier)}


KEYWORD_DOCS = {
    "cat": ("A cat sat", ""),
    "category": ("Category theory", "no animals in this category"),
    "bobcat": ("", "a bobcat is wild"),
    "punct": ("", "(Cat), in brackets"),
    "upper": ("", "CAT FOOD"),
    "underscore": ("", "cat_food is one token"),
    "phrase": ("", "Green  coffee beans"),
    "phrase_newline": ("Green", "x"),
    "phrase_break": ("", "green\ncoffee"),
    "hyphen": ("", "green-coffee"),
    "none": ("Nothing", "to see"),
}


def test_keyword_semantics_word_boundaries_case_and_whitespace():
    corpus, pks = make_corpus(KEYWORD_DOCS)
    c = classifier_create_keywords(corpus=corpus, name="k", terms=["cat", "Green coffee"])
    assert retrieved_ids(c, pks) == {"cat", "punct", "upper", "phrase", "phrase_break"}
    assert c.retrieved_count == 5
    assert c.definition == {"terms": ["cat", "green coffee"], "fields": ["title", "text"]}


def test_phrase_does_not_span_title_and_text():
    corpus, pks = make_corpus({"split": ("Green", "coffee beans"), "whole": ("green coffee", "")})
    c = classifier_create_keywords(corpus=corpus, name="k", terms=["green coffee"])
    assert retrieved_ids(c, pks) == {"whole"}


def test_keyword_fields_restrict_the_match():
    corpus, pks = make_corpus({"t": ("Coffee news", "other"), "b": ("Other", "about coffee"), "n": ("x", "y")})
    title = classifier_create_keywords(corpus=corpus, name="t", terms=["coffee"], fields=["title"])
    body = classifier_create_keywords(corpus=corpus, name="b", terms=["coffee"], fields=["text"])
    both = classifier_create_keywords(corpus=corpus, name="both", terms=["coffee"])
    assert retrieved_ids(title, pks) == {"t"}
    assert retrieved_ids(body, pks) == {"b"}
    assert retrieved_ids(both, pks) == {"t", "b"}


def test_keyword_matcher_terms_with_non_word_edges():
    matcher = KeywordMatcher(["#apple", "u.s."])
    assert matcher.matches("I love #Apple!")
    assert matcher.matches("the U.S. economy")
    assert not matcher.matches("apple pie")


def test_keyword_scan_over_many_chunks(monkeypatch):
    monkeypatch.setattr("annotation.services.classifiers.keywords.SCAN_CHUNK_DOCUMENTS", 3)
    docs = {f"d{i}": ("", "coffee" if i % 4 == 0 else "tea coffeehouse") for i in range(20)}
    corpus, pks = make_corpus(docs)
    c = classifier_create_keywords(corpus=corpus, name="k", terms=["coffee"])
    assert retrieved_ids(c, pks) == {f"d{i}" for i in range(0, 20, 4)}


def test_keyword_errors():
    corpus, _ = make_corpus({"a": ("x", "y")})
    with pytest.raises(ClassifierError, match="at least one non-empty term"):
        classifier_create_keywords(corpus=corpus, name="k", terms=[" ", ""])
    with pytest.raises(ClassifierError, match="unknown field"):
        classifier_create_keywords(corpus=corpus, name="k", terms=["x"], fields=["body"])
    classifier_create_keywords(corpus=corpus, name="k", terms=["x"])
    with pytest.raises(ClassifierError, match="already has a classifier named 'k'"):
        classifier_create_keywords(corpus=corpus, name="k", terms=["y"])


def test_terms_parse():
    assert terms_parse("coffee, Arabica ,green   coffee,,coffee\nrobusta") == ["coffee", "arabica", "green coffee", "robusta"]


def test_fingerprint_changes_with_definition_only():
    corpus, _ = make_corpus({"a": ("coffee", ""), "b": ("tea", "")})
    c1 = classifier_create_keywords(corpus=corpus, name="one", terms=["coffee", "arabica"])
    same = classifier_create_keywords(corpus=corpus, name="two", terms=["Arabica", "coffee"])  # same definition
    other_terms = classifier_create_keywords(corpus=corpus, name="three", terms=["coffee", "espresso"])  # same set
    other_fields = classifier_create_keywords(corpus=corpus, name="four", terms=["coffee", "arabica"], fields=["title"])
    assert same.fingerprint == c1.fingerprint
    assert other_terms.fingerprint != c1.fingerprint
    assert other_fields.fingerprint != c1.fingerprint
    # ... and with the retrieved set alone.
    definition = {"terms": ["coffee"], "fields": ["title"]}
    assert classifier_fingerprint(kind="keywords", definition=definition, retrieved=bitmap_from_ids([1, 2])) != (
        classifier_fingerprint(kind="keywords", definition=definition, retrieved=bitmap_from_ids([1, 3]))
    )


def test_ids_classifier_reports_unknown_ids(tmp_path):
    corpus, pks = make_corpus({"a": ("", ""), "b": ("", ""), "c": ("", "")})
    path = tmp_path / "ids.txt"
    path.write_text("a\n\nc\nzz1\na\nzz2\n")
    result = classifier_create_from_ids(corpus=corpus, name="ids", path=path)
    assert retrieved_ids(result.classifier, pks) == {"a", "c"}
    assert (result.read, result.unknown_count, result.unknown_examples) == (4, 2, ["zz1", "zz2"])


def test_ids_command_warns_about_unknown_ids(tmp_path, capsys):
    corpus, _ = make_corpus({"a": ("", "")})
    path = tmp_path / "ids.txt"
    path.write_text("a\nnope\n")
    call_command("add_classifier", "--corpus", corpus.name, "--name", "ids", "--ids", str(path))
    assert "1 of 2 ids are not in the corpus" in capsys.readouterr().err


def test_ids_classifier_with_no_known_ids_is_an_error(tmp_path):
    corpus, _ = make_corpus({"a": ("", "")})
    path = tmp_path / "ids.txt"
    path.write_text("x\ny\n")
    with pytest.raises(ClassifierError, match="none of the 2 ids"):
        classifier_create_from_ids(corpus=corpus, name="ids", path=path)
    assert not Classifier.objects.exists()


def test_scores_threshold_and_rethreshold(tmp_path):
    corpus, pks = make_corpus({"a": ("", ""), "b": ("", ""), "c": ("", "")})
    path = tmp_path / "scores.csv"
    path.write_text("id,score\na,0.9\nb,0.5\nc,0.1\nghost,0.99\n")
    result = classifier_create_from_scores(corpus=corpus, name="s", path=path, threshold=0.5)
    c = result.classifier
    assert retrieved_ids(c, pks) == {"a", "b"}  # score >= threshold
    assert (result.unknown_count, result.unknown_examples) == (1, ["ghost"])
    assert ClassifierScore.objects.filter(classifier=c).count() == 3
    old_fingerprint = c.fingerprint
    c = classifier_set_threshold(classifier=c, threshold=0.6)
    assert retrieved_ids(c, pks) == {"a"}
    assert c.definition["threshold"] == 0.6 and c.retrieved_count == 1
    assert c.fingerprint != old_fingerprint


def test_scores_without_header_and_bad_rows(tmp_path):
    corpus, pks = make_corpus({"a": ("", ""), "b": ("", "")})
    path = tmp_path / "scores.csv"
    path.write_text("a,1\nb,-2\n")
    c = classifier_create_from_scores(corpus=corpus, name="s", path=path, threshold=0).classifier
    assert retrieved_ids(c, pks) == {"a"}
    bad = tmp_path / "bad.csv"
    bad.write_text("id,score\na,1\nb,high\n")
    with pytest.raises(ClassifierError, match=r"bad.csv:3: score 'high' is not a number"):
        classifier_create_from_scores(corpus=corpus, name="s2", path=bad, threshold=0)
    bad.write_text("a,1\na,2\n")
    with pytest.raises(ClassifierError, match="appears twice"):
        classifier_create_from_scores(corpus=corpus, name="s2", path=bad, threshold=0)
    assert not Classifier.objects.filter(name="s2").exists()


def test_threshold_refused_for_keyword_classifier_and_after_sampling(tmp_path):
    from annotation.models import ClassifierPair, SampleDraw

    corpus, _ = make_corpus({"a": ("coffee", ""), "b": ("", "")})
    keyword = classifier_create_keywords(corpus=corpus, name="k", terms=["coffee"])
    with pytest.raises(ClassifierError, match="has no threshold"):
        classifier_set_threshold(classifier=keyword, threshold=0.5)
    path = tmp_path / "s.csv"
    path.write_text("a,0.9\nb,0.2\n")
    scores = classifier_create_from_scores(corpus=corpus, name="s", path=path, threshold=0.5).classifier
    topic = TopicFactory.create(corpus=corpus)
    ClassifierPair.objects.create(topic=topic, c1=keyword, c2=scores)
    SampleDraw.objects.create(topic=topic, purpose="pair", region=Region.A12, seed=1, region_size=1, requested=1)
    with pytest.raises(ClassifierError, match="samples were already drawn"):
        classifier_set_threshold(classifier=scores, threshold=0.1)


def test_add_classifier_command_keywords_and_errors(tmp_path):
    corpus, pks = make_corpus({"a": ("Coffee", ""), "b": ("", "green coffee"), "c": ("", "tea")})
    call_command("add_classifier", "--corpus", corpus.name, "--name", "k", "--keywords", "coffee", "--fields", "title")
    assert retrieved_ids(Classifier.objects.get(name="k"), pks) == {"a"}
    with pytest.raises(CommandError, match="no corpus named"):
        call_command("add_classifier", "--corpus", "nope", "--name", "k", "--keywords", "x")
    with pytest.raises(CommandError, match="--scores needs --threshold"):
        call_command("add_classifier", "--corpus", corpus.name, "--name", "s", "--scores", str(tmp_path / "x.csv"))
    with pytest.raises(CommandError, match="already has a classifier"):
        call_command("add_classifier", "--corpus", corpus.name, "--name", "k", "--keywords", "tea", "--fields", "text")


def test_keyword_preview_exact_on_small_corpus():
    corpus, pks = make_corpus({"a": ("Coffee prices", "Arabica up"), "b": ("Tea", "no"), "c": ("x", "green coffee")})
    other = ClassifierFactory.create(corpus=corpus, name="other", ids=[pks["a"], pks["b"]])
    preview = keyword_preview(corpus=corpus, terms=["coffee", "arabica"])
    assert (preview.retrieved, preview.estimated, preview.scanned) == (2, False, 3)
    by_id = {d.external_id: d for d in preview.sample}
    assert set(by_id) == {"a", "c"}
    assert by_id["a"].title_spans == [(0, 6)] and by_id["a"].text_spans == [(0, 7)]
    assert by_id["c"].text_spans == [(6, 12)]
    assert [(o.classifier_id, o.overlap) for o in preview.overlaps] == [(other.pk, 1)]


def test_keyword_preview_estimates_on_a_sample_of_large_corpus(monkeypatch):
    monkeypatch.setattr("annotation.services.classifiers.classifier.PREVIEW_SAMPLE_DOCUMENTS", 10)
    corpus, _ = make_corpus({f"d{i}": ("", "coffee" if i < 20 else "tea") for i in range(40)})
    preview = keyword_preview(corpus=corpus, terms=["coffee"], sample_size=3)
    assert preview.estimated and preview.scanned == 10 and preview.corpus_size == 40
    assert preview.retrieved % 4 == 0 and 0 <= preview.retrieved <= 40
    assert len(preview.sample) <= 3


# A tiny corpus where the neighbours of "coffee" are known by hand.
# A_seed = {1, 2, 3, 4}.  "brazil": {1, 2, 3, 5} -> jaccard 3/5, overlap 3/4.
# "arabica": {1, 2} -> jaccard 2/4, overlap 1.  "market": {1, 5, 6, 7, 8} -> jaccard 1/8, overlap 1/5.
# "rare": {3} (one document) -> left out with min_doc_count=2.
NEIGHBOUR_DOCS = {
    "1": ("Coffee", "brazil arabica market"),
    "2": ("coffee", "brazil arabica"),
    "3": ("", "coffee brazil rare"),
    "4": ("coffee", ""),
    "5": ("", "brazil market"),
    "6": ("", "market"),
    "7": ("", "market"),
    "8": ("", "market"),
}


def test_neighbour_terms_jaccard_and_overlap():
    corpus, _ = make_corpus(NEIGHBOUR_DOCS)
    jaccard = neighbour_terms_suggest(corpus=corpus, seed_terms=["coffee"], k=3)
    assert [(t.term, t.doc_count) for t in jaccard] == [("brazil", 4), ("arabica", 2), ("market", 5)]
    assert [t.score for t in jaccard] == pytest.approx([3 / 5, 2 / 4, 1 / 8])
    overlap = neighbour_terms_suggest(corpus=corpus, seed_terms=["coffee"], k=10, measure="overlap")
    assert [(t.term, round(t.score, 4)) for t in overlap] == [("arabica", 1.0), ("brazil", 0.75), ("market", 0.2)]
    with_rare = neighbour_terms_suggest(corpus=corpus, seed_terms=["coffee"], k=10, measure="overlap", min_doc_count=1)
    assert ("rare", 1.0, 1) in with_rare


def test_neighbour_terms_errors_and_command(capsys):
    corpus, _ = make_corpus(NEIGHBOUR_DOCS)
    with pytest.raises(ClassifierError, match="unknown measure"):
        neighbour_terms_suggest(corpus=corpus, seed_terms=["coffee"], measure="pmi")
    assert neighbour_terms_suggest(corpus=corpus, seed_terms=["absent"]) == []
    call_command("suggest_terms", "--corpus", corpus.name, "--seed", "coffee", "-k", "1")
    out = capsys.readouterr().out
    assert "brazil" in out and "0.6000" in out and "arabica" not in out


def test_keyword_scan_when_most_documents_already_match():
    # After "common" matches 17 of 20 documents, "rare" is searched document by document.
    docs = {f"d{i}": ("", "a common word") for i in range(17)}
    docs.update({"r": ("", "a rare word"), "rarely": ("", "rarely seen"), "none": ("", "nothing")})
    corpus, pks = make_corpus(docs)
    c = classifier_create_keywords(corpus=corpus, name="k", terms=["common", "rare"])
    assert retrieved_ids(c, pks) == {f"d{i}" for i in range(17)} | {"r"}
    matcher = KeywordMatcher(["common", "rare"])
    pieces = ["common"] * 9 + ["x rare", "rarely"]
    starts = [sum(len(p) + 1 for p in pieces[:i]) for i in range(len(pieces))]
    assert matcher.matching_pieces("\x00".join(pieces), starts) == set(range(10))


def test_neighbour_terms_on_a_sample_of_a_large_corpus():
    # The hand-made corpus four times over: 32 documents, sampled 16 (scale 2).
    docs = {f"{copy}-{eid}": value for copy in range(4) for eid, value in NEIGHBOUR_DOCS.items()}
    corpus, _ = make_corpus(docs)
    exact = neighbour_terms_suggest(corpus=corpus, seed_terms=["coffee"], k=3, sample_documents=None)
    # "rare" now occurs in 4 documents, all seed documents: jaccard 4 / 16.
    assert [(t.term, t.doc_count) for t in exact] == [("brazil", 16), ("arabica", 8), ("rare", 4)]
    assert [t.score for t in exact] == pytest.approx([3 / 5, 2 / 4, 1 / 4])
    sampled = neighbour_terms_suggest(corpus=corpus, seed_terms=["coffee"], k=10, sample_documents=16)
    assert sampled == neighbour_terms_suggest(corpus=corpus, seed_terms=["coffee"], k=10, sample_documents=16)
    assert sampled and all(t.doc_count % 2 == 0 and 0 < t.score <= 1 for t in sampled)
    assert {t.term for t in sampled} <= {"brazil", "arabica", "market", "rare"}


def test_threshold_that_would_nest_a_pair_is_refused(tmp_path):
    """A threshold move before sampling must not turn a paired classifier into a subset of its partner (issue 11)."""
    from annotation.models import ClassifierPair

    corpus, pks = make_corpus({"a": ("coffee", ""), "b": ("coffee", ""), "c": ("", ""), "d": ("", "")})
    keyword = classifier_create_keywords(corpus=corpus, name="k", terms=["coffee"])  # retrieves a, b
    path = tmp_path / "s.csv"
    path.write_text("a,0.9\nb,0.2\nc,0.8\nd,0.1\n")
    scores = classifier_create_from_scores(corpus=corpus, name="s", path=path, threshold=0.5).classifier  # a, c
    topic = TopicFactory.create(corpus=corpus)
    ClassifierPair.objects.create(topic=topic, c1=keyword, c2=scores)
    # At 0.85 the scores classifier retrieves only a, inside the keyword set {a, b}: nested.
    with pytest.raises(ClassifierError, match="nested sets"):
        classifier_set_threshold(classifier=scores, threshold=0.85)
    # At 0.95 it retrieves nothing in common with the keywords: disjoint.
    with pytest.raises(ClassifierError, match="nothing in common"):
        classifier_set_threshold(classifier=scores, threshold=0.95)
    scores.refresh_from_db()
    assert retrieved_ids(scores, pks) == {"a", "c"}  # unchanged after the refusals
    # At 0.15 it retrieves a, b, c, which contains the keyword set {a, b}: nested the other way.
    with pytest.raises(ClassifierError, match="nested sets"):
        classifier_set_threshold(classifier=scores, threshold=0.15)
    # At 0.5 (a, c) the pair is fine again: a in both, b only keywords, c only scores.
    assert retrieved_ids(classifier_set_threshold(classifier=scores, threshold=0.5), pks) == {"a", "c"}


def test_a_frozen_classifier_refuses_a_new_threshold_with_the_reason(tmp_path):
    """Issue 15 item 7: a threshold moved under a locked certification plan left the plan undecidable forever."""
    corpus, pks = make_corpus({"a": ("", ""), "b": ("", "")})
    path = tmp_path / "s.csv"
    path.write_text("a,0.9\nb,0.2\n")
    scores = classifier_create_from_scores(corpus=corpus, name="s", path=path, threshold=0.5).classifier
    classifier_freeze(classifier_id=scores.pk, reason="certification plan 7 (locked) certifies it as it is")
    classifier_freeze(classifier_id=scores.pk, reason="a later reason is not kept")
    with pytest.raises(ClassifierError, match="cannot change: certification plan 7 \\(locked\\)"):
        classifier_set_threshold(classifier=scores, threshold=0.1)
    scores.refresh_from_db()
    assert retrieved_ids(scores, pks) == {"a"} and scores.definition["threshold"] == 0.5
