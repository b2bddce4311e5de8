"""scicode.parse.parse, as provided by grade_scicode: the official h5 target encoding."""
import h5py
import scipy.sparse

H5PY_FILE = "test_data.h5"


class TargetsMissing(KeyError):
    """A test's group is absent from the targets file (a harness fault)."""


def _decode(value):
    return value.decode("utf-8", errors="strict") if isinstance(value, bytes) else value


def read_sparse(group):
    """data+shape with row+col: COO; with blocksize: BSR; else CSR (a CSC matrix
    written by the official writer comes back as CSR, as upstream)."""
    data = group["data"][()]
    shape = tuple(int(s) for s in group["shape"][()])
    if "row" in group and "col" in group:
        return scipy.sparse.coo_matrix((data, (group["row"][()], group["col"][()])), shape=shape)
    if "blocksize" in group:
        return scipy.sparse.bsr_matrix((data, group["indices"][()], group["indptr"][()]),
                                       shape=shape,
                                       blocksize=tuple(int(b) for b in group["blocksize"][()]))
    return scipy.sparse.csr_matrix((data, group["indices"][()], group["indptr"][()]), shape=shape)


def read_list(group):
    """Children's raw values in name order (bytes stay bytes, as upstream); a
    child group, which upstream cannot read, is decoded as a datagroup."""
    return [group[k][()] if isinstance(group[k], h5py.Dataset) else read_datagroup(group[k])
            for k in group.keys()]


def read_dict(group):
    out = {}
    for key, obj in group.items():
        if isinstance(obj, h5py.Group):
            out[key] = read_sparse(obj["sparse_matrix"])
            continue
        value = obj[()]
        if isinstance(value, bytes):
            out[key] = value.decode("utf-8", errors="strict")
            continue
        try:
            out[float(key)] = value
        except ValueError:
            out[key] = value
    return out


def read_datagroup(group):
    """First key (h5py name order) `list` -> list, `sparse_matrix` -> sparse, else a
    dict; an empty group (an empty dict written officially) -> None, as upstream."""
    keys = list(group.keys())
    if not keys:
        return None
    if keys and keys[0] == "list":
        return read_list(group["list"])
    if keys and keys[0] == "sparse_matrix":
        return read_sparse(group["sparse_matrix"])
    return read_dict(group)


def read_value(obj):
    return _decode(obj[()]) if isinstance(obj, h5py.Dataset) else read_datagroup(obj)


def read_test_target(h5, step_id, test_number):
    """Target of test `test_number` (from 1) of `step_id`: one child unwrapped,
    several -> a tuple in h5py name order (var1, var10, var2, ...)."""
    path = f"{step_id}/test{test_number}"
    if path not in h5:
        raise TargetsMissing(f"group {path} not in the targets file")
    group = h5[path]
    if not isinstance(group, h5py.Group):
        raise TargetsMissing(f"{path} is not a group")
    keys = list(group.keys())
    if len(keys) == 1:
        return read_value(group[keys[0]])
    return tuple(read_value(group[k]) for k in keys)


def process_hdf5_to_tuple(step_id, test_num, h5py_file=None):
    """The official entry point: a list with one target per test case."""
    with h5py.File(h5py_file or H5PY_FILE, "r") as h5:
        return [read_test_target(h5, step_id, i + 1) for i in range(test_num)]
