"""The grader's own reader of the official test_data.h5 encoding, on files written in it."""
import h5py
import numpy as np
import pytest
import scipy.sparse

from test_scicode_support import gs, h5_encoding, tmpdir


@pytest.fixture(scope="module")
def reader():
    return gs.shim_module("parse")


def roundtrip(reader, outputs, name):
    path = tmpdir(f"h5-{name}") / "t.h5"
    h5_encoding.write_targets(path, {"5.1": outputs})
    return reader.process_hdf5_to_tuple("5.1", len(outputs), str(path)), path


def test_scalars_arrays_strings(reader):
    got, _ = roundtrip(reader, [3.25, np.arange(6).reshape(2, 3), "hello", True, 2 + 1j, "None"], "basic")
    assert got[0] == 3.25 and isinstance(got[0], np.floating)
    assert got[1].shape == (2, 3) and np.array_equal(got[1], np.arange(6).reshape(2, 3))
    assert got[2] == "hello" and isinstance(got[2], str)       # bytes decoded to UTF-8 str
    assert bool(got[3]) is True
    assert got[4] == 2 + 1j
    assert got[5] == "None"                                     # how the official writer stores None


def test_lists_regular_and_ragged(reader):
    got, _ = roundtrip(reader, [[1.0, 2.0, 3.0], [np.arange(2), np.arange(3)], []], "lists")
    assert isinstance(got[0], np.ndarray) and got[0].tolist() == [1.0, 2.0, 3.0]
    ragged = got[1]                                            # a `list` group: a Python list
    assert isinstance(ragged, list) and [len(x) for x in ragged] == [2, 3]
    assert got[2].shape == (0,) and got[2].dtype == np.float64  # empty list: float64 (0,) as in 10.3


def test_list_group_keeps_bytes_raw(reader):
    got, _ = roundtrip(reader, [[np.arange(2), "ab"]], "rawbytes")
    assert got[0][1] == b"ab"                                   # no decoding inside lists (official)


def test_dict_with_float_keys_and_strings(reader):
    d = {0.5: np.array([1.0, 2.0]), "name": "x", 2.0: 7, "label": 3}
    got, _ = roundtrip(reader, [d], "dict")
    t = got[0]
    assert set(t) == {0.5, 2.0, "name", "label"}
    assert np.allclose(t[0.5], [1.0, 2.0]) and t[2.0] == 7 and t["name"] == "x" and t["label"] == 3


def test_sparse_coo_csr_bsr_and_csc_quirk(reader):
    dense = np.array([[0, 1.0, 0, 0], [2.0, 0, 0, 3.0], [0, 0, 0, 0], [0, 4.0, 5.0, 0]])
    mats = [scipy.sparse.coo_matrix(dense), scipy.sparse.csr_matrix(dense),
            scipy.sparse.bsr_matrix(dense, blocksize=(2, 2)), scipy.sparse.csc_matrix(dense)]
    got, _ = roundtrip(reader, mats, "sparse")
    assert isinstance(got[0], scipy.sparse.coo_matrix)
    assert isinstance(got[1], scipy.sparse.csr_matrix)
    assert isinstance(got[2], scipy.sparse.bsr_matrix) and got[2].blocksize == (2, 2)
    for m in got[:3]:
        assert np.array_equal(m.toarray(), dense)
    # upstream quirk kept: a CSC matrix written officially is read back as CSR (its
    # indices/indptr reinterpreted), i.e. the transpose
    assert isinstance(got[3], scipy.sparse.csr_matrix)
    assert np.array_equal(got[3].toarray(), dense.T)


def test_sparse_inside_dict(reader):
    m = scipy.sparse.csr_matrix(np.eye(3))
    got, _ = roundtrip(reader, [{"H": m, "E": 1.5}], "dictsparse")
    assert isinstance(got[0]["H"], scipy.sparse.csr_matrix) and np.array_equal(got[0]["H"].toarray(), np.eye(3))


def test_tuple_of_twelve_outputs_in_h5_name_order(reader):
    out = tuple(float(i + 1) for i in range(12))             # var1..var12
    got, path = roundtrip(reader, [out], "tuple12")
    with h5py.File(path) as h5:
        names = list(h5["5.1/test1"].keys())
    assert names[:4] == ["var1", "var10", "var11", "var12"]   # lexicographic, as h5py lists them
    assert isinstance(got[0], tuple) and len(got[0]) == 12
    # the official reader keeps h5py's name order: var1, var10, var11, var12, var2, ...
    assert got[0] == tuple(float(n[3:]) for n in names)
    assert got[0][:5] == (1.0, 10.0, 11.0, 12.0, 2.0)


def test_single_output_unwrapped_and_missing_group(reader):
    got, path = roundtrip(reader, [np.array([1, 2])], "single")
    assert isinstance(got[0], np.ndarray)
    with pytest.raises(reader.TargetsMissing):
        reader.process_hdf5_to_tuple("5.1", 2, str(path))   # test2 absent
    with pytest.raises(reader.TargetsMissing):
        reader.process_hdf5_to_tuple("9.9", 1, str(path))


def test_comparators_official_semantics():
    cmp = gs.shim_module("cmp")
    assert cmp.cmp_tuple_or_list((1.0, np.array([1, 2])), (1.0 + 1e-9, np.array([1, 2])))
    assert not cmp.cmp_tuple_or_list((1.0,), (1.0, 2.0))
    assert cmp.cmp_tuple_or_list(([1, 2], True), ([1, 2], True))
    assert not cmp.cmp_tuple_or_list((True,), (False,))
    assert cmp.are_dicts_close({"a": 1.0, 0.5: "s"}, {"a": 1.0 + 1e-9, 0.5: "s"})
    assert not cmp.are_dicts_close({"a": 1.0}, {"b": 1.0})
    m = scipy.sparse.csr_matrix(np.eye(2))
    assert cmp.cmp_tuple_or_list([m], [scipy.sparse.csr_matrix(np.eye(2))])
    assert cmp.are_csc_matrix_close(m, m)


def test_empty_dict_reads_back_as_none_like_upstream(reader):
    """An empty dict is written as an empty group; upstream's datagroup reader loops over
    no key and returns None (a test then compares against None, as the official run does)."""
    got, _ = roundtrip(reader, [{}, ({}, 1.0)], "emptydict")
    assert got[0] is None
    assert got[1][0] is None and got[1][1] == 1.0


def test_symbol_keys_keep_their_original_value():
    """Upstream's process_symbol_in_dict: a Symbol value becomes its str; a Symbol key
    becomes its str but keeps the ORIGINAL value (so a Symbol value under a Symbol key
    stays a Symbol)."""
    sympy = pytest.importorskip("sympy")
    x, y = sympy.symbols("x y")
    cmp = gs.shim_module("cmp")
    assert cmp.process_symbol_in_dict({"a": x}) == {"a": "x"}
    out = cmp.process_symbol_in_dict({x: y, "b": 1.0})
    assert set(out) == {"x", "b"} and out["x"] is y
    assert cmp.are_dicts_close({x: 2.0, "c": y}, {"x": 2.0 + 1e-12, "c": "y"})
