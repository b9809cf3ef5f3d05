"""char_wb_transform against scikit-learn's HashingVectorizer, which it must equal entry for entry."""
from __future__ import annotations

import random

import numpy as np
import pytest
from sklearn.feature_extraction.text import HashingVectorizer
from sklearn.utils import murmurhash3_32

from annotation.services.classifiers import trained
from annotation.services.classifiers.char_hashing import (
    char_wb_transform,
    murmurhash3_32_block4,
    murmurhash3_32_tail3,
)

ASCII_ALPHABET = ("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                  ".,;:!?-'\"()[]{}#@/\\&*_+=<>|~`$%^" + " " * 12 + "\t\n\r\x0b\x0c\x1c\x1d\x1e\x1f")
EDGE_TEXTS = ["", " ", "   ", "\t\n", "a", "A", "ab", "abc", "abcd", "a b c", "  x  ", "x\ty\nz", "ab\x1ccd",
              "I am a b", "Hello,   World!!", "x" * 20_000, "aa " * 2000, "\x1f\x1e", "1 22 333 4444"]
NON_ASCII_TEXTS = ["élan vital", "naïve café", "KELVIN \u212a sign", "İstanbul", "日本語 テキスト", "a\u00a0b",
                   "a\u0085b", "a\u2003b  c", "emoji 🙂 text", "straße"]


def _vectorizer(n_features: int = 2**20) -> HashingVectorizer:
    return HashingVectorizer(analyzer="char_wb", ngram_range=(4, 4), n_features=n_features, alternate_sign=False)


def _random_texts(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    texts = []
    for _ in range(count):
        kind = rng.random()
        if kind < 0.5:
            texts.append("".join(rng.choice(ASCII_ALPHABET) for _ in range(rng.randint(0, 300))))
        else:  # words of 1-12 letters with runs of mixed whitespace
            words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyzXYZ019.,") for _ in range(rng.randint(1, 12)))
                     for _ in range(rng.randint(0, 60))]
            texts.append("".join(w + rng.choice([" ", "  ", "\t", "\n", " \r\n ", "\x0c"]) for w in words))
    return texts


def _assert_equal(expected, got) -> None:
    assert expected.shape == got.shape
    assert (expected != got).nnz == 0
    assert expected.nnz == got.nnz
    np.testing.assert_array_equal(expected.toarray() if expected.shape[1] < 5000 else expected.sum(axis=1),
                                  got.toarray() if got.shape[1] < 5000 else got.sum(axis=1))


def test_murmurhash_matches_sklearn_on_4_and_3_byte_keys():
    rng = np.random.default_rng(0)
    raw = rng.integers(32, 127, size=(2000, 4), dtype=np.uint8)
    keys4 = raw[:, 0].astype(np.uint32) | raw[:, 1].astype(np.uint32) << 8 | raw[:, 2].astype(np.uint32) << 16 \
        | raw[:, 3].astype(np.uint32) << 24
    expected4 = [murmurhash3_32(bytes(row), seed=0) for row in raw]
    np.testing.assert_array_equal(murmurhash3_32_block4(keys4), np.array(expected4, dtype=np.int32))
    keys3 = raw[:, 0].astype(np.uint32) | raw[:, 1].astype(np.uint32) << 8 | raw[:, 2].astype(np.uint32) << 16
    expected3 = [murmurhash3_32(bytes(row[:3]), seed=0) for row in raw]
    np.testing.assert_array_equal(murmurhash3_32_tail3(keys3), np.array(expected3, dtype=np.int32))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_ascii_texts_equal_hashing_vectorizer(seed):
    texts = _random_texts(seed, 1500) + EDGE_TEXTS
    random.Random(seed).shuffle(texts)
    _assert_equal(_vectorizer().transform(texts), char_wb_transform(texts))


def test_edge_texts_one_by_one_and_small_n_features():
    # Small n_features: many collisions, so summing duplicates and the l2 norm are exercised.
    for text in EDGE_TEXTS:
        _assert_equal(_vectorizer(64).transform([text]), char_wb_transform([text], n_features=64))
    _assert_equal(_vectorizer(64).transform(EDGE_TEXTS), char_wb_transform(EDGE_TEXTS, n_features=64))


def test_empty_chunk_and_all_empty_texts():
    assert char_wb_transform([]).shape == (0, 2**20)
    got = char_wb_transform(["", "  ", "\n"])
    assert got.shape == (3, 2**20) and got.nnz == 0


def test_non_ascii_texts_go_through_the_fallback_and_still_match():
    calls: list[list[str]] = []

    class Spy:
        def transform(self, texts):
            calls.append(list(texts))
            return _vectorizer().transform(texts)

    texts = _random_texts(7, 200)
    for i, extra in enumerate(NON_ASCII_TEXTS):
        texts.insert(i * 17, extra)
    got = char_wb_transform(texts, fallback=Spy())
    _assert_equal(_vectorizer().transform(texts), got)
    # The Kelvin sign lower-cases to an ASCII "k": that text is handled (and matched) without the fallback.
    assert calls == [[t for t in NON_ASCII_TEXTS if "\u212a" not in t]]


def test_scores_equal_the_previous_scoring_path():
    texts = _random_texts(11, 600) + NON_ASCII_TEXTS
    rng = np.random.default_rng(5)
    labels = np.array(["e" in t for t in texts]) ^ (rng.random(len(texts)) < 0.1)
    vec = trained.vectorizer()
    model = trained.model_fit(features=vec.transform(texts), labels=labels, seed=3)
    fresh = _random_texts(12, 800) + NON_ASCII_TEXTS
    previous = model.predict_proba(vec.transform(fresh))[:, 1]
    ours = model.predict_proba(char_wb_transform(fresh, n_features=trained.N_FEATURES, fallback=vec))[:, 1]
    assert np.ptp(previous) > 0.1  # the model separates something: equal scores are not trivially equal
    np.testing.assert_allclose(ours, previous, rtol=0, atol=1e-9)


def test_all_texts_non_ascii_and_int_min_index():
    _assert_equal(_vectorizer().transform(NON_ASCII_TEXTS), char_wb_transform(NON_ASCII_TEXTS))
    # _hashing_fast.pyx maps h = -2**31 to (2147483647 - (n_features - 1)) % n_features, not abs(h) % n.
    from annotation.services.classifiers.char_hashing import _index

    h = np.array([-(2**31), -5, 7, 2**31 - 1], dtype=np.int32)
    np.testing.assert_array_equal(_index(h, 1000), [(2147483647 - 999) % 1000, 5, 7, (2**31 - 1) % 1000])
