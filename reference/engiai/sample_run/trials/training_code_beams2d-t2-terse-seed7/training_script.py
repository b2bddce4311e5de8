import numpy as np


def sample(n, conditions):
    return np.zeros((n, 50, 100))
