/* The neighbours key: the twins of top_neighbours (look-ups through an
 * inverted index, each query's budget of best neighbours) and of the token
 * packing of lsh_frame/block/neighbours.py (_values_tokens).
 *
 * A look-up adds each shared token's quantised squared weight to a dense
 * accumulator of the index's records (the scratch array, all zero on entry
 * and left all zero), so a query costs its postings, with no sort of them.
 * Cosines, their quantisation and the ranking are numpy's, operation for
 * operation: the same kept neighbours, in the same order, with the same bits. */
#include <math.h>

#include "native.h"

#define WEIGHT_BITS 22
#define WEIGHT_MASK ((UINT64_C(1) << WEIGHT_BITS) - 1)
#define CODE_BITS (64 - WEIGHT_BITS)
/* Postings ahead whose sums are fetched while this one is added (a posting
 * list holds records scattered over the whole accumulator). */
#define PREFETCH 12

static int bit_length(uint64_t value)
{
    int bits = 0;
    while (value) {
        bits++;
        value >>= 1;
    }
    return bits;
}

static void insertion_sort(uint64_t *keys, Py_ssize_t size)
{
    for (Py_ssize_t i = 1; i < size; i++) {
        uint64_t key = keys[i];
        Py_ssize_t j = i;
        while (j > 0 && keys[j - 1] > key) {
            keys[j] = keys[j - 1];
            j--;
        }
        keys[j] = key;
    }
}

static void swap(uint64_t *keys, Py_ssize_t i, Py_ssize_t j)
{
    uint64_t kept = keys[i];
    keys[i] = keys[j];
    keys[j] = kept;
}

static int compare_keys(const void *one, const void *other)
{
    uint64_t a = *(const uint64_t *)one, b = *(const uint64_t *)other;
    return (a > b) - (a < b);
}

static void sort_keys(uint64_t *keys, Py_ssize_t size)
{
    if (size <= 32)
        insertion_sort(keys, size);
    else
        qsort(keys, (size_t)size, sizeof(uint64_t), compare_keys);
}

/* Put the `wanted` least keys (all distinct) first, in ascending order: a
 * quickselect for the cut, then a sort of what lies before it. */
static void least_first(uint64_t *keys, Py_ssize_t size, Py_ssize_t wanted)
{
    if (wanted >= size) {
        sort_keys(keys, size);
        return;
    }
    Py_ssize_t low = 0, high = size - 1;
    while (high - low > 16) {
        Py_ssize_t middle = low + (high - low) / 2;
        if (keys[middle] < keys[low])
            swap(keys, middle, low);
        if (keys[high] < keys[low])
            swap(keys, high, low);
        if (keys[high] < keys[middle])
            swap(keys, high, middle);
        uint64_t pivot = keys[middle];
        Py_ssize_t i = low, j = high;
        while (i <= j) {
            while (keys[i] < pivot)
                i++;
            while (keys[j] > pivot)
                j--;
            if (i <= j) {
                swap(keys, i, j);
                i++;
                j--;
            }
        }
        /* keys[low..j] <= pivot <= keys[i..high]; one key may sit between. */
        if (wanted - 1 <= j)
            high = j;
        else if (wanted - 1 >= i)
            low = i;
        else
            low = high = wanted - 1; /* the pivot itself is the cut */
    }
    insertion_sort(keys + low, high - low + 1);
    sort_keys(keys, wanted);
}

typedef struct {
    const int64_t *query_records, *query_tokens;
    Py_ssize_t lookups, vocabulary;
    const int64_t *posting_records;
    Py_ssize_t postings;
    const int64_t *posting_starts, *posting_counts;
    const uint64_t *weights;
    const double *query_norms;
    int64_t first, stop, n_index;
    int same_table;
    double relative, floor;
    int64_t factor, least, most;
    uint64_t *scratch;
    int64_t *out_query, *out_neighbour;
    double *out_cosine;
    Py_ssize_t capacity;
} lookup;

/* Returns the rows written; -1: out of memory, -2: out of output room,
 * -3: an argument out of range. */
