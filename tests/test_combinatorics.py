import itertools
from math import comb

import numpy as np
import pytest

from exactclf._combinatorics import (
    n_combinations,
    rank_combination,
    unrank_batch,
    unrank_combination,
)


@pytest.mark.parametrize("n, k", [(1, 1), (5, 1), (6, 3), (9, 4), (7, 7), (10, 2)])
def test_rank_unrank_match_lexicographic_order(n, k):
    combos = list(itertools.combinations(range(n), k))
    assert n_combinations(n, k) == len(combos) == comb(n, k)
    for r, c in enumerate(combos):
        assert rank_combination(c, n) == r
        np.testing.assert_array_equal(unrank_combination(r, n, k), c)


@pytest.mark.parametrize("r0, count", [(0, 10), (3, 50), (120, 6), (125, 1)])
def test_unrank_batch_is_consecutive(r0, count):
    n, k = 10, 3  # 120 combinations: the batch may run past the end
    combos = list(itertools.combinations(range(n), k))
    batch = unrank_batch(r0, count, n, k)
    expected = combos[r0 : r0 + count]
    np.testing.assert_array_equal(batch, np.array(expected).reshape(-1, k))


def test_unrank_rejects_out_of_range():
    with pytest.raises(ValueError, match="outside"):
        unrank_combination(10, 5, 2)


def test_large_counts_are_exact():
    assert n_combinations(89, 6) == comb(89, 6) == 581106988
    assert n_combinations(3, 5) == 0


@pytest.mark.parametrize("n, k", [(12000, 5), (2_000_000, 3), (180, 12), (64, 32)])
def test_counts_near_the_rank_range_do_not_overflow(n, k):
    """C(n, k) below MAX_RANK must be exact in int64 (intermediate products overflowed)."""
    from exactclf._combinatorics import MAX_RANK, _comb

    assert comb(n, k) <= MAX_RANK
    assert _comb(n, k) == comb(n, k)
    last = comb(n, k) - 1
    c = unrank_combination(last, n, k)
    np.testing.assert_array_equal(c, np.arange(n - k, n))
    assert rank_combination(c, n) == last
