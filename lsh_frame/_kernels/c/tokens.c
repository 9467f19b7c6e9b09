/* The neighbours key's tokens of some values, packed: the twin of the
 * hashing in lsh_frame/block/neighbours.py (_values_tokens), after the text
 * is normalised. Each value gives, in this order over all values,
 *
 * 1. its words: splitmix64(word_hash ^ word_tag);
 * 2. its character 3-shingles, unless it has at least `long_words` words;
 * 3. when it has a word, the whole value: splitmix64(sum over its words of
 *    splitmix64((word_hash ^ word_tag) + position * M) ^ salt);
 *
 * each packed as (hash >> bits << bits) | (value % n + first_record). */
#include "native.h"

#define UNIT(data, wide, p) ((wide) ? (uint64_t)((const uint32_t *)(data))[p] \
                                    : (uint64_t)((const uint8_t *)(data))[p])

static inline int is_space(uint64_t c, int wide)
{
    if (c <= 0x20)
        return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20);
    if (!wide || c < 0x85)
        return 0;
    return c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) ||
           c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

typedef struct {
    const void *units;
    int wide;
    const int64_t *offsets;
    Py_ssize_t values;
    const uint64_t *salts;
    int64_t n, first_record, long_words;
    int bits;
    uint64_t word_tag, char_tag;
    uint64_t *out;
} packing;

static inline uint64_t pack(uint64_t hash, int bits, uint64_t record)
{
    return (bits >= 64 ? 0 : (hash >> bits) << bits) | record;
}

/* Returns the tokens written, or -1 when out of memory. */
static Py_ssize_t value_tokens(const packing *w)
{
    uint64_t *sums = calloc((size_t)(w->values ? w->values : 1), sizeof(uint64_t));
    int64_t *words = calloc((size_t)(w->values ? w->values : 1), sizeof(int64_t));
    if (!sums || !words) {
        free(sums);
        free(words);
        return -1;
    }
    int64_t n = w->n > 1 ? w->n : 1;
    Py_ssize_t written = 0;
    for (Py_ssize_t v = 0; v < w->values; v++) {
        uint64_t record = (uint64_t)(v % n + w->first_record);
        int64_t p = w->offsets[v], end = w->offsets[v + 1];
        int64_t position = 0;
        while (p < end) {
            while (p < end && is_space(UNIT(w->units, w->wide, p), w->wide))
                p++;
            if (p == end)
                break;
            int64_t start = p;
            while (p < end && !is_space(UNIT(w->units, w->wide, p), w->wide))
                p++;
            uint64_t hash = 0;
            for (int64_t q = p - 1; q >= start; q--)
                hash = hash * LF_MULTIPLIER + UNIT(w->units, w->wide, q);
            hash ^= (uint64_t)(p - start) * LF_LENGTH_MIX;
            uint64_t word = lf_splitmix64(hash) ^ w->word_tag;
            w->out[written++] = pack(lf_splitmix64(word), w->bits, record);
            sums[v] += lf_splitmix64(word + (uint64_t)position * LF_MULTIPLIER);
            position++;
        }
        words[v] = position;
    }
    for (Py_ssize_t v = 0; v < w->values; v++) {
        if (w->long_words >= 0 && words[v] >= w->long_words)
            continue;
        uint64_t record = (uint64_t)(v % n + w->first_record);
        int64_t last = w->offsets[v + 1] - 3;
        for (int64_t s = w->offsets[v]; s <= last; s++) {
            uint64_t value = UNIT(w->units, w->wide, s);
            value = value * LF_MULTIPLIER + UNIT(w->units, w->wide, s + 1);
            value = value * LF_MULTIPLIER + UNIT(w->units, w->wide, s + 2);
            w->out[written++] = pack(lf_splitmix64(value ^ w->char_tag), w->bits, record);
        }
    }
    for (Py_ssize_t v = 0; v < w->values; v++) {
        if (words[v] == 0)
            continue;
        uint64_t record = (uint64_t)(v % n + w->first_record);
        w->out[written++] =
            pack(lf_splitmix64(sums[v] ^ w->salts[v]), w->bits, record);
    }
    free(sums);
    free(words);
    return written;
}

PyObject *lf_value_tokens(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *units_object, *offsets_object, *salts_object, *out_object;
    long long n, first_record, long_words;
    int bits;
    unsigned long long word_tag, char_tag;
    if (!PyArg_ParseTuple(args, "OOOLiLLKKO", &units_object, &offsets_object,
                          &salts_object, &n, &bits, &first_record, &long_words,
                          &word_tag, &char_tag, &out_object))
        return NULL;
    lf_array units, offsets, salts, out;
    units.held = offsets.held = salts.held = out.held = 0;
    PyObject *result = NULL;
    if (lf_take_units(units_object, &units, "units") < 0 ||
        lf_take(offsets_object, &offsets, 'i', 8, 0, "offsets") < 0 ||
        lf_take(salts_object, &salts, 'u', 8, 0, "salts") < 0 ||
        lf_take(out_object, &out, 'u', 8, 1, "out") < 0)
        goto done;
    Py_ssize_t values = offsets.size - 1;
    const int64_t *offset = LF_DATA(offsets, int64_t);
    if (values < 0 || salts.size != values || bits < 0 || bits > 64 || first_record < 0) {
        PyErr_SetString(PyExc_ValueError, "value_tokens: bad sizes or bits.");
        goto done;
    }
    /* At most: a word per two units plus one, a shingle per unit, one value. */
    Py_ssize_t room = 0;
    for (Py_ssize_t v = 0; v < values; v++) {
        if (offset[v] < 0 || offset[v + 1] < offset[v] || offset[v + 1] > units.size) {
            PyErr_SetString(PyExc_ValueError, "value_tokens: offsets out of range.");
            goto done;
        }
        int64_t length = offset[v + 1] - offset[v];
        room += length / 2 + 1 + length + 1;
    }
    if (out.size < room) {
        PyErr_SetString(PyExc_ValueError, "value_tokens: 'out' is too small.");
        goto done;
    }
    packing w = {units.view.buf, units.view.itemsize == 4, offset, values,
                 LF_DATA(salts, uint64_t), n, first_record, long_words, bits,
                 (uint64_t)word_tag, (uint64_t)char_tag, LF_DATA(out, uint64_t)};
    Py_ssize_t written;
    Py_BEGIN_ALLOW_THREADS
    written = value_tokens(&w);
    Py_END_ALLOW_THREADS
    if (written < 0) {
        PyErr_NoMemory();
        goto done;
    }
    result = PyLong_FromSsize_t(written);
done:
    lf_release(&units);
    lf_release(&offsets);
    lf_release(&salts);
    lf_release(&out);
    return result;
}