static Py_ssize_t look_up(const lookup *w)
{
    int index_bits = bit_length((uint64_t)(w->n_index - 1));
    if (index_bits < 1)
        index_bits = 1;
    int query_bits = bit_length((uint64_t)(w->stop - w->first - 1));
    if (query_bits < 1)
        query_bits = 1;
    int cosine_bits = 64 - query_bits - index_bits;
    if (cosine_bits > 52)
        cosine_bits = 52;
    uint64_t top = (UINT64_C(1) << cosine_bits) - 1;
    double top_value = (double)top;
    uint64_t index_mask = (UINT64_C(1) << index_bits) - 1;
    Py_ssize_t room = 64, written = 0;
    int64_t *touched = malloc(sizeof(int64_t) * (size_t)room);
    uint64_t *keys = malloc(sizeof(uint64_t) * (size_t)room);
    if (!touched || !keys) {
        free(touched);
        free(keys);
        return -1;
    }
    Py_ssize_t at = 0;
    int64_t previous = w->first;
    /* scratch[2 r] is record r's running sum (plus one once met), scratch[2 r + 1]
     * its norm's bits: the norm is read from the line the sum brought in. */
    uint64_t *scratch = w->scratch;
    while (at < w->lookups) {
        int64_t query = w->query_records[at];
        Py_ssize_t met = 0, end = at, postings = 0;
        int bad = query < previous || query >= w->stop;
        previous = query;
        /* The query's tokens, checked, and how many records they can meet. */
        for (; !bad && end < w->lookups && w->query_records[end] == query; end++) {
            int64_t token = w->query_tokens[end];
            if (token < 0 || token >= w->vocabulary) {
                bad = 1;
                break;
            }
            int64_t start = w->posting_starts[token], count = w->posting_counts[token];
            if (start < 0 || count < 0 || start > w->postings - count)
                bad = 1;
            postings += count;
        }
        if (!bad && postings + 1 > room) {
            room = 2 * (postings + 1);
            int64_t *more = realloc(touched, sizeof(int64_t) * (size_t)room);
            if (more)
                touched = more;
            uint64_t *more_keys = realloc(keys, sizeof(uint64_t) * (size_t)room);
            if (more_keys)
                keys = more_keys;
            if (!more || !more_keys) {
                free(touched);
                free(keys);
                return -1;
            }
        }
        for (; !bad && at < end; at++) {
            int64_t token = w->query_tokens[at];
            uint64_t weight = w->weights[token] & WEIGHT_MASK;
            const int64_t *posting = w->posting_records + w->posting_starts[token];
            int64_t count = w->posting_counts[token];
            /* No branch on whether a record was met before: a sum is kept
             * plus one, and the record is listed at every meeting but kept
             * in the list only at its first. */
            for (int64_t p = 0; p < count; p++) {
                int64_t record = posting[p];
#if defined(__GNUC__)
                if (p + PREFETCH < count)
                    __builtin_prefetch(scratch + 2 * posting[p + PREFETCH], 1, 3);
#endif
                if ((uint64_t)record >= (uint64_t)w->n_index) {
                    bad = 1;
                    break;
                }
                uint64_t sum = scratch[2 * record];
                uint64_t fresh = sum == 0;
                touched[met] = record;
                met += (Py_ssize_t)fresh;
                scratch[2 * record] = sum + weight + fresh;
            }
        }
        if (bad) {
            for (Py_ssize_t i = 0; i < met; i++)
                w->scratch[2 * touched[i]] = 0;
            free(touched);
            free(keys);
            return -3;
        }
        if (met == 0)
            continue;
        /* Quantised cosines, ranked by (cosine descending, neighbour). */
        Py_ssize_t ranked = 0;
        uint64_t best = 0;
        double query_norm = w->query_norms[query];
        for (Py_ssize_t i = 0; i < met; i++) {
            int64_t record = touched[i];
            uint64_t sum = scratch[2 * record] - 1;
            double norm;
            scratch[2 * record] = 0;
            if (w->same_table && record == query)
                continue;
            memcpy(&norm, scratch + 2 * record + 1, sizeof(norm));
            double cosine = (double)sum / (query_norm * norm);
            double clipped = cosine < 0.0 ? 0.0 : (cosine > 1.0 ? 1.0 : cosine);
            uint64_t quantised = (uint64_t)rint(clipped * top_value);
            best = quantised > best ? quantised : best;
            keys[ranked++] = ((top - quantised) << index_bits) | (uint64_t)record;
        }
        if (ranked == 0)
            continue;
        /* The budget, as select() reads it off the query's own cosines. */
        double best_value = (double)best / top_value;
        double close_from = w->relative * best_value;
        int64_t close = 0;
        for (Py_ssize_t i = 0; i < ranked; i++) {
            uint64_t quantised = top - (keys[i] >> index_bits);
            double value = (double)quantised / top_value;
            close += value >= close_from && value >= w->floor;
        }
        int64_t keep = w->factor * close + w->least;
        keep = keep < w->most ? keep : w->most;
        if (keep > ranked)
            keep = ranked;
        if (keep <= 0)
            continue;
        least_first(keys, ranked, (Py_ssize_t)keep);
        if (written + keep > w->capacity) {
            free(touched);
            free(keys);
            return -2;
        }
        for (int64_t i = 0; i < keep; i++) {
            uint64_t quantised = top - (keys[i] >> index_bits);
            w->out_query[written] = query;
            w->out_neighbour[written] = (int64_t)(keys[i] & index_mask);
            w->out_cosine[written] = (double)quantised / top_value;
            written++;
        }
    }
    free(touched);
    free(keys);
    return written;
}

