"""Union-find over integer nodes, for the compiled kernels that merge pixels or regions
(ucm2 levels, hysteresis, the watershed's clean-up, superpixel components)."""

from __future__ import annotations

import numba as nb

from ..compilation import prepare_kernels

prepare_kernels()


@nb.njit(cache=True)
def find_root(parent, x):
    """The root of ``x``'s set; every node on the way is made to point at it (path
    compression). Which node is the root depends only on the unions made, not on the
    compression, so callers may compress however they like."""
    root = x
    while parent[root] != root:
        root = parent[root]
    while parent[x] != root:
        nxt = parent[x]
        parent[x] = root
        x = nxt
    return root


@nb.njit(cache=True)
def union_lower(parent, a, b):
    """Merge the sets of ``a`` and ``b`` under the smaller of their two roots (so the
    root of a component is its smallest node: a deterministic label)."""
    a = find_root(parent, a)
    b = find_root(parent, b)
    if a != b:
        if a < b:
            parent[b] = a
        else:
            parent[a] = b
