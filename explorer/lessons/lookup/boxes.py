"""The lookup lesson's "claim, measured" box: does q = k_j win the lookup for every j? (explorer.kit.measured)."""

from __future__ import annotations

import numpy as np

from explorer.analysis.claims import self_match_wins
from explorer.kit.measured import Measured

__all__ = ["self_match"]


def self_match(keys) -> Measured:
    keys = np.asarray(keys, dtype=np.float64)
    wins = self_match_wins(keys)
    lengths = np.linalg.norm(keys, axis=1)
    rows = tuple((f"k{j + 1}", float(n), "yes" if w else "no")
                 for j, (n, w) in enumerate(zip(lengths, wins, strict=True)))
    equal = bool(np.allclose(lengths, lengths[0]))
    losers = [f"k{j + 1}" for j in np.flatnonzero(~wins)]
    if not losers:
        finding = ("Here every key wins when it is the query" + (", as it must when all keys have the same length "
                   "(q·k_j = |q|² is then the largest dot product)." if equal else
                   ": these keys differ in length, but not enough to let a longer one outscore a key on itself."))
    else:
        finding = (f"Here {', '.join(losers)} {'loses' if len(losers) == 1 else 'lose'}: with q = k_j another, longer "
                   "key in a similar direction scores higher. Equal lengths (keys scaled to one length) would "
                   "guarantee that a query finds the key equal to it; with unequal lengths it depends on the keys.")
    return Measured("Does q = k_j always pick key j?",
                    "The notes look up the value of key k₄ with the query q = k₄.",
                    ("key", "length |k|", "wins when it is the query"), rows, finding)
