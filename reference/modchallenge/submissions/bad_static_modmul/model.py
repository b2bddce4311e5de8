"""Deliberately bad: computes the answer with hand-coded arithmetic (static finding
modmul-shortcut).  Exact on every tier, so with --skip-static-check it scores 1.0."""
from modchallenge.interface.base_model import ModularMultiplicationModel


class CheatModel(ModularMultiplicationModel):
    def load(self, model_dir):
        pass

    def predict_digits(self, a_enc, b_enc, p_enc):
        return [ord(ch) - 48 for ch in str(int(a_enc) * int(b_enc) % int(p_enc))]
