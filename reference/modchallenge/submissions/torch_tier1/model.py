"""A small PyTorch model: a weighted finite automaton, exact on tier 1 (p in {2, 3, 5, 7}).

weights.pt (written by make_weights.py) holds, per prime p, ten p x p transition matrices (one
per decimal digit: the state after reading that digit) and a p x p x p product tensor.  The
forward pass multiplies one-hot state vectors through the matrices of a's and b's digits, then
contracts both states with the product tensor and reads the answer with argmax.  Weights are
loaded with torch.load(weights_only=True) (tensors only, no pickled code), on the CPU.
"""
import os

import torch

from modchallenge.interface.base_model import ModularMultiplicationModel


class TorchAutomaton(ModularMultiplicationModel):
    def load(self, model_dir):
        torch.set_num_threads(1)
        weights = torch.load(os.path.join(model_dir, "weights.pt"), map_location="cpu", weights_only=True)
        self.step = {p: weights[f"step_{p}"] for p in weights["primes"].tolist()}
        self.prod = {p: weights[f"prod_{p}"] for p in weights["primes"].tolist()}

    def preprocess_a(self, a):
        return torch.tensor([ord(ch) - 48 for ch in a], dtype=torch.long)

    def preprocess_b(self, b):
        return torch.tensor([ord(ch) - 48 for ch in b], dtype=torch.long)

    def _state(self, p, digits):
        v = torch.zeros(p)
        v[0] = 1.0
        for d in digits.tolist():
            v = v @ self.step[p][d]
        return v

    def predict_digits(self, a_enc, b_enc, p_enc):
        p = int(p_enc) if len(p_enc) == 1 else 0
        if p not in self.step:
            return [0]
        with torch.no_grad():
            va, vb = self._state(p, a_enc), self._state(p, b_enc)
            scores = torch.einsum("i,j,ijk->k", va, vb, self.prod[p])
        return [int(scores.argmax())]

    def predict_digits_batch(self, inputs):
        return [self.predict_digits(a, b, p) for a, b, p in inputs]

    def max_batch_size(self):
        return 16
