"""modchallenge.interface.base_model, as provided by grade_modchallenge (interface only)."""
from abc import ABC, abstractmethod


class ModularMultiplicationModel(ABC):
    """Base class of every submission: load once, then predict digits of a*b mod p."""

    @abstractmethod
    def load(self, model_dir):
        """Load weights and config from model_dir (called once, before anything else)."""

    def preprocess_a(self, a):
        """Encode the decimal string a; may depend on a only."""
        return a

    def preprocess_b(self, b):
        """Encode the decimal string b; may depend on b only."""
        return b

    def preprocess_p(self, p):
        """Encode the decimal string p; may depend on p only."""
        return p

    @abstractmethod
    def predict_digits(self, a_enc, b_enc, p_enc):
        """(a*b) mod p as a list of int digits in the manifest's output_base, MSB first."""

    def predict_digits_batch(self, inputs):
        """One result per (a_enc, b_enc, p_enc) triple, in order."""
        return [self.predict_digits(a, b, p) for a, b, p in inputs]

    def max_batch_size(self):
        """The largest batch the grader may pass (default 1)."""
        return 1
