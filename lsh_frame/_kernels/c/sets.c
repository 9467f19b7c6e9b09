/* Token sets: each value's hashes sorted and distinct, and the sizes of the
 * intersections of many pairs of them by merging; the twin of SetTable's
 * intersection_sizes in lsh_frame/_kernels/sets.py (exact counts either way). */
#include "native.h"

static int compare_hashes(const void *one, const void *other)
{
    uint64_t a = *(const uint64_t *)one, b = *(const uint64_t *)other;
    return (a > b) - (a < b);
}

static void sort_hashes(uint64_t *values, int64_t size)
{
    if (size > 32) {
        qsort(values, (size_t)size, sizeof(uint64_t), compare_hashes);
        return;
    }
    for (int64_t i = 1; i < size; i++) {
        uint64_t value = values[i];
        int64_t j = i;
        while (j > 0 && values[j - 1] > value) {
            values[j] = values[j - 1];
            j--;
        }
        values[j] = value;
    }
}

PyObject *lf_sorted_sets(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *hashes_object, *offsets_object, *out_object, *out_offsets_object;
    if (!PyArg_ParseTuple(args, "OOOO", &hashes_object, &offsets_object, &out_object,
                          &out_offsets_object))
        return NULL;
    lf_array hashes, offsets, out, out_offsets;
    hashes.held = offsets.held = out.held = out_offsets.held = 0;
    PyObject *result = NULL;
    if (lf_take(hashes_object, &hashes, 'u', 8, 0, "hashes") < 0 ||
        lf_take(offsets_object, &offsets, 'i', 8, 0, "offsets") < 0 ||
        lf_take(out_object, &out, 'u', 8, 1, "out") < 0 ||
        lf_take(out_offsets_object, &out_offsets, 'i', 8, 1, "out_offsets") < 0)
        goto done;
    Py_ssize_t sets = offsets.size - 1;
    const int64_t *offset = LF_DATA(offsets, int64_t);
    if (sets < 0 || out_offsets.size != offsets.size) {
        PyErr_SetString(PyExc_ValueError, "sorted_sets: bad sizes.");
        goto done;
    }
    int64_t room = 0;
    for (Py_ssize_t i = 0; i < sets; i++) {
        if (offset[i] < 0 || offset[i + 1] < offset[i] || offset[i + 1] > hashes.size) {
            PyErr_SetString(PyExc_ValueError, "sorted_sets: offsets out of range.");
            goto done;
        }
        room += offset[i + 1] - offset[i];
    }
    if (out.size < room) {
        PyErr_SetString(PyExc_ValueError, "sorted_sets: 'out' is too small.");
        goto done;
    }
    const uint64_t *in = LF_DATA(hashes, uint64_t);
    uint64_t *put = LF_DATA(out, uint64_t);
    int64_t *put_offsets = LF_DATA(out_offsets, int64_t);
    Py_BEGIN_ALLOW_THREADS
    int64_t written = 0;
    put_offsets[0] = 0;
    for (Py_ssize_t i = 0; i < sets; i++) {
        int64_t size = offset[i + 1] - offset[i];
        uint64_t *set = put + written;
        memcpy(set, in + offset[i], sizeof(uint64_t) * (size_t)size);
        sort_hashes(set, size);
        int64_t kept = 0;
        for (int64_t j = 0; j < size; j++)
            if (j == 0 || set[j] != set[kept - 1])
                set[kept++] = set[j];
        written += kept;
        put_offsets[i + 1] = written;
    }
    Py_END_ALLOW_THREADS
    result = Py_None;
    Py_INCREF(result);
done:
    lf_release(&hashes);
    lf_release(&offsets);
    lf_release(&out);
    lf_release(&out_offsets);
    return result;
}

