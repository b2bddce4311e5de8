"""A small table-driven model: exact on tier 1 (p in {2, 3, 5, 7}), wrong elsewhere.

tables.json holds, per prime p, a digit-transition table step[r][d] (the residue after
reading digit d in state r) and a product table prod[r][s].  No arithmetic on p is done here:
the answer is read from the tables.
"""
import json
import os

from modchallenge.interface.base_model import ModularMultiplicationModel


class TableModel(ModularMultiplicationModel):
    def load(self, model_dir):
        with open(os.path.join(model_dir, "tables.json")) as fh:
            self.tables = json.load(fh)

    def preprocess_a(self, a):
        return [ord(ch) - 48 for ch in a]

    def preprocess_b(self, b):
        return [ord(ch) - 48 for ch in b]

    def _run(self, table, digits):
        state = 0
        for d in digits:
            state = table[state][d]
        return state

    def predict_digits(self, a_enc, b_enc, p_enc):
        t = self.tables.get(p_enc)
        if t is None:
            return [0]
        ra, rb = self._run(t["step"], a_enc), self._run(t["step"], b_enc)
        return [t["prod"][ra][rb]]
