"""Vector keys give on Dask exactly what they give on pandas."""

from __future__ import annotations

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import lsh_frame as lf
import lsh_frame.dask  # registers ddf.lsh


@pytest.mark.parametrize("partitions", [1, 3])
def test_vector_keys_equal_pandas(partitions: int) -> None:
    rng = np.random.default_rng(8)
    base = rng.standard_normal((150, 16)).astype(np.float32)
    vectors = np.concatenate([base, base + 0.1 * rng.standard_normal(base.shape)])
    codes = rng.integers(0, 2**63, size=300, dtype=np.int64)
    codes[150:] = codes[:150] ^ 1
    # An Arrow column: Dask turns object columns into strings by default
    # (dataframe.convert-string), so vectors travel as fixed_size_list.
    flat = pa.array(vectors.astype(np.float32).reshape(-1))
    emb = pd.arrays.ArrowExtensionArray(pa.FixedSizeListArray.from_arrays(flat, 16))
    frame = pd.DataFrame({"emb": emb, "code": codes})
    ddf = dd.from_pandas(frame, npartitions=partitions, sort=False)
    cases = [
        [lf.Field("emb", blocking="cosine", threshold=0.9)],
        [lf.Field("code", blocking="hamming", threshold=0.9)],
        [lf.Field("emb", blocking="cosine", top=2)],
    ]
    with dask.config.set(scheduler="synchronous"):
        for fields in cases:
            got = ddf.lsh.candidates(fields).compute()
            want = ddf.compute().lsh.candidates(fields)
            pd.testing.assert_frame_equal(got, want)
            assert len(want) >= 150
