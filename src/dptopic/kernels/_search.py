"""Binary search over a cumulative row, shared by the kernels that draw from a CDF."""
from ._jit import njit


@njit(inline="always", cache=True)
def first_above(cdf, row, n, x):
    """The smallest ``i < n`` with ``cdf[row, i] > x`` (``n - 1`` when none is): the inverse-CDF draw
    for a uniform ``x`` on a non-decreasing row."""
    lo, hi = 0, n - 1
    while lo < hi:
        mid = (lo + hi) >> 1
        if cdf[row, mid] <= x:
            lo = mid + 1
        else:
            hi = mid
    return lo
