"""Deliberately bad: 30 ms per problem, so a small budget runs out part-way through the
tiers.  Answers 0 like the baseline."""
import time

from modchallenge.interface.base_model import ModularMultiplicationModel


class SlowModel(ModularMultiplicationModel):
    def load(self, model_dir):
        pass

    def predict_digits(self, a_enc, b_enc, p_enc):
        time.sleep(0.03)
        return [0]
