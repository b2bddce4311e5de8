#!/usr/bin/env python3
"""How far an exact solution written in another (algebraically exact) order of operations
moves from the statement's spelling, on every mesh's nodes and dense points: the derivation
of grade_fem.py's absolute floor of the reproduction rule (SPEC "regen_abs_floor_eps",
problem_spec.md "Reproduction of your numbers").  ~1 s.

    python reference/fem/exact_order_spread.py
"""
import math

import numpy as np
forms = {
 "statement": lambda x: np.exp(x) * x**2 * (1 - x)**2,
 "products": lambda x: x * x * (1 - x) * (1 - x) * np.exp(x),
 "square_of_product": lambda x: (x * (1 - x))**2 * np.exp(x),
 "x_minus_x2": lambda x: np.exp(x) * (x - x * x)**2,
 "expanded": lambda x: np.exp(x) * (x**2 - 2 * x**3 + x**4),
 "horner": lambda x: np.exp(x) * (x * x * (1 + x * (-2 + x))),
 "exp_last_pow": lambda x: np.power(x, 2) * np.power(1 - x, 2) * np.exp(x),
 "e_to_the_x": lambda x: np.e**x * x**2 * (1 - x)**2,
 "exp_half_squared": lambda x: np.exp(x / 2)**2 * x**2 * (1 - x)**2,
 "math_exp": lambda x: np.vectorize(math.exp)(x) * x**2 * (1 - x)**2,
}
umax = 0
worst = {}
for p in range(5, 12):
    n = 2**p
    for x in (np.arange(n + 1) / n, np.arange(10 * n + 1) / (10 * n)):
        ref = forms["statement"](x)
        umax = max(umax, np.max(np.abs(ref)))
        for k, f in forms.items():
            d = np.max(np.abs(f(x) - ref))
            worst[k] = max(worst.get(k, 0), d)
eps = np.finfo(float).eps
print("max|u| = %.6g" % umax)
for k, v in worst.items():
    print("%-18s max |u_form - u_statement| = %.3e = %.2f eps max|u|" % (k, v, v / (eps * umax)))
