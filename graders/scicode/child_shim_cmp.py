"""scicode.compare.cmp, as provided by grade_scicode (official semantics)."""
import sys
import numpy as np
import scipy.sparse

_SPARSE = (scipy.sparse.csr_matrix, scipy.sparse.csc_matrix, scipy.sparse.bsr_matrix,
           scipy.sparse.coo_matrix)


def _is_symbol(x):
    sympy = sys.modules.get("sympy")     # a Symbol exists only if sympy was imported
    return sympy is not None and isinstance(x, sympy.Symbol)


def process_symbol_in_dict(d):
    """Symbol values become str; a Symbol key becomes str and keeps the ORIGINAL
    value (upstream's order of operations: a Symbol value under a Symbol key stays a Symbol)."""
    out = {}
    for key, value in d.items():
        out[key] = str(value) if _is_symbol(value) else value
        if _is_symbol(key):
            out[str(key)] = d[key]
            out.pop(key)
    return out


def are_dicts_close(dict1, dict2, atol=1e-8, rtol=1e-5):
    dict1, dict2 = process_symbol_in_dict(dict1), process_symbol_in_dict(dict2)
    if dict1.keys() != dict2.keys():
        return False
    for key in dict1:
        v1, v2 = dict1[key], dict2[key]
        if isinstance(v1, str) or _is_symbol(v1):
            if not v1 == v2:
                return False
        elif isinstance(v1, _SPARSE):
            if not np.allclose(v1.toarray(), v2.toarray(), atol=atol, rtol=rtol):
                return False
        else:
            try:
                if not np.allclose(v1, v2, atol=atol, rtol=rtol):
                    return False
            except ValueError:
                if not v1 == v2:
                    return False
    return True


def are_csc_matrix_close(matrix1, matrix2):
    return np.allclose(matrix1.toarray(), matrix2.toarray())


def cmp_tuple_or_list(var1, var2):
    if len(var1) != len(var2):
        return False
    for v1, v2 in zip(var1, var2):
        if isinstance(v1, dict):
            if not are_dicts_close(v1, v2):
                return False
        elif isinstance(v1, (scipy.sparse.csr_matrix, scipy.sparse.csc_matrix)):
            if not are_csc_matrix_close(v1, v2):
                return False
        elif isinstance(v1, bool):
            if not v1 == v2:
                return False
        else:
            try:
                if not np.allclose(v1, v2):
                    return False
            except ValueError:
                if not v1 == v2:
                    return False
    return True
