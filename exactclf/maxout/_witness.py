"""The certificate's witness of a maxout network's cover bound, as
:mod:`exactclf._verification._maxout` re-checks it: each polarity's obstructions as IISs with
exact multipliers on the samples, and the blocks (with their proven bounds) a joint cover
used."""

from __future__ import annotations

import numpy as np

from .._zero_one._iis import first_rows, iis_witness

__all__ = ["cover_witness"]


def cover_witness(data, classes, results, K: int, bound: float) -> dict | None:
    """The data of a ``"maxout_cover"`` witness that every polarity of ``results`` (polarity
    -> :class:`~._portfolio.PolarityResult`) errs at least ``bound``, or None when a
    polarity's covers proved less (its bound is an enumeration's) or an IIS of its proof has
    no exact multipliers on the samples (it was proven in the points' affine frame only)."""
    positive = np.asarray(data.y) == classes[1]
    first = first_rows(data.X)
    U0 = np.asarray(data.U, dtype=np.float64) + 0.0  # -0.0 and 0.0 are one value
    entries = []
    for polarity, res in results.items():
        proof = res.proof
        if proof is None or proof.lower < bound:
            return None
        want, other = (data.wpos, data.wneg) if polarity == 1 else (data.wneg, data.wpos)
        # the label each point has in the IISs: the union's class where it weighs more
        sign = np.where(want > other, polarity, -polarity)
        groups = [res.rows.relations.get(tuple(sorted(int(i) for i in c)), [c])
                  for c in proof.cuts]
        iis, left_out = iis_witness(data.X, positive, data.U, sign,
                                    [t for g in groups for t in g])
        if left_out:
            return None
        members = iter(iis)
        entries.append({
            "polarity": int(polarity),
            "obstructions": [[next(members) for _ in g] for g in groups],
            "blocks": [[[first[U0[i].tobytes()] for i in np.asarray(b).tolist()], float(v)]
                       for b, v in proof.blocks],
        })
    return {"n_hyperplanes": int(K), "polarities": entries}
