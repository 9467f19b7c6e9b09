/* Stable 64-bit hashes of character windows and of words: the twins of
 * char_shingles and word_hashes in lsh_frame/_kernels/hashing.py. */
#include "native.h"

#define UNIT(data, wide, p) ((wide) ? (uint64_t)((const uint32_t *)(data))[p] \
                                    : (uint64_t)((const uint8_t *)(data))[p])

static void char_windows(const void *data, int wide, const int64_t *offsets,
                         Py_ssize_t records, int64_t k, const uint64_t *tags,
                         int per_record, uint64_t *out)
{
    Py_ssize_t written = 0;
    for (Py_ssize_t r = 0; r < records; r++) {
        uint64_t tag = tags[per_record ? r : 0];
        int64_t last = offsets[r + 1] - k;
        for (int64_t s = offsets[r]; s <= last; s++) {
            uint64_t value = UNIT(data, wide, s);
            for (int64_t j = 1; j < k; j++)
                value = value * LF_MULTIPLIER + UNIT(data, wide, s + j);
            out[written++] = lf_splitmix64(value ^ tag);
        }
    }
}

PyObject *lf_char_shingles(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *units_object, *offsets_object, *tags_object, *out_object;
    long long k;
    if (!PyArg_ParseTuple(args, "OOLOO", &units_object, &offsets_object, &k,
                          &tags_object, &out_object))
        return NULL;
    lf_array units, offsets, tags, out;
    units.held = offsets.held = tags.held = out.held = 0;
    PyObject *result = NULL;
    if (lf_take_units(units_object, &units, "units") < 0 ||
        lf_take(offsets_object, &offsets, 'i', 8, 0, "offsets") < 0 ||
        lf_take(tags_object, &tags, 'u', 8, 0, "tags") < 0 ||
        lf_take(out_object, &out, 'u', 8, 1, "out") < 0)
        goto done;
    Py_ssize_t records = offsets.size - 1;
    if (k < 1 || records < 0 || tags.size < 1 ||
        (tags.size != 1 && tags.size != records)) {
        PyErr_SetString(PyExc_ValueError, "char_shingles: bad k, offsets or tags.");
        goto done;
    }
    /* Check the bounds and the output size before any write. */
    const int64_t *offset = LF_DATA(offsets, int64_t);
    Py_ssize_t expected = 0;
    for (Py_ssize_t r = 0; r < records; r++) {
        if (offset[r] < 0 || offset[r + 1] < offset[r] || offset[r + 1] > units.size) {
            PyErr_SetString(PyExc_ValueError, "char_shingles: offsets out of range.");
            goto done;
        }
        int64_t count = offset[r + 1] - offset[r] - k + 1;
        expected += count > 0 ? count : 0;
    }
    if (expected != out.size) {
        PyErr_SetString(PyExc_ValueError, "char_shingles: 'out' has the wrong size.");
        goto done;
    }
    int per_record = tags.size == records && records != 1;
    Py_BEGIN_ALLOW_THREADS
    char_windows(units.view.buf, units.view.itemsize == 4, offset, records, (int64_t)k,
                 LF_DATA(tags, uint64_t), per_record, LF_DATA(out, uint64_t));
    Py_END_ALLOW_THREADS
    result = Py_None;
    Py_INCREF(result);
done:
    lf_release(&units);
    lf_release(&offsets);
    lf_release(&tags);
    lf_release(&out);
    return result;
}

static void span_hashes(const void *data, int wide, const int64_t *starts,
                        const int64_t *ends, Py_ssize_t spans, uint64_t *out)
{
    for (Py_ssize_t i = 0; i < spans; i++) {
        uint64_t value = 0;
        for (int64_t p = ends[i] - 1; p >= starts[i]; p--)
            value = value * LF_MULTIPLIER + UNIT(data, wide, p);
        value ^= (uint64_t)(ends[i] - starts[i]) * LF_LENGTH_MIX;
        out[i] = lf_splitmix64(value);
    }
}

PyObject *lf_word_hashes(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *units_object, *starts_object, *ends_object, *out_object;
    if (!PyArg_ParseTuple(args, "OOOO", &units_object, &starts_object, &ends_object,
                          &out_object))
        return NULL;
    lf_array units, starts, ends, out;
    units.held = starts.held = ends.held = out.held = 0;
    PyObject *result = NULL;
    if (lf_take_units(units_object, &units, "units") < 0 ||
        lf_take(starts_object, &starts, 'i', 8, 0, "starts") < 0 ||
        lf_take(ends_object, &ends, 'i', 8, 0, "ends") < 0 ||
        lf_take(out_object, &out, 'u', 8, 1, "out") < 0)
        goto done;
    if (starts.size != ends.size || out.size != starts.size) {
        PyErr_SetString(PyExc_ValueError, "word_hashes: sizes differ.");
        goto done;
    }
    const int64_t *start = LF_DATA(starts, int64_t), *end = LF_DATA(ends, int64_t);
    for (Py_ssize_t i = 0; i < starts.size; i++) {
        if (start[i] < 0 || end[i] < start[i] || end[i] > units.size) {
            PyErr_SetString(PyExc_ValueError, "word_hashes: span out of range.");
            goto done;
        }
    }
    Py_BEGIN_ALLOW_THREADS
    span_hashes(units.view.buf, units.view.itemsize == 4, start, end, starts.size,
                LF_DATA(out, uint64_t));
    Py_END_ALLOW_THREADS
    result = Py_None;
    Py_INCREF(result);
done:
    lf_release(&units);
    lf_release(&starts);
    lf_release(&ends);
    lf_release(&out);
    return result;
}
