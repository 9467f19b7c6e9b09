/* lsh_frame's compiled kernels: what every source file shares.
 *
 * Arrays come in through the buffer protocol (no numpy headers at build
 * time), C-contiguous and of the item size the kernel names; the Python
 * wrappers in lsh_frame/_kernels/native.py make them so. Every kernel does
 * its work between Py_BEGIN_ALLOW_THREADS and Py_END_ALLOW_THREADS, so the
 * callers' threads (a ThreadPoolExecutor over slices of rows) run side by
 * side. Integer arithmetic wraps modulo 2**n exactly as numpy's does, and
 * floating point is IEEE double without contraction (-ffp-contract=off), so
 * each kernel gives what its numpy twin gives, bit for bit.
 */
#ifndef LSH_FRAME_NATIVE_H
#define LSH_FRAME_NATIVE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Loops worth an AVX2 version get one beside the baseline where the
 * toolchain can pick between them at run time (GCC/clang on glibc Linux,
 * x86-64); elsewhere the baseline alone is built. */
#if defined(__x86_64__) && defined(__linux__) && defined(__GLIBC__) && \
    defined(__GNUC__) && (!defined(__clang__) || __clang_major__ >= 14)
#define LF_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define LF_CLONES
#endif

#define LF_MULTIPLIER UINT64_C(0x9E3779B97F4A7C15)
#define LF_LENGTH_MIX UINT64_C(0xD6E8FEB86659FD93)

static inline uint64_t lf_splitmix64(uint64_t z)
{
    z ^= z >> 30;
    z *= UINT64_C(0xBF58476D1CE4E5B9);
    z ^= z >> 27;
    z *= UINT64_C(0x94D049BB133111EB);
    z ^= z >> 31;
    return z;
}

/* An array taken from a Python object. */
typedef struct {
    Py_buffer view;
    int held;
    Py_ssize_t size; /* elements */
} lf_array;

/* kind: 'u' unsigned integer, 'i' signed integer, 'f' float, 'b' bool,
 * 'x' any integer of the item size. Sets a Python error and returns -1 when
 * the object is not such an array. */
int lf_take(PyObject *object, lf_array *array, char kind, Py_ssize_t itemsize,
            int writable, const char *name);
/* Like lf_take, but the item size may be any of 1 or 4 (code units). */
int lf_take_units(PyObject *object, lf_array *array, const char *name);
void lf_release(lf_array *array);

#define LF_DATA(array, type) ((type *)(array).view.buf)

/* The kernels, one Python-callable function each. */
PyObject *lf_char_shingles(PyObject *self, PyObject *args);
PyObject *lf_word_hashes(PyObject *self, PyObject *args);
PyObject *lf_minhash_affine32(PyObject *self, PyObject *args);
PyObject *lf_minhash_mersenne61(PyObject *self, PyObject *args);
PyObject *lf_sketch_fss32(PyObject *self, PyObject *args);
PyObject *lf_collapse_whitespace(PyObject *self, PyObject *args);
PyObject *lf_utf8_codepoints(PyObject *self, PyObject *args);
PyObject *lf_word_spans(PyObject *self, PyObject *args);
PyObject *lf_top_neighbours(PyObject *self, PyObject *args);
PyObject *lf_value_tokens(PyObject *self, PyObject *args);
PyObject *lf_sorted_sets(PyObject *self, PyObject *args);
PyObject *lf_intersection_sizes(PyObject *self, PyObject *args);
PyObject *lf_sparse_dots(PyObject *self, PyObject *args);
PyObject *lf_emit_pairs(PyObject *self, PyObject *args);
PyObject *lf_components(PyObject *self, PyObject *args);
PyObject *lf_token_runs(PyObject *self, PyObject *args);
PyObject *lf_hash_text(PyObject *self, PyObject *args);

#endif
