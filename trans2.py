import sys, numpy as np, pandas as pd
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
truth_n = {}
def evaluate(f, n_true=None):
    s = pd.read_pickle(f); p = s.match_probability.fillna(0).to_numpy(); t = s.truth.to_numpy()
    m0 = s.match.to_numpy()
    ids = pd.Index(pd.unique(np.r_[s.left.to_numpy(), s.right.to_numpy()]))
    a = ids.get_indexer(s.left); b = ids.get_indexer(s.right); n = len(ids)
    def f1(m):
        tp = (m & t).sum(); return 2 * tp / (m.sum() + n_true)
    out = [f"{f}: base F1 {f1(m0):.4f}"]
    g = coo_matrix((np.ones(m0.sum()), (a[m0], b[m0])), shape=(n, n))
    _, lab = connected_components(g, directed=False)
    same = lab[a] == lab[b]
    for c2 in [0.0, 0.001, 0.01, 0.05, 0.1]:
        m = m0 | (same & (p >= c2))
        out.append(f"c2 {c2}: {f1(m):.4f} (+{(m & ~m0).sum()})")
    print(" | ".join(out))
import ast
for f, nt in [(a.split(':')[0], int(a.split(':')[1])) for a in sys.argv[1:]]:
    evaluate(f, nt)
