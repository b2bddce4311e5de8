"""Child program (embedded as text by the build; runs after common/child_driver_prologue.py)."""
from graders.common.child_driver_prologue import _REQ, _sys, ask, send
# -- end of source-tree preamble: the build keeps only what follows --
_path = list(_sys.path)                 # stdlib modules of the driver: never the submission's copies
_sys.path.remove(_REQ["submission_dir"])
import copy as _copy, importlib as _il, operator as _op, pickle as _pickle, time as _time
_sys.path[:] = _path
_sys.path.insert(0, _REQ["lib_dir"])
from modchallenge.interface.base_model import ModularMultiplicationModel as _Base


def _short(exc):
    return (type(exc).__name__ + ": " + str(exc))[:300]


def _pack(out):
    if not isinstance(out, list):
        return {"m": "output is " + type(out).__name__ + ", not a list"}
    digits = []
    for i, d in enumerate(out):
        if isinstance(d, bool) or not isinstance(d, int):
            return {"m": "digit %d has type %s" % (i, type(d).__name__)}
        d = int.__index__(d)
        if d.bit_length() > _REQ["max_digit_bits"]:
            return {"m": "digit %d wider than any base" % i}
        digits.append(d)
    k = 0
    while k < len(digits) and digits[k] == 0:
        k += 1
    digits = digits[k:]
    if len(digits) > _REQ["max_digits"]:
        return {"m": "%d significant digits: larger than any answer" % len(digits)}
    return digits


def _run_batch(model, batch):
    """(packed outputs, None) or (None, reason) for a batch-length violation."""
    try:
        enc = [(model.preprocess_a(a), model.preprocess_b(b), model.preprocess_p(p)) for a, b, p in batch]
        res = model.predict_digits_batch(enc)
        if len(res) != len(batch):
            return None, "predict_digits_batch returned %d results for %d inputs" % (len(res), len(batch))
        return [_pack(r) for r, _ in zip(res, batch)], None
    except Exception as exc:
        return [{"m": "raised " + _short(exc)}] * len(batch), None


def _batch_size(model):
    """max_batch_size() as the harness uses it (any integer, numpy's too); anything else is 1."""
    try:
        n = model.max_batch_size()
        if isinstance(n, bool):
            return 1
        return max(1, min(int.__index__(_op.index(n)), 1 << 20))
    except Exception:
        return 1


def _det_pass(model, label, sample, bs):
    outs = []
    for i in range(0, len(sample), bs):
        got, bad = _run_batch(model, sample[i:i + bs])
        if bad:
            send({"event": "det", "pass": label, "error": bad})
            return
        outs.extend(got)
    send({"event": "det", "pass": label, "outputs": outs})


def _same(x, y):
    """Equal encodings: ==, arrays all equal with one shape, or the same pickled content (custom
    objects without __eq__), or the same repr."""
    try:
        r = x == y
        if isinstance(r, bool) and r:
            return True
        if not isinstance(r, bool) and hasattr(r, "all"):
            return bool(r.all()) and getattr(x, "shape", None) == getattr(y, "shape", None)
    except Exception:
        pass
    try:
        if type(x) is type(y) and _pickle.dumps(x, 4) == _pickle.dumps(y, 4):
            return True
    except Exception:
        pass
    try:
        return type(x) is type(y) and repr(x) == repr(y)
    except Exception:
        return False


def _snap(x):
    """A copy taken when a hook returns: an encoding the model mutates later cannot be made to
    match a later call after the fact."""
    try:
        return _copy.deepcopy(x)
    except Exception:
        return x


def _isolation(model, pairs):
    pa, pb, pp = model.preprocess_a, model.preprocess_b, model.preprocess_p
    for (a, b, p), (a2, b2, p2) in pairs:
        first = (_snap(pa(a)), _snap(pb(b)), _snap(pp(p)))
        pa(a2); pb(b2); pp(p2)
        again = (pa(a), pb(b), pp(p))              # the harness's sequence
        pa(a2)
        eb = pb(b)                                   # after another a
        pb(b2)
        ep = pp(p)                                   # after another a and b
        pp(p2)
        ea = pa(a)                                   # after another p
        names = ("preprocess_a", "preprocess_b", "preprocess_p")
        for k in range(3):
            if not _same(first[k], again[k]):
                return names[k] + " gave a different result for the same input when called again"
        for name, x, y, other in (("preprocess_b", first[1], eb, "preprocess_a"),
                                  ("preprocess_p", first[2], ep, "preprocess_a/_b"),
                                  ("preprocess_a", first[0], ea, "preprocess_p")):
            if not _same(x, y):
                return name + " changed after " + other + " saw another argument (cross-argument state)"
    return ""


