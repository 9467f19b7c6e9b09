/* Text as code units: the twin of collapse_whitespace in
 * lsh_frame/_kernels/text.py (whitespace runs to one space, ends trimmed, per
 * record: " ".join(s.split())). */
#include "native.h"

/* Python's str.isspace(), as text.py's WHITESPACE lists it. */
static inline int is_space(uint32_t c)
{
    if (c <= 0x20)
        return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20);
    if (c < 0x85)
        return 0;
    return c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) ||
           c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

/* The bytes of ASCII text: code points below 0x80 only. */
static inline int is_ascii_space(uint8_t c)
{
    return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20);
}

/* Whitespace, or ASCII punctuation and symbols ([!-/:-@[-`{-~]). */
static inline int is_ascii_space_or_punctuation(uint8_t c)
{
    return is_ascii_space(c) || (c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x40) ||
           (c >= 0x5B && c <= 0x60) || (c >= 0x7B && c <= 0x7E);
}

#define COLLAPSE(type, space_test)                                                 \
    do {                                                                           \
        const type *in = (const type *)units;                                      \
        type *put = (type *)out;                                                   \
        int64_t written = 0;                                                       \
        out_offsets[0] = 0;                                                        \
        for (Py_ssize_t r = 0; r < records; r++) {                                 \
            int pending = 0, any = 0;                                              \
            for (int64_t p = offsets[r]; p < offsets[r + 1]; p++) {                \
                type c = in[p];                                                    \
                if (space_test(c)) {                                               \
                    pending = any;                                                 \
                    continue;                                                      \
                }                                                                  \
                if (pending) {                                                     \
                    put[written++] = 0x20;                                         \
                    pending = 0;                                                   \
                }                                                                  \
                put[written++] = c;                                                \
                any = 1;                                                           \
            }                                                                      \
            out_offsets[r + 1] = written;                                          \
        }                                                                          \
    } while (0)

static void collapse(const void *units, int wide, int punctuation,
                     const int64_t *offsets, Py_ssize_t records, void *out,
                     int64_t *out_offsets)
{
    if (wide)
        COLLAPSE(uint32_t, is_space);
    else if (punctuation)
        COLLAPSE(uint8_t, is_ascii_space_or_punctuation);
    else
        COLLAPSE(uint8_t, is_ascii_space);
}

