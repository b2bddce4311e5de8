"""A tiny SciCode-shaped problem set for tests and samples (test/bench code, not the grader).

Problems: 901 (test split: a function, a class header, a tuple output compared with
cmp_tuple_or_list), 902 (dev split: ground_truth_code, reference context), 62 (a no-test
first step, like the real 62.1, followed by a step that needs it).

    python reference/scicode/scicode_synthetic.py OUT_DIR      # problems_*.jsonl, targets.h5, correct/
"""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from scicode_h5_encoding import write_targets  # noqa: E402

DEPS = "import numpy as np"

HEADER_SCALE = "def scale(x, k):\n    '''Return x times k.'''"
HEADER_ACC = ("class Acc:\n    def __init__(self, start):\n        '''Start the running total.'''\n"
              "    def add(self, v):\n        '''Add v to the total.'''")
HEADER_STATS = "def scaled_stats(x, k):\n    '''(sum, mean) of scale(x, k).'''"
HEADER_SQUARE = "def square(x):\n    '''x squared.'''"
HEADER_SUMSQ = "def sum_squares(v):\n    '''Sum of square(v_i).'''"
HEADER_BASE = "def base():\n    '''Return 7.'''"
HEADER_USE = "def use_base(n):\n    '''n times base().'''"

SOLUTIONS = {
    "901.1": "def scale(x, k):\n    return np.asarray(x) * k\n",
    "901.2": ("class Acc:\n    def __init__(self, start):\n        self.total = start\n"
              "    def add(self, v):\n        self.total = self.total + v\n        return self\n"),
    "901.3": "def scaled_stats(x, k):\n    y = scale(x, k)\n    return (np.sum(y), np.mean(y))\n",
    "902.1": "def square(x):\n    return x ** 2\n",
    "902.2": "def sum_squares(v):\n    return float(sum(square(t) for t in v))\n",
    "62.1": "def base():\n    return 7\n",
    "62.2": "def use_base(n):\n    return n * base()\n",
}


def _step(num, header, cases, gold=None):
    s = {"step_number": num, "step_description_prompt": f"step {num}", "step_background": "",
         "function_header": header, "return_line": "", "test_cases": cases}
    if gold is not None:
        s["ground_truth_code"] = gold
    return s


def problems():
    test = [
        {"problem_id": "901", "problem_name": "synthetic", "required_dependencies": DEPS,
         "sub_steps": [
             _step("901.1", HEADER_SCALE, ["assert np.allclose(scale(np.arange(3), 2), target)",
                                           "x = np.array([1.5, -2.0])\nassert np.allclose(scale(x, -1), target)"]),
             _step("901.2", HEADER_ACC, ["a = Acc(1)\na.add(2)\nassert np.allclose(a.total, target)",
                                         "a.add(0.5)\nassert np.allclose(a.total, target)"]),
             _step("901.3", HEADER_STATS, ["from scicode.compare.cmp import cmp_tuple_or_list\n"
                                           "assert cmp_tuple_or_list(scaled_stats(np.arange(4.0), 3), target)"]),
         ]},
        {"problem_id": "62", "problem_name": "synthetic-special", "required_dependencies": DEPS,
         "sub_steps": [_step("62.1", HEADER_BASE, []),
                       _step("62.2", HEADER_USE, ["assert use_base(3) == target"])]},
    ]
    dev = [
        {"problem_id": "902", "problem_name": "synthetic-dev", "required_dependencies": DEPS,
         "sub_steps": [
             _step("902.1", HEADER_SQUARE, ["assert np.allclose(square(3.0), target)"],
                   SOLUTIONS["902.1"]),
             _step("902.2", HEADER_SUMSQ, ["assert np.allclose(sum_squares([1.0, 2.0]), target)",
                                           "assert np.allclose(sum_squares(np.arange(3)), target)"],
                   SOLUTIONS["902.2"]),
         ]},
    ]
    return test, dev


TARGETS = {
    "901.1": [np.arange(3) * 2, np.array([-1.5, 2.0])],
    "901.2": [3, 3.5],
    "901.3": [(np.float64(18.0), np.float64(4.5))],
    "902.1": [9.0],
    "902.2": [5.0, 5.0],
    "62.2": [21],
}


def reply(step):
    """A realistic raw reply: prose, a fenced block with imports, a helper, the definition."""
    return (f"Here is my solution for step {step}.\n\n```python\nimport numpy as np\n\n"
            f"{SOLUTIONS[step]}\nprint('demo run')\n```\n\nIt should work.\n")


def write_all(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    test, dev = problems()
    paths = {}
    for name, probs in (("problems_test.jsonl", test), ("problems_dev.jsonl", dev)):
        paths[name] = os.path.join(out_dir, name)
        with open(paths[name], "w", encoding="utf-8") as fh:
            for p in probs:
                fh.write(json.dumps(p) + "\n")
    paths["targets.h5"] = os.path.join(out_dir, "targets.h5")
    write_targets(paths["targets.h5"], TARGETS)
    gen = os.path.join(out_dir, "correct")
    os.makedirs(gen, exist_ok=True)
    for step in SOLUTIONS:
        if step != "62.1":
            with open(os.path.join(gen, f"{step}.txt"), "w", encoding="utf-8") as fh:
                fh.write(reply(step))
    special = os.path.join(out_dir, "special")
    os.makedirs(special, exist_ok=True)
    with open(os.path.join(special, "62.1.txt"), "w", encoding="utf-8") as fh:
        fh.write(SOLUTIONS["62.1"])
    paths["correct"], paths["special"] = gen, special
    return paths


if __name__ == "__main__":
    print(write_all(sys.argv[1]))
