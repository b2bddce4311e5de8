"""Deliberately bad: a random single digit per call, seeded from the OS (non-deterministic)."""
import random

from modchallenge.interface.base_model import ModularMultiplicationModel


class NoisyModel(ModularMultiplicationModel):
    def load(self, model_dir):
        self.rng = random.SystemRandom()

    def predict_digits(self, a_enc, b_enc, p_enc):
        return [self.rng.randrange(10)]
