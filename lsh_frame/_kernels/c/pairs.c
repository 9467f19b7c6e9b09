/* Pairs from buckets and connected components: the twins of emit_pairs in
 * lsh_frame/_kernels/pairs.py and of components in components.py. */
#include "native.h"

PyObject *lf_emit_pairs(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *objects[6];
    int link;
    if (!PyArg_ParseTuple(args, "OOOOpOO", &objects[0], &objects[1], &objects[2],
                          &objects[3], &link, &objects[4], &objects[5]))
        return NULL;
    lf_array members, starts, sizes, left_sizes, left, right;
    members.held = starts.held = sizes.held = left_sizes.held = left.held =
        right.held = 0;
    PyObject *result = NULL;
    if (lf_take(objects[0], &members, 'i', 8, 0, "members") < 0 ||
        lf_take(objects[1], &starts, 'i', 8, 0, "starts") < 0 ||
        lf_take(objects[2], &sizes, 'i', 8, 0, "sizes") < 0 ||
        lf_take(objects[3], &left_sizes, 'i', 8, 0, "left_sizes") < 0 ||
        lf_take(objects[4], &left, 'i', 8, 1, "left") < 0 ||
        lf_take(objects[5], &right, 'i', 8, 1, "right") < 0)
        goto done;
    Py_ssize_t buckets = starts.size;
    const int64_t *member = LF_DATA(members, int64_t);
    const int64_t *start = LF_DATA(starts, int64_t), *size = LF_DATA(sizes, int64_t);
    const int64_t *lefts = LF_DATA(left_sizes, int64_t);
    if (sizes.size != buckets || (link && left_sizes.size != buckets) ||
        right.size != left.size) {
        PyErr_SetString(PyExc_ValueError, "emit_pairs: bad sizes.");
        goto done;
    }
    int64_t total = 0;
    for (Py_ssize_t b = 0; b < buckets; b++) {
        int64_t m = size[b], l = link ? lefts[b] : 0;
        if (start[b] < 0 || m < 0 || start[b] > members.size - m || l < 0 || l > m) {
            PyErr_SetString(PyExc_ValueError, "emit_pairs: a bucket out of range.");
            goto done;
        }
        total += link ? l * (m - l) : m * (m - 1) / 2;
    }
    if (total != left.size) {
        PyErr_SetString(PyExc_ValueError, "emit_pairs: 'left' has the wrong size.");
        goto done;
    }
    int64_t *put_left = LF_DATA(left, int64_t), *put_right = LF_DATA(right, int64_t);
    Py_BEGIN_ALLOW_THREADS
    int64_t written = 0;
    for (Py_ssize_t b = 0; b < buckets; b++) {
        const int64_t *bucket = member + start[b];
        int64_t m = size[b];
        if (link) {
            int64_t l = lefts[b];
            for (int64_t i = 0; i < l; i++)
                for (int64_t j = l; j < m; j++) {
                    put_left[written] = bucket[i];
                    put_right[written++] = bucket[j];
                }
        } else {
            /* Members are not ordered within a bucket: each pair canonical. */
            for (int64_t i = 0; i < m; i++)
                for (int64_t j = i + 1; j < m; j++) {
                    int64_t a = bucket[i], c = bucket[j];
                    put_left[written] = a < c ? a : c;
                    put_right[written++] = a < c ? c : a;
                }
        }
    }
    Py_END_ALLOW_THREADS
    result = Py_None;
    Py_INCREF(result);
done:
    lf_release(&members);
    lf_release(&starts);
    lf_release(&sizes);
    lf_release(&left_sizes);
    lf_release(&left);
    lf_release(&right);
    return result;
}

static int64_t find_root(int64_t *parent, int64_t node)
{
    while (parent[node] != node) {
        parent[node] = parent[parent[node]]; /* path halving */
        node = parent[node];
    }
    return node;
}

PyObject *lf_components(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *first_object, *second_object, *parent_object;
    if (!PyArg_ParseTuple(args, "OOO", &first_object, &second_object, &parent_object))
        return NULL;
    lf_array first, second, parent;
    first.held = second.held = parent.held = 0;
    PyObject *result = NULL;
    if (lf_take(first_object, &first, 'i', 8, 0, "first") < 0 ||
        lf_take(second_object, &second, 'i', 8, 0, "second") < 0 ||
        lf_take(parent_object, &parent, 'i', 8, 1, "parent") < 0)
        goto done;
    Py_ssize_t nodes = parent.size, edges = first.size;
    const int64_t *one = LF_DATA(first, int64_t), *other = LF_DATA(second, int64_t);
    if (second.size != edges) {
        PyErr_SetString(PyExc_ValueError, "components: edge arrays differ in size.");
        goto done;
    }
    for (Py_ssize_t e = 0; e < edges; e++) {
        if (one[e] < 0 || one[e] >= nodes || other[e] < 0 || other[e] >= nodes) {
            PyErr_SetString(PyExc_IndexError, "components: an edge names no node.");
            goto done;
        }
    }
    int64_t *up = LF_DATA(parent, int64_t);
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < nodes; i++)
        up[i] = i;
    /* The smaller root always stays the root: each component ends under its
     * smallest node, whatever the order of the edges. */
    for (Py_ssize_t e = 0; e < edges; e++) {
        int64_t a = find_root(up, one[e]), b = find_root(up, other[e]);
        if (a < b)
            up[b] = a;
        else if (b < a)
            up[a] = b;
    }
    for (Py_ssize_t i = 0; i < nodes; i++)
        up[i] = up[up[i]]; /* parents precede their children: one pass */
    Py_END_ALLOW_THREADS
    result = Py_None;
    Py_INCREF(result);
done:
    lf_release(&first);
    lf_release(&second);
    lf_release(&parent);
    return result;
}
