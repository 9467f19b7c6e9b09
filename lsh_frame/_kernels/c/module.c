/* The module lsh_frame._kernels._native: its functions and the buffer helpers. */
#include "native.h"

static char format_kind(const char *format)
{
    if (format == NULL)
        return 'u'; /* plain bytes */
    while (*format == '@' || *format == '=' ||
#if PY_LITTLE_ENDIAN
           *format == '<'
#else
           *format == '>'
#endif
    )
        format++;
    if (format[0] == '\0' || format[1] != '\0')
        return '?';
    switch (format[0]) {
    case 'B': case 'H': case 'I': case 'L': case 'Q': case 'N':
        return 'u';
    case 'b': case 'h': case 'i': case 'l': case 'q': case 'n':
        return 'i';
    case 'f': case 'd':
        return 'f';
    case '?':
        return 'b';
    default:
        return '?';
    }
}

static const char *kind_name(char kind)
{
    switch (kind) {
    case 'u': return "unsigned integers";
    case 'i': return "signed integers";
    case 'f': return "floats";
    case 'b': return "booleans";
    default: return "integers";
    }
}

int lf_take(PyObject *object, lf_array *array, char kind, Py_ssize_t itemsize,
            int writable, const char *name)
{
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    array->held = 0;
    if (PyObject_GetBuffer(object, &array->view, flags) < 0) {
        PyErr_Format(PyExc_TypeError,
                     "lsh_frame kernels: '%s' must be a C-contiguous%s array.", name,
                     writable ? ", writable" : "");
        return -1;
    }
    array->held = 1;
    char found = format_kind(array->view.format);
    int kind_ok = kind == 'x' ? (found == 'u' || found == 'i') : found == kind;
    if (!kind_ok || array->view.itemsize != itemsize) {
        PyErr_Format(PyExc_TypeError,
                     "lsh_frame kernels: '%s' must hold %zd-byte %s; got format '%s' of "
                     "%zd bytes.",
                     name, itemsize, kind_name(kind),
                     array->view.format ? array->view.format : "B",
                     array->view.itemsize);
        lf_release(array);
        return -1;
    }
    array->size = array->view.len / itemsize;
    return 0;
}

int lf_take_units(PyObject *object, lf_array *array, const char *name)
{
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT;
    array->held = 0;
    if (PyObject_GetBuffer(object, &array->view, flags) < 0)
        return -1;
    array->held = 1;
    Py_ssize_t itemsize = array->view.itemsize;
    if (format_kind(array->view.format) != 'u' || (itemsize != 1 && itemsize != 4)) {
        PyErr_Format(PyExc_TypeError,
                     "lsh_frame kernels: '%s' must hold uint8 or uint32 code units.",
                     name);
        lf_release(array);
        return -1;
    }
    array->size = array->view.len / itemsize;
    return 0;
}

void lf_release(lf_array *array)
{
    if (array->held) {
        PyBuffer_Release(&array->view);
        array->held = 0;
    }
}

static PyObject *lf_build(PyObject *self, PyObject *args)
{
    (void)self;
    (void)args;
    const char *vector =
#if defined(__x86_64__) && defined(__linux__) && defined(__GLIBC__) && \
    defined(__GNUC__) && (!defined(__clang__) || __clang_major__ >= 14)
        "avx2 and baseline versions chosen at run time";
#else
        "baseline";
#endif
    const char *compiler =
#if defined(__clang__)
        "clang " __clang_version__;
#elif defined(__GNUC__)
        "gcc " __VERSION__;
#elif defined(_MSC_VER)
        "msvc";
#else
        "unknown";
#endif
    return Py_BuildValue("{s:s,s:s}", "compiler", compiler, "vector", vector);
}

static PyMethodDef methods[] = {
    {"build", lf_build, METH_NOARGS, "How the module was compiled."},
    {"char_shingles", lf_char_shingles, METH_VARARGS,
     "char_shingles(units, offsets, k, tags, out): hash every k-window of a record."},
    {"word_hashes", lf_word_hashes, METH_VARARGS,
     "word_hashes(units, starts, ends, out): hash spans of code units."},
    {"minhash_affine32", lf_minhash_affine32, METH_VARARGS,
     "minhash_affine32(hashes, offsets, a, b, out): classic MinHash, affine32."},
    {"minhash_mersenne61", lf_minhash_mersenne61, METH_VARARGS,
     "minhash_mersenne61(hashes, offsets, a, b, out): classic MinHash, mod 2**61-1."},
    {"sketch_fss32", lf_sketch_fss32, METH_VARARGS,
     "sketch_fss32(hashes, offsets, a, b, out): fast similarity sketching."},
    {"collapse_whitespace", lf_collapse_whitespace, METH_VARARGS,
     "collapse_whitespace(units, offsets, punctuation, out, out_offsets)."},
    {"word_spans", lf_word_spans, METH_VARARGS,
     "word_spans(units, offsets, starts, ends, records): runs of non-whitespace."},
    {"utf8_codepoints", lf_utf8_codepoints, METH_VARARGS,
     "utf8_codepoints(data, offsets, out, out_offsets): UTF-8 to code points."},
    {"top_neighbours", lf_top_neighbours, METH_VARARGS,
     "top_neighbours(...): each query's budget of best neighbours (see native.py)."},
    {"value_tokens", lf_value_tokens, METH_VARARGS,
     "value_tokens(...): the neighbours key's packed tokens (see native.py)."},
    {"sorted_sets", lf_sorted_sets, METH_VARARGS,
     "sorted_sets(hashes, offsets, out, out_offsets): each set sorted, distinct."},
    {"intersection_sizes", lf_intersection_sizes, METH_VARARGS,
     "intersection_sizes(values, offsets, first, second, out): merged counts."},
    {"sparse_dots", lf_sparse_dots, METH_VARARGS,
     "sparse_dots(ids, weights, offsets, first, second, out): merged products."},
    {"emit_pairs", lf_emit_pairs, METH_VARARGS,
     "emit_pairs(members, starts, sizes, left_sizes, link, left, right)."},
    {"components", lf_components, METH_VARARGS,
     "components(first, second, parent): each node's smallest component node."},
    {"token_runs", lf_token_runs, METH_VARARGS,
     "token_runs(packed, bits, ids, lengths): distinct tokens, ids and counts."},
    {"hash_text", lf_hash_text, METH_VARARGS,
     "hash_text(offsets, data, key, out): pandas' hash of each UTF-8 value."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    "_native",
    "lsh_frame's compiled kernels (see lsh_frame/_kernels/native.py).",
    -1,
    methods,
    NULL,
    NULL,
    NULL,
    NULL,
};

PyMODINIT_FUNC PyInit__native(void)
{
    return PyModule_Create(&module);
}