PyObject *lf_intersection_sizes(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *objects[5];
    if (!PyArg_ParseTuple(args, "OOOOO", &objects[0], &objects[1], &objects[2],
                          &objects[3], &objects[4]))
        return NULL;
    lf_array values, offsets, first, second, out;
    values.held = offsets.held = first.held = second.held = out.held = 0;
    PyObject *result = NULL;
    if (lf_take(objects[0], &values, 'u', 8, 0, "values") < 0 ||
        lf_take(objects[1], &offsets, 'i', 8, 0, "offsets") < 0 ||
        lf_take(objects[2], &first, 'i', 8, 0, "first") < 0 ||
        lf_take(objects[3], &second, 'i', 8, 0, "second") < 0 ||
        lf_take(objects[4], &out, 'i', 8, 1, "out") < 0)
        goto done;
    Py_ssize_t sets = offsets.size - 1, pairs = first.size;
    const int64_t *offset = LF_DATA(offsets, int64_t);
    const int64_t *one = LF_DATA(first, int64_t), *other = LF_DATA(second, int64_t);
    if (sets < 0 || second.size != pairs || out.size != pairs) {
        PyErr_SetString(PyExc_ValueError, "intersection_sizes: bad sizes.");
        goto done;
    }
    for (Py_ssize_t i = 0; i < sets; i++) {
        if (offset[i] < 0 || offset[i + 1] < offset[i] || offset[i + 1] > values.size) {
            PyErr_SetString(PyExc_ValueError, "intersection_sizes: bad offsets.");
            goto done;
        }
    }
    for (Py_ssize_t p = 0; p < pairs; p++) {
        if (one[p] < 0 || one[p] >= sets || other[p] < 0 || other[p] >= sets) {
            PyErr_SetString(PyExc_IndexError, "intersection_sizes: no such set.");
            goto done;
        }
    }
    const uint64_t *value = LF_DATA(values, uint64_t);
    int64_t *shared = LF_DATA(out, int64_t);
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t p = 0; p < pairs; p++) {
#if defined(__GNUC__)
        /* The sets of pairs ahead lie anywhere: fetch them while this merges. */
        if (p + 16 < pairs) {
            __builtin_prefetch(offset + other[p + 16]);
            __builtin_prefetch(offset + one[p + 16]);
        }
        if (p + 8 < pairs) {
            __builtin_prefetch(value + offset[other[p + 8]]);
            __builtin_prefetch(value + offset[one[p + 8]]);
        }
#endif
        const uint64_t *a = value + offset[one[p]], *a_end = value + offset[one[p] + 1];
        const uint64_t *b = value + offset[other[p]], *b_end = value + offset[other[p] + 1];
        int64_t count = 0;
        while (a < a_end && b < b_end) {
            uint64_t x = *a, y = *b;
            count += x == y;
            a += x <= y;
            b += y <= x;
        }
        shared[p] = count;
    }
    Py_END_ALLOW_THREADS
    result = Py_None;
    Py_INCREF(result);
done:
    lf_release(&values);
    lf_release(&offsets);
    lf_release(&first);
    lf_release(&second);
    lf_release(&out);
    return result;
}

/* Dot products of pairs of sparse vectors: the twin of cosines in
 * lsh_frame/_kernels/tfidf.py. Each vector's ids ascend; the products of the
 * shared ids add up from 0.0 in ascending id order, as numpy's bincount adds
 * them there (compiled without fused multiply-add, see setup.py). */
PyObject *lf_sparse_dots(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *objects[6];
    if (!PyArg_ParseTuple(args, "OOOOOO", &objects[0], &objects[1], &objects[2],
                          &objects[3], &objects[4], &objects[5]))
        return NULL;
    lf_array ids, weights, offsets, first, second, out;
    ids.held = weights.held = offsets.held = first.held = second.held = out.held = 0;
    PyObject *result = NULL;
    if (lf_take(objects[0], &ids, 'i', 8, 0, "ids") < 0 ||
        lf_take(objects[1], &weights, 'f', 8, 0, "weights") < 0 ||
        lf_take(objects[2], &offsets, 'i', 8, 0, "offsets") < 0 ||
        lf_take(objects[3], &first, 'i', 8, 0, "first") < 0 ||
        lf_take(objects[4], &second, 'i', 8, 0, "second") < 0 ||
        lf_take(objects[5], &out, 'f', 8, 1, "out") < 0)
        goto done;
    Py_ssize_t vectors = offsets.size - 1, pairs = first.size;
    const int64_t *offset = LF_DATA(offsets, int64_t);
    const int64_t *one = LF_DATA(first, int64_t), *other = LF_DATA(second, int64_t);
    if (vectors < 0 || second.size != pairs || out.size != pairs ||
        weights.size != ids.size) {
        PyErr_SetString(PyExc_ValueError, "sparse_dots: bad sizes.");
        goto done;
    }
    for (Py_ssize_t i = 0; i < vectors; i++) {
        if (offset[i] < 0 || offset[i + 1] < offset[i] || offset[i + 1] > ids.size) {
            PyErr_SetString(PyExc_ValueError, "sparse_dots: bad offsets.");
            goto done;
        }
    }
    for (Py_ssize_t p = 0; p < pairs; p++) {
        if (one[p] < 0 || one[p] >= vectors || other[p] < 0 || other[p] >= vectors) {
            PyErr_SetString(PyExc_IndexError, "sparse_dots: no such vector.");
            goto done;
        }
    }
    const int64_t *id = LF_DATA(ids, int64_t);
    const double *weight = LF_DATA(weights, double);
    double *dot = LF_DATA(out, double);
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t p = 0; p < pairs; p++) {
        int64_t a = offset[one[p]], a_end = offset[one[p] + 1];
        int64_t b = offset[other[p]], b_end = offset[other[p] + 1];
        double sum = 0.0;
        while (a < a_end && b < b_end) {
            int64_t x = id[a], y = id[b];
            if (x == y) {
                double product = weight[a] * weight[b];
                sum += product;
            }
            a += x <= y;
            b += y <= x;
        }
        dot[p] = sum;
    }
    Py_END_ALLOW_THREADS
    result = Py_None;
    Py_INCREF(result);
done:
    lf_release(&ids);
    lf_release(&weights);
    lf_release(&offsets);
    lf_release(&first);
    lf_release(&second);
    lf_release(&out);
    return result;
}
