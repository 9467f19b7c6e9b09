"""Numpy-only hot kernels: no pandas, no pyarrow, no per-row Python."""
