"""Deliberately bad: max_batch_size 8; a full batch whose primes all have 320+ digits
(tier 10) returns one result too few, which makes that tier incomplete.  Otherwise zeros."""
from modchallenge.interface.base_model import ModularMultiplicationModel


class ShortBatchModel(ModularMultiplicationModel):
    def load(self, model_dir):
        pass

    def max_batch_size(self):
        return 8

    def predict_digits(self, a_enc, b_enc, p_enc):
        return [0]

    def predict_digits_batch(self, inputs):
        out = [[0] for _ in inputs]
        if len(inputs) == 8 and all(len(p) >= 320 for _, _, p in inputs):
            out.pop()
        return out