PyObject *lf_top_neighbours(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *objects[12];
    long long first, stop, n_index, factor, least, most;
    int same_table, fill;
    double relative, floor;
    if (!PyArg_ParseTuple(args, "OOOOOOOOLLLpddLLLOpOOO", &objects[0], &objects[1],
                          &objects[2], &objects[3], &objects[4], &objects[5],
                          &objects[6], &objects[7], &first, &stop, &n_index,
                          &same_table, &relative, &floor, &factor, &least, &most,
                          &objects[8], &fill, &objects[9], &objects[10],
                          &objects[11]))
        return NULL;
    static const char *names[12] = {
        "query_records", "query_tokens", "posting_records", "posting_starts",
        "posting_counts", "weights", "query_norms", "index_norms",
        "scratch", "out_query", "out_neighbour", "out_cosine"};
    static const char kinds[12] = {'i', 'i', 'i', 'i', 'i', 'u', 'f', 'f',
                                   'u', 'i', 'i', 'f'};
    static const int writable[12] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1};
    lf_array arrays[12];
    for (int i = 0; i < 12; i++)
        arrays[i].held = 0;
    PyObject *result = NULL;
    for (int i = 0; i < 12; i++)
        if (lf_take(objects[i], &arrays[i], kinds[i], 8, writable[i], names[i]) < 0)
            goto done;
    if (arrays[0].size != arrays[1].size || arrays[3].size != arrays[4].size ||
        arrays[5].size != arrays[3].size || arrays[8].size < 2 * n_index ||
        arrays[10].size != arrays[9].size || arrays[11].size != arrays[9].size ||
        n_index < 1 || stop <= first || first < 0 || stop > arrays[6].size ||
        n_index > arrays[7].size) {
        PyErr_SetString(PyExc_ValueError, "top_neighbours: inconsistent sizes.");
        goto done;
    }
    int index_bits = bit_length((uint64_t)(n_index - 1));
    index_bits = index_bits < 1 ? 1 : index_bits;
    if (index_bits >= CODE_BITS ||
        ((uint64_t)(stop - first) << index_bits) >= (UINT64_C(1) << CODE_BITS)) {
        PyErr_SetString(PyExc_ValueError,
                        "neighbour_lists: chunk too large for the pair code");
        goto done;
    }
    /* The look-ups' own tokens, postings and records are checked as they are
     * read (the index is far larger than one chunk's look-ups). */
    const int64_t *records = LF_DATA(arrays[0], int64_t);
    const int64_t *tokens = LF_DATA(arrays[1], int64_t);
    const int64_t *starts = LF_DATA(arrays[3], int64_t);
    const int64_t *counts = LF_DATA(arrays[4], int64_t);
    const int64_t *posting_records = LF_DATA(arrays[2], int64_t);
    lookup w = {
        records, tokens, arrays[0].size, arrays[3].size, posting_records,
        arrays[2].size, starts, counts,
        LF_DATA(arrays[5], uint64_t), LF_DATA(arrays[6], double),
        first, stop, n_index, same_table, relative,
        floor, factor, least, most, LF_DATA(arrays[8], uint64_t),
        LF_DATA(arrays[9], int64_t), LF_DATA(arrays[10], int64_t),
        LF_DATA(arrays[11], double), arrays[9].size,
    };
    Py_ssize_t written;
    const double *index_norms = LF_DATA(arrays[7], double);
    Py_BEGIN_ALLOW_THREADS
    if (fill) /* a new index: its norms beside the (zero) sums */
        for (int64_t r = 0; r < n_index; r++) {
            w.scratch[2 * r] = 0;
            memcpy(w.scratch + 2 * r + 1, index_norms + r, sizeof(double));
        }
    written = look_up(&w);
    Py_END_ALLOW_THREADS
    if (written == -1) {
        PyErr_NoMemory();
        goto done;
    }
    if (written == -2) {
        PyErr_SetString(PyExc_ValueError, "top_neighbours: out of output room.");
        goto done;
    }
    if (written == -3) {
        PyErr_SetString(PyExc_ValueError,
                        "top_neighbours: a query, token or posting out of range "
                        "(or the queries unsorted).");
        goto done;
    }
    result = PyLong_FromSsize_t(written);
done:
    for (int i = 0; i < 12; i++)
        lf_release(&arrays[i]);
    return result;
}