PyObject *lf_collapse_whitespace(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *units_object, *offsets_object, *out_object, *out_offsets_object;
    int punctuation;
    if (!PyArg_ParseTuple(args, "OOpOO", &units_object, &offsets_object, &punctuation,
                          &out_object, &out_offsets_object))
        return NULL;
    lf_array units, offsets, out, out_offsets;
    units.held = offsets.held = out.held = out_offsets.held = 0;
    PyObject *result = NULL;
    if (lf_take_units(units_object, &units, "units") < 0 ||
        lf_take(offsets_object, &offsets, 'i', 8, 0, "offsets") < 0 ||
        lf_take(out_object, &out, 'u', units.view.itemsize, 1, "out") < 0 ||
        lf_take(out_offsets_object, &out_offsets, 'i', 8, 1, "out_offsets") < 0)
        goto done;
    Py_ssize_t records = offsets.size - 1;
    const int64_t *offset = LF_DATA(offsets, int64_t);
    int64_t room = 0;
    for (Py_ssize_t r = 0; r < records; r++) {
        if (offset[r] < 0 || offset[r + 1] < offset[r] || offset[r + 1] > units.size) {
            PyErr_SetString(PyExc_ValueError, "collapse_whitespace: bad offsets.");
            goto done;
        }
        room += offset[r + 1] - offset[r];
    }
    if (records < 0 || out_offsets.size != offsets.size || out.size < room ||
        (punctuation && units.view.itemsize != 1)) {
        PyErr_SetString(PyExc_ValueError, "collapse_whitespace: bad output sizes.");
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    collapse(units.view.buf, units.view.itemsize == 4, punctuation, offset, records,
             out.view.buf, LF_DATA(out_offsets, int64_t));
    Py_END_ALLOW_THREADS
    result = Py_None;
    Py_INCREF(result);
done:
    lf_release(&units);
    lf_release(&offsets);
    lf_release(&out);
    lf_release(&out_offsets);
    return result;
}

/* Sorted packed tokens (hash bits above a record's bits, repeats allowed),
 * compacted in place to distinct ones and turned into their records, with
 * each one's token id (the rank of its hash bits) and each token's count of
 * records: one pass, the twin of compact_sorted, _hash_runs, bincount and the
 * record mask in lsh_frame/_kernels/neighbours.py's vocabulary(). */
PyObject *lf_token_runs(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *packed_object, *ids_object, *lengths_object;
    int bits;
    if (!PyArg_ParseTuple(args, "OiOO", &packed_object, &bits, &ids_object,
                          &lengths_object))
        return NULL;
    lf_array packed, ids, lengths;
    packed.held = ids.held = lengths.held = 0;
    PyObject *result = NULL;
    if (lf_take(packed_object, &packed, 'u', 8, 1, "packed") < 0 ||
        lf_take(ids_object, &ids, 'i', 8, 1, "ids") < 0 ||
        lf_take(lengths_object, &lengths, 'i', 8, 1, "lengths") < 0)
        goto done;
    if (bits < 1 || bits > 63 || ids.size < packed.size || lengths.size < packed.size) {
        PyErr_SetString(PyExc_ValueError, "token_runs: bad bits or sizes.");
        goto done;
    }
    uint64_t *value = LF_DATA(packed, uint64_t);
    int64_t *id = LF_DATA(ids, int64_t), *length = LF_DATA(lengths, int64_t);
    uint64_t mask = (UINT64_C(1) << bits) - 1;
    Py_ssize_t size = packed.size, kept = 0, count = 0;
    int sorted = 1;
    Py_BEGIN_ALLOW_THREADS
    uint64_t previous = 0, previous_hash = 0;
    for (Py_ssize_t i = 0; i < size; i++) {
        uint64_t v = value[i];
        if (i > 0) {
            if (v < previous) {
                sorted = 0;
                break;
            }
            if (v == previous)
                continue;
        }
        uint64_t hash = v >> bits;
        if (kept == 0 || hash != previous_hash) {
            length[count++] = 0;
            previous_hash = hash;
        }
        length[count - 1]++;
        id[kept] = (int64_t)(count - 1);
        value[kept++] = v & mask;
        previous = v;
    }
    Py_END_ALLOW_THREADS
    if (!sorted) {
        PyErr_SetString(PyExc_ValueError, "token_runs: the tokens are not sorted.");
        goto done;
    }
    result = Py_BuildValue("nn", kept, count);
done:
    lf_release(&packed);
    lf_release(&ids);
    lf_release(&lengths);
    return result;
}

/* UTF-8 bytes to code points: the twin of utf8_to_codepoints in
 * lsh_frame/_kernels/text.py. Every byte that is not a continuation byte
 * (10xxxxxx) starts a code point, decoded from the bytes after it (zeros past
 * the end), exactly as the numpy twin's masks do; out_offsets[r] counts the
 * starting bytes before offsets[r]. */
static LF_CLONES void decode_utf8(const uint8_t *data, int64_t size,
                                  const int64_t *offsets, Py_ssize_t bounds,
                                  uint32_t *out, int64_t *out_offsets)
{
    int64_t written = 0, at = 0;
    for (Py_ssize_t r = 0; r < bounds; r++) {
        int64_t until = offsets[r];
        for (; at < until; at++) {
            uint32_t b0 = data[at];
            if ((b0 & 0xC0) == 0x80)
                continue;
            if (b0 < 0x80) {
                out[written++] = b0;
                continue;
            }
            uint32_t b1 = at + 1 < size ? (uint32_t)data[at + 1] & 0x3F : 0;
            uint32_t b2 = at + 2 < size ? (uint32_t)data[at + 2] & 0x3F : 0;
            uint32_t b3 = at + 3 < size ? (uint32_t)data[at + 3] & 0x3F : 0;
            if (b0 < 0xE0)
                out[written++] = ((b0 & 0x1F) << 6) | b1;
            else if (b0 < 0xF0)
                out[written++] = ((b0 & 0x0F) << 12) | (b1 << 6) | b2;
            else
                out[written++] = ((b0 & 0x07) << 18) | (b1 << 12) | (b2 << 6) | b3;
        }
        out_offsets[r] = written;
    }
}

PyObject *lf_utf8_codepoints(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *data_object, *offsets_object, *out_object, *out_offsets_object;
    if (!PyArg_ParseTuple(args, "OOOO", &data_object, &offsets_object, &out_object,
                          &out_offsets_object))
        return NULL;
    lf_array data, offsets, out, out_offsets;
    data.held = offsets.held = out.held = out_offsets.held = 0;
    PyObject *result = NULL;
    if (lf_take(data_object, &data, 'u', 1, 0, "data") < 0 ||
        lf_take(offsets_object, &offsets, 'i', 8, 0, "offsets") < 0 ||
        lf_take(out_object, &out, 'u', 4, 1, "out") < 0 ||
        lf_take(out_offsets_object, &out_offsets, 'i', 8, 1, "out_offsets") < 0)
        goto done;
    const int64_t *offset = LF_DATA(offsets, int64_t);
    Py_ssize_t bounds = offsets.size;
    for (Py_ssize_t r = 0; r < bounds; r++) {
        if (offset[r] < 0 || offset[r] > data.size || (r && offset[r] < offset[r - 1])) {
            PyErr_SetString(PyExc_ValueError, "utf8_codepoints: bad offsets.");
            goto done;
        }
    }
    if (out_offsets.size != bounds || out.size < data.size) {
        PyErr_SetString(PyExc_ValueError, "utf8_codepoints: bad output sizes.");
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    decode_utf8(LF_DATA(data, uint8_t), data.size, offset, bounds,
                LF_DATA(out, uint32_t), LF_DATA(out_offsets, int64_t));
    Py_END_ALLOW_THREADS
    result = Py_None;
    Py_INCREF(result);
done:
    lf_release(&data);
    lf_release(&offsets);
    lf_release(&out);
    lf_release(&out_offsets);
    return result;
}

/* Maximal runs of non-whitespace in each record: the twin of word_spans in
 * lsh_frame/_kernels/hashing.py (positions in the units, record numbers from 0).
 * Without outputs (None), counts the runs. */
#define SPANS(type, space_test)                                                    \
    do {                                                                           \
        const type *in = (const type *)units;                                      \
        for (Py_ssize_t r = 0; r < records; r++) {                                 \
            int64_t begin = -1;                                                    \
            for (int64_t p = offsets[r]; p < offsets[r + 1]; p++) {                \
                if (space_test(in[p])) {                                           \
                    if (begin >= 0) {                                              \
                        if (starts) {                                              \
                            starts[found] = begin;                                 \
                            ends[found] = p;                                       \
                            owners[found] = r;                                     \
                        }                                                          \
                        found++;                                                   \
                        begin = -1;                                                \
                    }                                                              \
                } else if (begin < 0) {                                            \
                    begin = p;                                                     \
                }                                                                  \
            }                                                                      \
            if (begin >= 0) {                                                      \
                if (starts) {                                                      \
                    starts[found] = begin;                                         \
                    ends[found] = offsets[r + 1];                                  \
                    owners[found] = r;                                             \
                }                                                                  \
                found++;                                                           \
            }                                                                      \
        }                                                                          \
    } while (0)

static int64_t spans(const void *units, int wide, const int64_t *offsets,
                     Py_ssize_t records, int64_t *starts, int64_t *ends,
                     int64_t *owners)
{
    int64_t found = 0;
    if (wide)
        SPANS(uint32_t, is_space);
    else
        SPANS(uint8_t, is_ascii_space);
    return found;
}

PyObject *lf_word_spans(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *units_object, *offsets_object, *starts_object, *ends_object,
        *records_object;
    if (!PyArg_ParseTuple(args, "OOOOO", &units_object, &offsets_object,
                          &starts_object, &ends_object, &records_object))
        return NULL;
    lf_array units, offsets, starts, ends, owners;
    units.held = offsets.held = starts.held = ends.held = owners.held = 0;
    PyObject *result = NULL;
    int filling = starts_object != Py_None;
    if (lf_take_units(units_object, &units, "units") < 0 ||
        lf_take(offsets_object, &offsets, 'i', 8, 0, "offsets") < 0)
        goto done;
    if (filling && (lf_take(starts_object, &starts, 'i', 8, 1, "starts") < 0 ||
                    lf_take(ends_object, &ends, 'i', 8, 1, "ends") < 0 ||
                    lf_take(records_object, &owners, 'i', 8, 1, "records") < 0))
        goto done;
    Py_ssize_t records = offsets.size - 1;
    const int64_t *offset = LF_DATA(offsets, int64_t);
    for (Py_ssize_t r = 0; r < records; r++) {
        if (offset[r] < 0 || offset[r + 1] < offset[r] || offset[r + 1] > units.size) {
            PyErr_SetString(PyExc_ValueError, "word_spans: bad offsets.");
            goto done;
        }
    }
    int wide = units.view.itemsize == 4;
    int64_t count;
    if (filling) {
        Py_BEGIN_ALLOW_THREADS
        count = spans(units.view.buf, wide, offset, records, NULL, NULL, NULL);
        Py_END_ALLOW_THREADS
        if (starts.size != count || ends.size != count || owners.size != count) {
            PyErr_SetString(PyExc_ValueError, "word_spans: bad output sizes.");
            goto done;
        }
        Py_BEGIN_ALLOW_THREADS
        spans(units.view.buf, wide, offset, records, LF_DATA(starts, int64_t),
              LF_DATA(ends, int64_t), LF_DATA(owners, int64_t));
        Py_END_ALLOW_THREADS
    } else {
        Py_BEGIN_ALLOW_THREADS
        count = spans(units.view.buf, wide, offset, records, NULL, NULL, NULL);
        Py_END_ALLOW_THREADS
    }
    result = PyLong_FromLongLong(count);
done:
    lf_release(&units);
    lf_release(&offsets);
    if (filling) {
        lf_release(&starts);
        lf_release(&ends);
        lf_release(&owners);
    }
    return result;
}
