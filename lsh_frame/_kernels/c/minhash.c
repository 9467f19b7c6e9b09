/* MinHash signatures and the fast similarity sketch over token hashes in CSR
 * form: the twins of lsh_frame/_kernels/minhash.py (affine32, mersenne61) and
 * lsh_frame/_kernels/sketch.py (fss32). One record at a time; a signature is
 * a minimum, so the order of tokens and permutations cannot change it. */
#include "native.h"

#define MERSENNE_61 ((UINT64_C(1) << 61) - 1)
#define LOW32 UINT64_C(0xFFFFFFFF)
#define LOW29 ((UINT64_C(1) << 29) - 1)
/* Permutations folded together: their running minima stay in registers
 * while the record's tokens stream past. */
#define GROUP 32

LF_CLONES
static void affine32_records(const uint64_t *hashes, const int64_t *offsets,
                             Py_ssize_t records, const uint32_t *a, const uint32_t *b,
                             Py_ssize_t num_perm, uint32_t *out)
{
    for (Py_ssize_t r = 0; r < records; r++) {
        int64_t start = offsets[r], end = offsets[r + 1];
        if (end <= start)
            continue; /* a record without tokens keeps its row */
        uint32_t *row = out + r * num_perm;
        Py_ssize_t j = 0;
        for (; j + GROUP <= num_perm; j += GROUP) {
            uint32_t least[GROUP];
            const uint32_t *ga = a + j, *gb = b + j;
            for (int g = 0; g < GROUP; g++)
                least[g] = UINT32_MAX;
            for (int64_t t = start; t < end; t++) {
                uint32_t x = (uint32_t)(hashes[t] >> 32);
                for (int g = 0; g < GROUP; g++) {
                    uint32_t value = ga[g] * x + gb[g];
                    least[g] = value < least[g] ? value : least[g];
                }
            }
            memcpy(row + j, least, sizeof(least));
        }
        for (; j < num_perm; j++) {
            uint32_t least = UINT32_MAX;
            for (int64_t t = start; t < end; t++) {
                uint32_t value = a[j] * (uint32_t)(hashes[t] >> 32) + b[j];
                least = value < least ? value : least;
            }
            row[j] = least;
        }
    }
}

static inline uint64_t reduce61(uint64_t value)
{
    uint64_t reduced = (value & MERSENNE_61) + (value >> 61);
    return reduced >= MERSENNE_61 ? reduced - MERSENNE_61 : reduced;
}

/* (a * x + b) mod 2**61 - 1 by the split of minhash.py's Mersenne61.__call__,
 * operation for operation. */
static inline uint64_t mersenne61(uint64_t a_high, uint64_t a_low, uint64_t b,
                                  uint64_t x)
{
    uint64_t x_high = x >> 32, x_low = x & LOW32;
    uint64_t low = a_low * x_low;
    uint64_t middle = a_high * x_low + a_low * x_high;
    uint64_t high = a_high * x_high;
    uint64_t total = (high << 3) + ((middle & LOW29) << 32);
    total += middle >> 29;
    total += (low & MERSENNE_61) + (low >> 61);
    total += b;
    return reduce61(total);
}

LF_CLONES
static void mersenne61_records(const uint64_t *hashes, const int64_t *offsets,
                               Py_ssize_t records, const uint64_t *a,
                               const uint64_t *b, Py_ssize_t num_perm, uint64_t *out)
{
    for (Py_ssize_t r = 0; r < records; r++) {
        int64_t start = offsets[r], end = offsets[r + 1];
        if (end <= start)
            continue;
        uint64_t *row = out + r * num_perm;
        for (Py_ssize_t j = 0; j < num_perm; j++)
            row[j] = UINT64_MAX;
        for (int64_t t = start; t < end; t++) {
            uint64_t x = reduce61(hashes[t]);
            for (Py_ssize_t j = 0; j < num_perm; j++) {
                uint64_t value = mersenne61(a[j] >> 32, a[j] & LOW32, b[j], x);
                row[j] = value < row[j] ? value : row[j];
            }
        }
    }
}

#define EMPTY UINT32_MAX

static int bit_length(uint64_t value)
{
    int bits = 0;
    while (value) {
        bits++;
        value >>= 1;
    }
    return bits;
}

/* Dahlgaard, Knudsen and Thorup's sketch, as sketch.py throws it: round r
 * throws every token into one slot with the value (r, rank); a slot keeps the
 * least; a record stops after the round that fills its last slot (no later
 * round can lower a slot: its values carry a larger round). Slots still empty
 * after t rounds take their classic minimum. */
