/* pandas' stable hash of text, on Arrow string buffers: SipHash-2-4 of each
 * value's UTF-8 bytes with a 16-byte key, then the splitmix64 finaliser, as
 * pandas.util.hash_array(values, categorize=False) computes it over Python
 * strings (lsh_frame/text/labels.py), without making those strings. */
#include "native.h"

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND                                                                   \
    do {                                                                           \
        v0 += v1;                                                                  \
        v1 = ROTL(v1, 13);                                                         \
        v1 ^= v0;                                                                  \
        v0 = ROTL(v0, 32);                                                         \
        v2 += v3;                                                                  \
        v3 = ROTL(v3, 16);                                                         \
        v3 ^= v2;                                                                  \
        v0 += v3;                                                                  \
        v3 = ROTL(v3, 21);                                                         \
        v3 ^= v0;                                                                  \
        v2 += v1;                                                                  \
        v1 = ROTL(v1, 17);                                                         \
        v1 ^= v2;                                                                  \
        v2 = ROTL(v2, 32);                                                         \
    } while (0)

static inline uint64_t read_le64(const uint8_t *p)
{
    return (uint64_t)p[0] | ((uint64_t)p[1] << 8) | ((uint64_t)p[2] << 16) |
           ((uint64_t)p[3] << 24) | ((uint64_t)p[4] << 32) | ((uint64_t)p[5] << 40) |
           ((uint64_t)p[6] << 48) | ((uint64_t)p[7] << 56);
}

static uint64_t siphash24(const uint8_t *in, uint64_t length, uint64_t k0, uint64_t k1)
{
    uint64_t v0 = UINT64_C(0x736f6d6570736575) ^ k0;
    uint64_t v1 = UINT64_C(0x646f72616e646f6d) ^ k1;
    uint64_t v2 = UINT64_C(0x6c7967656e657261) ^ k0;
    uint64_t v3 = UINT64_C(0x7465646279746573) ^ k1;
    uint64_t last = length << 56;
    const uint8_t *end = in + length - (length % 8);
    for (; in != end; in += 8) {
        uint64_t m = read_le64(in);
        v3 ^= m;
        SIPROUND;
        SIPROUND;
        v0 ^= m;
    }
    switch (length & 7) {
    case 7: last |= (uint64_t)in[6] << 48; /* fall through */
    case 6: last |= (uint64_t)in[5] << 40; /* fall through */
    case 5: last |= (uint64_t)in[4] << 32; /* fall through */
    case 4: last |= (uint64_t)in[3] << 24; /* fall through */
    case 3: last |= (uint64_t)in[2] << 16; /* fall through */
    case 2: last |= (uint64_t)in[1] << 8;  /* fall through */
    case 1: last |= (uint64_t)in[0]; break;
    default: break;
    }
    v3 ^= last;
    SIPROUND;
    SIPROUND;
    v0 ^= last;
    v2 ^= 0xff;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    return v0 ^ v1 ^ v2 ^ v3;
}

PyObject *lf_hash_text(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *offsets_object, *data_object, *out_object;
    const char *key;
    Py_ssize_t key_size;
    if (!PyArg_ParseTuple(args, "OOy#O", &offsets_object, &data_object, &key, &key_size,
                          &out_object))
        return NULL;
    lf_array offsets, data, out;
    offsets.held = data.held = out.held = 0;
    PyObject *result = NULL;
    if (lf_take(offsets_object, &offsets, 'i', 8, 0, "offsets") < 0 ||
        lf_take(data_object, &data, 'u', 1, 0, "data") < 0 ||
        lf_take(out_object, &out, 'u', 8, 1, "out") < 0)
        goto done;
    Py_ssize_t values = offsets.size - 1;
    const int64_t *offset = LF_DATA(offsets, int64_t);
    if (key_size != 16 || values < 0 || out.size != values) {
        PyErr_SetString(PyExc_ValueError, "hash_text: bad key or sizes.");
        goto done;
    }
    for (Py_ssize_t i = 0; i < values; i++) {
        if (offset[i] < 0 || offset[i + 1] < offset[i] || offset[i + 1] > data.size) {
            PyErr_SetString(PyExc_ValueError, "hash_text: offsets out of range.");
            goto done;
        }
    }
    const uint8_t *bytes = LF_DATA(data, uint8_t);
    uint64_t *hashed = LF_DATA(out, uint64_t);
    uint64_t k0 = read_le64((const uint8_t *)key), k1 = read_le64((const uint8_t *)key + 8);
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < values; i++)
        hashed[i] = lf_splitmix64(siphash24(bytes + offset[i],
                                            (uint64_t)(offset[i + 1] - offset[i]), k0, k1));
    Py_END_ALLOW_THREADS
    result = Py_None;
    Py_INCREF(result);
done:
    lf_release(&offsets);
    lf_release(&data);
    lf_release(&out);
    return result;
}
