"""Always-zero baseline: answers 0 to every problem (right exactly when a*b mod p == 0)."""
from modchallenge.interface.base_model import ModularMultiplicationModel


class ZeroModel(ModularMultiplicationModel):
    def load(self, model_dir):
        pass

    def predict_digits(self, a_enc, b_enc, p_enc):
        return [0]
