"""scikit-learn's ``HashingVectorizer(analyzer="char_wb", ngram_range=(4, 4), alternate_sign=False)``, vectorised.

The trained classifier's features (annotation/services/classifiers/trained.py) come from scikit-learn's Python analyser,
~80% of the scoring time. This module gives the *same* sparse matrix for the documents whose lower-cased text is
ASCII, with numpy over the whole chunk (no Python loop per gram), and hands every other document to the
HashingVectorizer itself, so UTF-8 multi-byte grams never need hashing by hand.

What is reproduced (sklearn/feature_extraction/text.py, _hash.py, _hashing_fast.pyx, utils/murmurhash.pyx):

- preprocessing: ``str.lower()``; a document is handled here when the lowered text is ASCII;
- ``_char_wb_ngrams``: the text's words (``str.split()``: for ASCII the separators are space, \\t \\n \\v \\f \\r
  and \\x1c–\\x1f), each padded with one space on each side; every 4-character window of the padded word; a
  padded word shorter than 4 (a one-letter word) yields itself once (3 characters);
- FeatureHasher: murmurhash3_32(gram's UTF-8 bytes, seed=0) as a signed int32, index ``abs(h) % n_features``
  (h = -2**31 gives ``(2**31 - 1 - (n_features - 1)) % n_features``), +1 per occurrence, duplicates summed;
- ``normalize(norm="l2")``: each row divided by the square root of its sum of squares (empty rows stay empty).

In the joined buffer (documents separated by one space, every whitespace byte mapped to a space) the 4-grams
are exactly the windows whose two middle bytes are not spaces, and the 3-grams the single non-space bytes
between two spaces.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy import sparse

N_FEATURES_DEFAULT = 2**20
# The ASCII characters str.split() separates on.
_ASCII_WHITESPACE = b" \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f"
_TO_SPACE = bytes.maketrans(_ASCII_WHITESPACE, b" " * len(_ASCII_WHITESPACE))
_SPACE = 32

_C1 = np.uint32(0xCC9E2D51)
_C2 = np.uint32(0x1B873593)


def _rotl(x: np.ndarray, r: int) -> np.ndarray:
    return (x << np.uint32(r)) | (x >> np.uint32(32 - r))


def _fmix(h: np.ndarray) -> np.ndarray:
    h ^= h >> np.uint32(16)
    h *= np.uint32(0x85EBCA6B)
    h ^= h >> np.uint32(13)
    h *= np.uint32(0xC2B2AE35)
    h ^= h >> np.uint32(16)
    return h


def _scramble(k: np.ndarray) -> np.ndarray:
    k = k * _C1
    k = _rotl(k, 15)
    return k * _C2


def murmurhash3_32_block4(keys: np.ndarray) -> np.ndarray:
    """MurmurHash3_x86_32, seed 0, of 4-byte keys given as little-endian uint32: one block, length 4 (signed)."""
    with np.errstate(over="ignore"):
        h = _rotl(_scramble(keys.astype(np.uint32)), 13)
        h = h * np.uint32(5) + np.uint32(0xE6546B64)
        h ^= np.uint32(4)
        return _fmix(h).view(np.int32)


def murmurhash3_32_tail3(keys: np.ndarray) -> np.ndarray:
    """MurmurHash3_x86_32, seed 0, of 3-byte keys (b0 | b1 << 8 | b2 << 16): the tail path only, length 3 (signed)."""
    with np.errstate(over="ignore"):
        h = _scramble(keys.astype(np.uint32))
        h ^= np.uint32(3)
        return _fmix(h).view(np.int32)


def _index(h: np.ndarray, n_features: int) -> np.ndarray:
    wide = h.astype(np.int64)
    out = np.abs(wide) % n_features
    out[wide == -(2**31)] = (2**31 - 1 - (n_features - 1)) % n_features
    return out


def _ascii_triplets(texts: Sequence[str], n_features: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rows, cols, l2-normalised values) of ASCII texts, sorted by (row, col)."""
    n = len(texts)
    joined = (" " + " ".join(texts) + " ").encode("ascii").translate(_TO_SPACE)
    buf = np.frombuffer(joined, dtype=np.uint8)
    lengths = np.fromiter((len(t) for t in texts), dtype=np.int64, count=n)
    word = buf != _SPACE
    # The document of each byte of the buffer (separators count with the document before them).
    doc_of = np.repeat(np.arange(n, dtype=np.int32), lengths + 1) if n else np.empty(0, np.int32)
    doc_of = np.concatenate([np.zeros(1, np.int32), doc_of])
    rows_parts: list[np.ndarray] = []
    cols_parts: list[np.ndarray] = []
    if len(buf) >= 4:
        # 4-grams: window at p whose bytes p+1 and p+2 are word bytes.
        p = np.flatnonzero(word[1:-2] & word[2:-1])
        keys = (buf[p].astype(np.uint32) | (buf[p + 1].astype(np.uint32) << 8)
                | (buf[p + 2].astype(np.uint32) << 16) | (buf[p + 3].astype(np.uint32) << 24))
        rows_parts.append(doc_of[p + 1])
        cols_parts.append(_index(murmurhash3_32_block4(keys), n_features))
    if len(buf) >= 3:
        # 3-grams: one-letter words " x ", centred at i.
        i = np.flatnonzero(word[1:-1] & ~word[:-2] & ~word[2:]) + 1
        keys = (np.uint32(_SPACE) | (buf[i].astype(np.uint32) << 8) | (np.uint32(_SPACE) << 16)).astype(np.uint32)
        rows_parts.append(doc_of[i])
        cols_parts.append(_index(murmurhash3_32_tail3(keys), n_features))
    if not rows_parts:
        return np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.float64)
    rows = np.concatenate(rows_parts).astype(np.int64)
    cols = np.concatenate(cols_parts).astype(np.int64)
    keys_rc, counts = np.unique(rows * n_features + cols, return_counts=True)
    rows, cols = keys_rc // n_features, keys_rc % n_features
    values = counts.astype(np.float64)
    norms = np.sqrt(np.bincount(rows, weights=values * values, minlength=n))
    return rows, cols, values / norms[rows]