static void fss32_records(const uint64_t *hashes, const int64_t *offsets,
                          Py_ssize_t records, const uint32_t *a, const uint32_t *b,
                          Py_ssize_t slots, uint32_t *out)
{
    int round_bits = bit_length((uint64_t)(slots - 1));
    uint32_t rank_mask = (uint32_t)((UINT64_C(1) << (32 - round_bits)) - 1);
    int64_t last_tag = ((int64_t)1 << round_bits) - 1;
    int power = (slots & (slots - 1)) == 0;
    int top = power ? 32 - (bit_length((uint64_t)slots) - 1) : 16;
    for (Py_ssize_t r = 0; r < records; r++) {
        int64_t start = offsets[r], end = offsets[r + 1];
        if (end <= start)
            continue;
        uint32_t *row = out + r * slots;
        for (Py_ssize_t j = 0; j < slots; j++)
            row[j] = EMPTY;
        Py_ssize_t filled = 0;
        for (Py_ssize_t round = 0; round < slots && filled < slots; round++) {
            uint32_t ra = a[round], rb = b[round];
            uint32_t tag = (uint32_t)((uint64_t)round << (32 - round_bits));
            for (int64_t t = start; t < end; t++) {
                uint32_t value = ra * (uint32_t)(hashes[t] >> 32) + rb;
                uint32_t key;
                if (power)
                    key = top >= 32 ? 0 : value >> top;
                else
                    key = (uint32_t)(((value >> 16) * (uint32_t)slots) >> 16);
                value = (value & rank_mask) | tag;
                if (round == last_tag && value > EMPTY - 1)
                    value = EMPTY - 1;
                if (value < row[key]) {
                    filled += row[key] == EMPTY;
                    row[key] = value;
                }
            }
        }
        if (filled == slots)
            continue;
        for (Py_ssize_t j = 0; j < slots; j++) {
            if (row[j] != EMPTY)
                continue;
            uint32_t ca = a[slots + j], cb = b[slots + j], least = EMPTY;
            for (int64_t t = start; t < end; t++) {
                uint32_t value = ca * (uint32_t)(hashes[t] >> 32) + cb;
                least = value < least ? value : least;
            }
            row[j] = least;
        }
    }
}

/* The arguments every signing kernel takes: (hashes, offsets, a, b, out). */
typedef struct {
    lf_array hashes, offsets, a, b, out;
    Py_ssize_t records, num_perm;
} signing;

static void release_signing(signing *s)
{
    lf_release(&s->hashes);
    lf_release(&s->offsets);
    lf_release(&s->a);
    lf_release(&s->b);
    lf_release(&s->out);
}

static int take_signing(PyObject *args, signing *s, Py_ssize_t itemsize,
                        Py_ssize_t parameters_per_perm, const char *name)
{
    PyObject *objects[5];
    s->hashes.held = s->offsets.held = s->a.held = s->b.held = s->out.held = 0;
    if (!PyArg_ParseTuple(args, "OOOOO", &objects[0], &objects[1], &objects[2],
                          &objects[3], &objects[4]))
        return -1;
    if (lf_take(objects[0], &s->hashes, 'u', 8, 0, "hashes") < 0 ||
        lf_take(objects[1], &s->offsets, 'i', 8, 0, "offsets") < 0 ||
        lf_take(objects[2], &s->a, 'u', itemsize, 0, "a") < 0 ||
        lf_take(objects[3], &s->b, 'u', itemsize, 0, "b") < 0 ||
        lf_take(objects[4], &s->out, 'u', itemsize, 1, "out") < 0)
        return -1;
    s->records = s->offsets.size - 1;
    if (s->out.view.ndim != 2 || s->records < 0 ||
        s->out.view.shape[0] != s->records) {
        PyErr_Format(PyExc_ValueError, "%s: 'out' must be (records, num_perm).", name);
        return -1;
    }
    s->num_perm = s->out.view.shape[1];
    if (s->a.size != parameters_per_perm * s->num_perm || s->b.size != s->a.size) {
        PyErr_Format(PyExc_ValueError, "%s: 'a' and 'b' do not fit num_perm.", name);
        return -1;
    }
    const int64_t *offset = LF_DATA(s->offsets, int64_t);
    for (Py_ssize_t r = 0; r < s->records; r++) {
        if (offset[r] < 0 || offset[r + 1] > s->hashes.size) {
            PyErr_Format(PyExc_ValueError, "%s: offsets out of range.", name);
            return -1;
        }
    }
    return 0;
}

PyObject *lf_minhash_affine32(PyObject *self, PyObject *args)
{
    (void)self;
    signing s;
    if (take_signing(args, &s, 4, 1, "minhash_affine32") < 0) {
        release_signing(&s);
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    affine32_records(LF_DATA(s.hashes, uint64_t), LF_DATA(s.offsets, int64_t),
                     s.records, LF_DATA(s.a, uint32_t), LF_DATA(s.b, uint32_t),
                     s.num_perm, LF_DATA(s.out, uint32_t));
    Py_END_ALLOW_THREADS
    release_signing(&s);
    Py_RETURN_NONE;
}

PyObject *lf_minhash_mersenne61(PyObject *self, PyObject *args)
{
    (void)self;
    signing s;
    if (take_signing(args, &s, 8, 1, "minhash_mersenne61") < 0) {
        release_signing(&s);
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    mersenne61_records(LF_DATA(s.hashes, uint64_t), LF_DATA(s.offsets, int64_t),
                       s.records, LF_DATA(s.a, uint64_t), LF_DATA(s.b, uint64_t),
                       s.num_perm, LF_DATA(s.out, uint64_t));
    Py_END_ALLOW_THREADS
    release_signing(&s);
    Py_RETURN_NONE;
}

PyObject *lf_sketch_fss32(PyObject *self, PyObject *args)
{
    (void)self;
    signing s;
    if (take_signing(args, &s, 4, 2, "sketch_fss32") < 0) {
        release_signing(&s);
        return NULL;
    }
    if (s.num_perm > 65536 || s.num_perm < 1) {
        release_signing(&s);
        PyErr_SetString(PyExc_ValueError, "sketch_fss32: 1 to 65,536 slots.");
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    fss32_records(LF_DATA(s.hashes, uint64_t), LF_DATA(s.offsets, int64_t), s.records,
                  LF_DATA(s.a, uint32_t), LF_DATA(s.b, uint32_t), s.num_perm,
                  LF_DATA(s.out, uint32_t));
    Py_END_ALLOW_THREADS
    release_signing(&s);
    Py_RETURN_NONE;
}
