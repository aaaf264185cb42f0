"""O(1) insert/remove for "non-zero topics" lists, shared by the sparse kernels.

A list is ``(items, pos, length)``: ``items[:length]`` are the topics with a non-zero
count and ``pos[k]`` is topic k's index in ``items`` (−1 when absent).
"""
from ._jit import njit


@njit(inline="always", cache=True)
def list_remove(items, pos, length, k):
    """Remove topic ``k``; return the new length."""
    p = pos[k]
    length -= 1
    last = items[length]
    items[p] = last
    pos[last] = p
    pos[k] = -1
    return length


@njit(inline="always", cache=True)
def list_add(items, pos, length, k):
    """Append topic ``k``; return the new length."""
    items[length] = k
    pos[k] = length
    return length + 1


@njit(inline="always", cache=True)
def list_from_counts(counts, items, pos):
    """Fill the list with the topics whose ``counts`` are positive; return its length.

    Branch-free: every topic is written at the current end, which only advances past a positive count
    (``length <= k``, so the write stays in bounds).
    """
    length = 0
    for k in range(counts.shape[0]):
        items[length] = k
        c = counts[k] > 0
        pos[k] = length if c else -1
        length += c
    return length