def char_wb_transform(texts: Sequence[str], *, n_features: int = N_FEATURES_DEFAULT,
                      fallback: Any = None) -> sparse.csr_matrix:
    """The matrix ``HashingVectorizer(analyzer="char_wb", ngram_range=(4, 4), n_features=n_features,
    alternate_sign=False).transform(texts)`` (lowercase, l2 norm), equal entry for entry.

    Texts whose lower-cased form is not ASCII go through ``fallback`` (that vectorizer; built when None).
    """
    lowered = [t.lower() for t in texts]
    ascii_rows = np.fromiter((t.isascii() for t in lowered), dtype=bool, count=len(lowered))
    if ascii_rows.all():
        rows, cols, values = _ascii_triplets(lowered, n_features)
        return _csr(rows, cols, values, len(texts), n_features)
    ascii_at = np.flatnonzero(ascii_rows)
    other_at = np.flatnonzero(~ascii_rows)
    if fallback is None:
        from sklearn.feature_extraction.text import HashingVectorizer  # noqa: PLC0415 — heavy: scikit-learn, only for non-ASCII texts

        fallback = HashingVectorizer(analyzer="char_wb", ngram_range=(4, 4), n_features=n_features,
                                     alternate_sign=False)
    ascii_part = _csr(*_ascii_triplets([lowered[int(i)] for i in ascii_at], n_features), len(ascii_at), n_features)
    other_part = sparse.csr_matrix(fallback.transform([texts[int(i)] for i in other_at]))
    other_part.sort_indices()
    # Interleave the two groups' rows back into the texts' order (no sort: each row is copied whole).
    counts = np.zeros(len(texts), dtype=np.int64)
    counts[ascii_at] = np.diff(ascii_part.indptr)
    counts[other_at] = np.diff(other_part.indptr)
    indptr = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    cols = np.empty(int(indptr[-1]), dtype=np.int32)
    values = np.empty(int(indptr[-1]), dtype=np.float64)
    for at, part in ((ascii_at, ascii_part), (other_at, other_part)):
        part_counts = np.diff(part.indptr)
        local_rows = np.repeat(np.arange(len(at)), part_counts)
        destination = indptr[at[local_rows]] + (np.arange(part.nnz) - part.indptr[local_rows])
        cols[destination] = part.indices
        values[destination] = part.data
    matrix = sparse.csr_matrix((values, cols, indptr.astype(np.int32)), shape=(len(texts), n_features))
    matrix.has_sorted_indices = True
    return matrix


def _csr(rows: np.ndarray, cols: np.ndarray, values: np.ndarray, n_rows: int, n_features: int) -> sparse.csr_matrix:
    """A CSR matrix from triplets sorted by (row, col)."""
    indptr = np.zeros(n_rows + 1, dtype=np.int32)
    np.cumsum(np.bincount(rows, minlength=n_rows), out=indptr[1:])
    matrix = sparse.csr_matrix((values, cols.astype(np.int32), indptr), shape=(n_rows, n_features))
    matrix.has_sorted_indices = True
    return matrix
