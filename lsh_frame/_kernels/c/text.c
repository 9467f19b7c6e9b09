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

static void collapse(const void *units, int wide, const int64_t *offsets,
                     Py_ssize_t records, void *out, int64_t *out_offsets)
{
    if (wide)
        COLLAPSE(uint32_t, is_space);
    else
        COLLAPSE(uint8_t, is_ascii_space);
}

PyObject *lf_collapse_whitespace(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *units_object, *offsets_object, *out_object, *out_offsets_object;
    if (!PyArg_ParseTuple(args, "OOOO", &units_object, &offsets_object, &out_object,
                          &out_offsets_object))
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
    if (records < 0 || out_offsets.size != offsets.size || out.size < room) {
        PyErr_SetString(PyExc_ValueError, "collapse_whitespace: bad output sizes.");
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    collapse(units.view.buf, units.view.itemsize == 4, offset, records, out.view.buf,
             LF_DATA(out_offsets, int64_t));
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
