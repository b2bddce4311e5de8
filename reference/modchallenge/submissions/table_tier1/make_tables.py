"""Regenerates tables.json (enumeration over states and digits for p in {2, 3, 5, 7})."""
import json
import os

tables = {}
for p in (2, 3, 5, 7):
    step = [[(10 * r + d) % p for d in range(10)] for r in range(p)]
    prod = [[(r * s) % p for s in range(p)] for r in range(p)]
    tables[str(p)] = {"step": step, "prod": prod}

if __name__ == "__main__":
    with open(os.path.join(os.path.dirname(__file__), "tables.json"), "w") as fh:
        json.dump(tables, fh, separators=(",", ":"))
