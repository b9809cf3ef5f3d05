import numpy as np
import pytest

from annotation.services.corpora.retrieved_sets import bitmap_draw, bitmap_from_ids, region_counts
from tests.factories import ClassifierFactory, CorpusFactory

pytestmark = pytest.mark.django_db


def test_region_counts_match_set_arithmetic():
    corpus = CorpusFactory.create()
    a1, a2 = set(range(0, 60)), set(range(40, 150))
    c1 = ClassifierFactory.create(corpus=corpus, ids=sorted(a1))
    c2 = ClassifierFactory.create(corpus=corpus, ids=sorted(a2))
    assert region_counts(c1=c1, c2=c2) == {
        "A1": len(a1), "A2": len(a2), "A12": len(a1 & a2), "B1": len(a1 - a2), "B2": len(a2 - a1),
    }


def test_draw_is_uniform_without_replacement_and_respects_exclusions():
    region = bitmap_from_ids(range(1000, 1100))
    exclude = bitmap_from_ids(range(1000, 1050))
    drawn = bitmap_draw(bitmap=region, k=30, rng=np.random.default_rng(7), exclude=exclude)
    assert len(drawn) == len(set(drawn)) == 30
    assert all(1050 <= d < 1100 for d in drawn)
    # Asking for more than remains returns everything that remains.
    assert sorted(bitmap_draw(bitmap=region, k=500, rng=np.random.default_rng(1), exclude=exclude)) == list(range(1050, 1100))
    # Uniformity: each id's inclusion frequency over many draws of 10 from 100 is near 0.1.
    counts = np.zeros(100)
    rng = np.random.default_rng(3)
    for _ in range(4000):
        for d in bitmap_draw(bitmap=region, k=10, rng=rng):
            counts[d - 1000] += 1
    freq = counts / 4000
    assert abs(freq.mean() - 0.1) < 1e-12
    assert freq.min() > 0.08 and freq.max() < 0.12


def test_same_seed_same_draw():
    region = bitmap_from_ids(range(10_000))
    a = bitmap_draw(bitmap=region, k=50, rng=np.random.default_rng(42))
    b = bitmap_draw(bitmap=region, k=50, rng=np.random.default_rng(42))
    assert a == b