t0 = _time.monotonic()
try:
    _mod, _, _cls = _REQ["entry_class"].rpartition(".")
    try:
        cls = getattr(_il.import_module(_mod), _cls)
    except (ImportError, AttributeError) as exc:
        send({"event": "load_failed", "reason": "cannot import entry_class " + _REQ["entry_class"] + ": " + _short(exc)})
        raise SystemExit(0)
    if not (isinstance(cls, type) and issubclass(cls, _Base)):
        send({"event": "load_failed", "reason": _REQ["entry_class"] + " is not a subclass of "
              "modchallenge.interface.base_model.ModularMultiplicationModel"})
        raise SystemExit(0)
    model = cls()
    model.load(_REQ["submission_dir"])
except SystemExit:
    raise
except BaseException as exc:
    send({"event": "load_failed", "reason": "raised while loading: " + _short(exc)})
    raise SystemExit(0)
send({"event": "loaded", "seconds": _time.monotonic() - t0})
bs = _batch_size(model)

def _audit(model, pairs, where, _send=send):
    """Isolation re-checked inside this (the inference) process, after predictions ran, with
    probe problems that look like the stream's: for a pair x, y of problems with one prime, the
    triples (xa, xb, p), (ya, xb, p), (xa, yb, p) go through the hooks and predict_digits_batch
    in batches as usual (answers discarded); each hook must give one encoding of its argument
    whatever the other arguments were."""
    probes = []
    for x, y in pairs:
        probes += [(x[0], x[1], x[2]), (y[0], x[1], y[2]), (x[0], y[1], x[2])]
    snaps = []
    try:
        for i in range(0, len(probes), bs):
            enc = []
            for a, b, p in probes[i:i + bs]:
                e = (model.preprocess_a(a), model.preprocess_b(b), model.preprocess_p(p))
                enc.append(e)
                snaps.append(tuple(_snap(v) for v in e))
            try:
                model.predict_digits_batch(enc)
            except Exception:
                pass
        reason = ""
        for k in range(0, len(snaps), 3):
            t1, t2, t3 = snaps[k:k + 3]
            for name, x, y, other in (("preprocess_b", t1[1], t2[1], "preprocess_a/_p"),
                                      ("preprocess_a", t1[0], t3[0], "the hooks before it"),
                                      ("preprocess_p", t1[2], t3[2], "preprocess_b")):
                if not reason and not _same(x, y):
                    reason = (name + " gave another encoding of the same argument once " + other +
                              " had seen other arguments (cross-argument state)")
    except Exception as exc:
        reason = "a preprocess hook raised: " + _short(exc)
    _send({"event": "audit", "where": where, "reason": reason})


def _after_batch(model, where, _ask=ask):
    """Ask the grader whether to audit now: the decision is the grader's, made when asked."""
    reply = _ask({"event": "batch"})
    if isinstance(reply, dict) and reply.get("audit"):
        _audit(model, reply["audit"], where)


if _REQ["mode"] == "check":
    try:
        reason = _isolation(model, _REQ["iso_pairs"])
    except Exception as exc:
        reason = "a preprocess hook raised: " + _short(exc)
    send({"event": "isolation", "reason": reason})
    for label in ("A", "B"):
        try:
            _det_pass(model, label, _REQ["det_sample"], bs)
        except Exception as exc:
            send({"event": "det", "pass": label, "error": "raised " + _short(exc)})
elif _REQ["mode"] == "recheck":
    _plan = ask({"event": "plan", "batch_size": bs}) or {}
    _cases = _plan.get("cases", [])
    outs, bad = [], None
    for i in range(0, len(_cases), bs):
        got, bad = _run_batch(model, _cases[i:i + bs])
        if bad:
            break
        outs.extend(got)
    send({"event": "recheck", "error": bad} if bad else {"event": "recheck", "outputs": outs})
else:
    try:
        _det_pass(model, "C", _REQ["det_sample"], bs)
    except Exception as exc:
        send({"event": "det", "pass": "C", "error": "raised " + _short(exc)})
    send({"event": "ready", "batch_size": bs})
    _TIERS = ask({"event": "plan", "batch_size": bs})   # the test set arrives only now, clock running
    for tid, cases in (_TIERS or {}).get("tiers", []):
        outs, bad = [], None
        for i in range(0, len(cases), bs):
            got, bad = _run_batch(model, cases[i:i + bs])
            if bad:
                break
            outs.extend(got)
            if i + bs < len(cases):                # after a tier's last batch: once it is reported
                _after_batch(model, "tier %s, after problem %d" % (tid, i + len(got)))
        if bad:
            send({"event": "tier", "tier": tid, "complete": False, "reason": bad})
        else:
            send({"event": "tier", "tier": tid, "complete": True, "outputs": outs})
            if cases:
                _after_batch(model, "tier %s, after problem %d" % (tid, len(outs)))
    _reply = ask({"event": "end"})
    if isinstance(_reply, dict) and _reply.get("audit"):
        _audit(model, _reply["audit"], "after the last tier")
    send({"event": "done"})
