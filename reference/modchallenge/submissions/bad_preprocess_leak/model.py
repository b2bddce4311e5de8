"""Deliberately bad: preprocess_b returns b together with the a that preprocess_a saw last
(cross-argument state).  Otherwise it answers 0 like the baseline."""
from modchallenge.interface.base_model import ModularMultiplicationModel


class LeakyModel(ModularMultiplicationModel):
    def load(self, model_dir):
        self.last_a = None

    def preprocess_a(self, a):
        self.last_a = a
        return a

    def preprocess_b(self, b):
        return (b, self.last_a)

    def predict_digits(self, a_enc, b_enc, p_enc):
        return [0]
