"""Write weights.pt for model.py: per tier-1 prime, the digit-transition matrices and the
product tensor of the residue automaton, fitted by enumerating every (state, digit) pair."""
import os
import sys

import torch

PRIMES = (2, 3, 5, 7)


def weights() -> dict:
    out = {"primes": torch.tensor(PRIMES)}
    for p in PRIMES:
        step = torch.zeros(10, p, p)
        for d in range(10):
            for r in range(p):
                step[d, r, (10 * r + d) % p] = 1.0
        prod = torch.zeros(p, p, p)
        for r in range(p):
            for s in range(p):
                prod[r, s, (r * s) % p] = 1.0
        out[f"step_{p}"], out[f"prod_{p}"] = step, prod
    return out


if __name__ == "__main__":
    target = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    torch.save(weights(), os.path.join(target, "weights.pt"))
