"""DTensor sharding rules for every gemmtiles op, so that tensor parallelism
(``parallelize_module``) and FSDP2 (``fully_shard``) run the local tier on each shard.

For ``out = alpha * a @ b + beta * c`` (a: (..., M, K), b: (..., K, N)), on one mesh
dimension (DTensor expands the rules to every dimension of the mesh):

- replicate everything;
- a sharded on M -> out sharded on M (b replicated);
- b sharded on N -> out sharded on N (a replicated);
- a sharded on K and b sharded on K -> out Partial (summed by DTensor when needed);
- a and b sharded on the batch -> out sharded on the batch;
- c follows the output: sharded where it has the output's sharded dimension (not broadcast),
  replicated where it is broadcast along it, Partial when the output is Partial.

The backward products are calls of the same ops (csrc/core/autograd.cpp), so they follow the
same rules.
"""

from __future__ import annotations

from torch.distributed.tensor import Partial, Replicate, Shard
from torch.distributed.tensor.experimental import register_sharding

from ._ops import REGISTERED, op


def _c_placement(c, out_ndim: int, out_dim: int):
    """c's placement when the output is sharded along its dimension out_dim."""
    if c is None:
        return None
    c_dim = c.ndim - (out_ndim - out_dim)
    if c_dim < 0 or c.shape[c_dim] == 1:
        return Replicate()  # broadcast along the sharded dimension: every shard needs all of it
    return Shard(c_dim)


def sharding_rules(a, b, c=None, alpha=1.0, beta=0.0):
    """Acceptable (output placements, input placements) for one gemmtiles op call."""
    out_ndim = 3 if a.ndim == 3 or b.ndim == 3 else 2
    replicate_c = None if c is None else Replicate()
    rules = [([Replicate()], [Replicate(), Replicate(), replicate_c, None, None])]
    # M: a's rows; N: b's columns; K: both.
    rules.append(([Shard(out_ndim - 2)], [Shard(a.ndim - 2), Replicate(), _c_placement(c, out_ndim, out_ndim - 2), None, None]))
    rules.append(([Shard(out_ndim - 1)], [Replicate(), Shard(b.ndim - 1), _c_placement(c, out_ndim, out_ndim - 1), None, None]))
    rules.append(([Partial()], [Shard(a.ndim - 1), Shard(b.ndim - 2), None if c is None else Partial(), None, None]))
    # The batch: both batched alike, or one side shared by the batch.
    a_batch = a.shape[0] if a.ndim == 3 else None
    b_batch = b.shape[0] if b.ndim == 3 else None
    if out_ndim == 3 and 1 not in (a_batch, b_batch):
        rules.append(([Shard(0)], [Shard(0) if a_batch else Replicate(), Shard(0) if b_batch else Replicate(),
                                   _c_placement(c, 3, 0), None, None]))
    return rules


def register() -> None:
    """The rules for every op this build defines."""
    for name in sorted({name for name, _, _, _ in REGISTERED}):
        register_sharding(op(name).default)(sharding_rules)
