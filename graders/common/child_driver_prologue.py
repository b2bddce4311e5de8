import json as _json, os as _os, sys as _sys
_IN = _os.dup(0)
_os.set_inheritable(_IN, False)
_sys.stdin.close()
_NULL = _os.open(_os.devnull, _os.O_RDONLY)
_os.dup2(_NULL, 0)                                  # the submission's stdin is empty
_os.close(_NULL)
_INBUF = [b""]


def _readline(_read=_os.read):
    """One line from the grader (or the warm parent), without the newline; b"" at its end."""
    while b"\n" not in _INBUF[0]:
        chunk = _read(_CH["in"], 1 << 20)
        if not chunk:
            line, _INBUF[0] = _INBUF[0], b""
            return line
        _INBUF[0] += chunk
    line, _, _INBUF[0] = _INBUF[0].partition(b"\n")
    return line


def receive(_loads=_json.loads):
    """The runner's next JSON line, or None at end of input."""
    line = _readline()
    try:
        return _loads(line) if line else None
    except ValueError:
        return None


_CH = {"in": _IN}
_REQ = receive()
_CH["tok"] = _REQ.pop("token")
_LIM = _REQ.pop("runner")
_sys.prefix, _sys.exec_prefix = _LIM.get("prefix") or (_sys.prefix, _sys.exec_prefix)   # a venv's
if _LIM.get("pth"):          # started without site (-S): the grader's own site directories,
    import site as _site     # in its order, with their .pth files (venv, --user, system, conda)
    for _p in _LIM.get("path", ()):
        _site.addsitedir(_p)
else:                        # (the driver's modules are plain files there: .pth files skipped)
    _sys.path.extend(p for p in _LIM.get("path", ()) if p not in _sys.path)
_CH["out"] = _os.dup(int(_sys.argv[1]))
_os.close(int(_sys.argv[1]))
_os.set_inheritable(_CH["out"], False)
_FD = _CH["out"]


def _put(obj, _dumps=_json.dumps, _write=_os.write):
    data = (_dumps(obj, allow_nan=True) + "\n").encode()
    while data:
        data = data[_write(_CH["out"], data):]


def send(obj):
    """One message to the grader."""
    _put({"token": _CH["tok"], "body": obj} if _CH["tok"] else {"body": obj})


def ask(obj):
    """Send obj and return the grader's answer (None when the grader gives none)."""
    _put({"token": _CH["tok"], "body": obj, "ask": True} if _CH["tok"] else {"body": obj, "ask": True})
    reply = receive()
    return reply.get("reply") if isinstance(reply, dict) else None


def report_runtime(_sent=[]):
    """The interpreter and the library versions this child runs with (once)."""
    if _sent:
        return
    _sent.append(1)
    mods = {}
    for name in ("numpy", "scipy", "h5py", "torch"):
        v = getattr(_sys.modules.get(name), "__version__", None)
        mods[name] = v if isinstance(v, str) else None
    send({"kind": "runtime", "python": _sys.version.split()[0], "executable": _sys.executable,
          "prefix": _sys.prefix, "modules": mods})


# numpy's lazy submodules that scipy's array-api layer imports only because it copies every
# name dir(numpy) lists (array_api_compat's clone_module: hasattr on each, which loads each):
# numpy.f2py (with crackfortran and charset_normalizer), numpy.testing (unittest, difflib),
# numpy.rec, numpy.char, numpy.ctypeslib, numpy.matlib.  Neither numpy's nor scipy's solving
# paths use them, the recorder relies on none (FEM's tamper check skips them).  Left loaded:
# numpy.ma (scipy.linalg reads np.ma at every call, _asarray_validated, numpy's np.unique too:
# lazy, it would load inside every job) and numpy.polynomial (Gauss points: the FEM gold's).
_LAZY_NUMPY = ("f2py", "testing", "rec", "char", "ctypeslib", "matlib")


def import_libraries(names, optional=False, _lazy=_LAZY_NUMPY):
    """Import the driver's numpy/scipy modules (names, in order) with dir(numpy) and
    numpy.__all__ (what `from numpy import *` reads) not listing the lazy submodules above that
    are not loaded yet, so that scipy's copy of numpy's namespace does not load them; that copy
    (scipy._lib.array_api_compat.numpy) answers those names from numpy on use instead (a module
    __getattr__).  numpy's own __dir__ and __all__ (the same objects) are back before anything
    else runs: a submission that uses numpy.testing (or any) loads it as in a plain interpreter.
    Where numpy has no module __dir__ or no __all__ list (older numpy) nothing is hidden.
    optional: a module that fails to import is skipped (FEM: scipy is optional)."""
    import importlib
    import numpy
    g = vars(numpy)
    own_dir, own_all = g.get("__dir__"), g.get("__all__")
    hidden = frozenset(n for n in _lazy if "numpy." + n not in _sys.modules) \
        if callable(own_dir) and type(own_all) is list else frozenset()
    if hidden:
        g["__dir__"] = lambda: [n for n in own_dir() if n not in hidden]
        g["__all__"] = [n for n in own_all if n not in hidden]
    try:
        for name in names:
            try:
                importlib.import_module(name)
            except Exception:
                if not optional:
                    raise
    finally:
        if hidden:
            g["__dir__"], g["__all__"] = own_dir, own_all
    compat = _sys.modules.get("scipy._lib.array_api_compat.numpy")
    cd = getattr(compat, "__dict__", None)
    if hidden and type(cd) is dict and "__getattr__" not in cd:
        modname = cd.get("__name__")

        def __getattr__(name, _np=numpy, _hidden=hidden):
            if name in _hidden:
                return getattr(_np, name)
            raise AttributeError("module %r has no attribute %r" % (modname, name))
        cd["__getattr__"] = __getattr__


def _libc():
    try:
        import ctypes
        return ctypes.CDLL(None, use_errno=True)
    except Exception:
        return None


def _own_user_namespace(libc, flags=0x10000000):
    """This job child in a user namespace of its own (same ids): it holds no capability over
    the warm parent or another job (flags: CLONE_NEWUSER with the namespaces to make beside
    it).  False where the kernel refuses."""
    uid, gid = _os.geteuid(), _os.getegid()
    try:
        if libc is None or libc.unshare(flags) != 0:
            return False
        for name, text in (("setgroups", "deny"), ("uid_map", "%d %d 1" % (uid, uid)),
                           ("gid_map", "%d %d 1" % (gid, gid))):
            with open("/proc/self/" + name, "w") as fh:
                fh.write(text)
        return True
    except Exception:
        return False


_NEWUSER, _NEWNS, _NEWIPC, _NEWNET = 0x10000000, 0x00020000, 0x08000000, 0x40000000


def _areas_writable(watch=True):
    """What every job of this run could write and a later (or parallel) job read: the scratch
    folder (HOME, TMPDIR), the submission copy and, in the allow-list root, /dev/shm and /tmp,
    /var/tmp where writable (without it the host's are others' too, and not the run's: the
    child can write anywhere its user can, which the sandbox line says; a job still gets its
    own where it can: watch=False)."""
    out = []
    shared = ("/dev/shm", "/tmp", "/var/tmp") if _LIM.get("isolated") or not watch else ()
    for p in (_REQ.get("scratch_dir"), _REQ.get("submission_dir")) + shared:
        if isinstance(p, str) and p and _os.path.isdir(p) and p not in out \
                and _os.access(p, _os.W_OK):
            out.append(p)
    return out


def _private_areas(libc):
    """Each job its own writable areas: in a mount namespace of its own, a fresh tmpfs over
    the scratch folder, /dev/shm and /tmp, /var/tmp (where writable and not a parent of the
    run's folders) and an overlay over the submission copy (its files readable, what the job
    writes kept in its own tmpfs); SysV IPC and the network (abstract sockets) its own too.
    Everything a job writes goes with it.  Returns "private", or "shared" where the kernel
    refused a step (the warm parent then watches the areas: _areas_snapshot)."""
    mode = "shared"
    for flags in (_NEWUSER | _NEWNS | _NEWIPC | _NEWNET, _NEWUSER | _NEWNS | _NEWIPC, _NEWUSER | _NEWNS):
        if _LIM.get("job_private", True) and _own_user_namespace(libc, flags):
            mode = "private"
            break
    else:                                   # no mount namespace: IPC and network its own still
        for flags in (_NEWUSER | _NEWIPC | _NEWNET, _NEWUSER | _NEWIPC, _NEWUSER):
            if (flags == _NEWUSER or _LIM.get("job_ipc_net", True)) and _own_user_namespace(libc, flags):
                break
        return mode
    import ctypes
    size = int(_LIM.get("job_tmpfs_bytes") or (1 << 30))

    def mount(src, target, fstype, flags, data=None):
        enc = [None if v is None else v.encode() for v in (src, target, fstype, data)]
        if libc.mount(enc[0], enc[1], enc[2], ctypes.c_ulong(flags), enc[3]) != 0:
            raise OSError(ctypes.get_errno(), "mount " + target)
    try:
        cwd = _os.getcwd()
        mount(None, "/", None, 16384 | (1 << 18))                    # MS_REC | MS_PRIVATE
        areas = _areas_writable(watch=False)
        scratch, sub = _REQ.get("scratch_dir"), _REQ.get("submission_dir")
        tmpfs = "mode=0700,size=%d" % size
        if sub in areas and scratch in areas:    # the overlay's upper layer: a tmpfs hidden below
            mount("tmpfs", scratch, "tmpfs", 2 | 4, tmpfs)             # the scratch folder's own
            for d in ("u", "w"):
                _os.mkdir(_os.path.join(scratch, d))
            mount("overlay", sub, "overlay", 2 | 4, "lowerdir=%s,upperdir=%s/u,workdir=%s/w"
                  % (sub, scratch, scratch))
        elif sub in areas:
            raise OSError("no scratch folder for the submission's overlay")
        for p in areas:
            if p == sub:
                continue
            if any(q != p and q.startswith(p.rstrip("/") + "/") for q in (scratch, sub) if q):
                if _LIM.get("isolated"):
                    raise OSError("%s holds the run's folders" % p)
                continue                    # the host's /tmp holding the run: not hidden
            mount("tmpfs", p, "tmpfs", 2 | 4, ("mode=1777,size=%d" % size) if p in
                  ("/tmp", "/var/tmp", "/dev/shm") else tmpfs)
        _os.chdir(cwd)                      # the cwd: the submission's overlay, not the layer below
        # a user and mount namespace below this one: its mounts arrive locked, so the job
        # cannot unmount a tmpfs or the overlay to reach the shared folders beneath
        return "private" if _own_user_namespace(libc, _NEWUSER | _NEWNS) else "shared"
    except Exception:
        return "shared"


def _areas_snapshot(limit=20000):
    """{path: (kind, size, mtime_ns, ctime_ns, inode)} of everything under the writable areas
    (the areas themselves included), as the warm parent sees them; at most `limit` entries."""
    import stat
    seen = {}
    for top in _areas_writable():
        stack = [top]
        while stack and len(seen) < limit:
            p = stack.pop()
            try:
                st = _os.lstat(p)
            except OSError:
                continue
            seen[p] = (stat.S_IFMT(st.st_mode), st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
            if stat.S_ISDIR(st.st_mode):
                try:
                    stack.extend(_os.path.join(p, n) for n in _os.listdir(p))
                except OSError:
                    pass
    if _LIM.get("isolated"):                # the sandbox's own SysV IPC namespace: its objects
        for kind in ("shm", "msg", "sem"):
            try:
                with open("/proc/sysvipc/" + kind) as fh:
                    rows = fh.read().splitlines()[1:]
            except OSError:
                continue
            for row in rows[:1000]:
                cols = row.split()
                if len(cols) > 2:
                    seen["sysvipc %s key %s id %s" % (kind, cols[0], cols[1])] = (kind, len(row))
    return seen


_AREAS_BASE = {}                                 # the areas before the first job of this driver


def _areas_left():
    """What differs now in the writable areas from before the first job: new, changed or
    removed entries (sorted paths)."""
    now = _areas_snapshot()
    base = _AREAS_BASE.get("base", {})
    return sorted(p for p in set(now) | set(base) if now.get(p) != base.get(p))


def _job_child(job, run_job, wfd, rfd, libc, sfd=None):
    code = 1
    try:
        _os.setpgid(0, 0)
        _os.close(_FD)                      # the reply pipe and the grader's input: gone
        _os.close(_IN)
        _CH.update(out=wfd, tok="")
        _CH["in"] = rfd
        _INBUF[0] = b""
        _REQ.pop("jobs", None)
        if libc is not None:
            libc.prctl(1, 9, 0, 0, 0)       # PR_SET_PDEATHSIG, SIGKILL: dies with the parent
            libc.prctl(4, 1, 0, 0, 0)       # dumpable while it writes its own id maps ...
        mode = _private_areas(libc)
        if libc is not None:
            libc.prctl(4, 0, 0, 0, 0)       # ... then not: no later job may trace this one
        if sfd is not None:                 # tells the warm parent whether it must watch
            _os.write(sfd, mode[:1].encode())
            _os.close(sfd)
        run_job(job)
        code = 0
    except SystemExit as exc:
        code = 0 if exc.code in (None, 0) else 1
    except BaseException:
        try:
            import traceback
            traceback.print_exc()
        except BaseException:
            pass
    for stream in (_sys.stdout, _sys.stderr):
        try:
            stream.flush()
        except BaseException:
            pass
    _os._exit(code)


def _decode_job_line(line, _loads=_json.loads):
    """(body, ask) of one line a job child wrote, or (None, why): never raises."""
    try:
        msg = _loads(line.decode("utf-8"))
    except RecursionError:
        return None, "nested too deeply"
    except MemoryError:
        return None, "too large to decode"
    except Exception as exc:
        return None, "not JSON (%s)" % type(exc).__name__
    if not isinstance(msg, dict) or "body" not in msg or set(msg) - {"body", "ask"}:
        return None, "not a message"
    body = msg["body"]
    if isinstance(body, dict) and body.get("kind") == "job_end":
        return None, "a job_end written by the job itself"
    stack = [(body, 0)]
    while stack:                            # a body the grader's decoder would refuse
        o, d = stack.pop()
        if d > 64:
            return None, "nested deeper than 64 levels"
        if isinstance(o, dict):
            stack.extend((v, d + 1) for v in o.values())
        elif isinstance(o, list):
            stack.extend((v, d + 1) for v in o)
    return body, msg.get("ask") is True


def _live_children():
    """This process's live child processes (pids), from /proc."""
    kids = set()
    try:
        for tid in _os.listdir("/proc/self/task"):
            with open("/proc/self/task/%s/children" % tid) as fh:
                kids.update(int(p) for p in fh.read().split())
    except (OSError, ValueError):
        pass
    return kids


def _sweep_children(pgid, keep=()):
    """Kill the job's process group and every process left to this (subreaper) parent but
    the job children in `keep` (the jobs still running beside it)."""
    import signal
    try:
        _os.killpg(pgid, signal.SIGKILL)
    except OSError:
        pass
    for _ in range(100):
        left = _live_children() - set(keep)
        for pid in left:
            try:
                _os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        for pid in left:                    # reaped: not even a zombie is left for the next job
            try:
                _os.waitpid(pid, 0)
            except ChildProcessError:
                pass
        if not left:
            return


def _relay_open(job, pid, rfd, wfd, limit, sfd=None):
    """The relay state of one running job child."""
    import time
    try:
        pidfd = _os.pidfd_open(pid)         # readable once the child has exited (Linux >= 5.3)
    except (AttributeError, OSError):
        pidfd = None
    t0 = time.monotonic()
    return {"job": job, "id": job["id"], "pid": pid, "rfd": rfd, "wfd": wfd, "pidfd": pidfd,
            "t0": t0, "limit": limit, "deadline": t0 + limit if limit else None,
            "buf": b"", "total": 0, "garbage": 0, "reasons": [], "waiting": False,
            "pending": b"", "eof": False, "st": None, "status": None, "reason": "", "sfd": sfd}


def _relay_take(s, chunk):
    """Pass on the complete lines of a job child's output, tagged with its id; False (the job
    is stopped) once it has written more than the reply cap."""
    s["total"] += len(chunk)
    if s["total"] > _LIM["reply_cap"]:
        s["garbage"] += 1
        s["reasons"].append("more than %d bytes of messages" % _LIM["reply_cap"])
        return False
    s["buf"] += chunk
    *lines, s["buf"] = s["buf"].split(b"\n")
    for line in lines:
        body, how = _decode_job_line(line)
        if body is None and how not in (True, False):
            s["garbage"] += 1
            if len(s["reasons"]) < 5:
                s["reasons"].append(how)
            continue
        tagged = dict(body, job=s["id"]) if isinstance(body, dict) else {"job": s["id"], "value": body}
        if how:
            _put({"token": _CH["tok"], "body": tagged, "ask": True})
            s["waiting"] = True
        else:
            send(tagged)
    return True


def _relay_read(s):
    chunk = _os.read(s["rfd"], 1 << 20)
    if not chunk:
        s["eof"] = True
    elif not _relay_take(s, chunk):
        s["status"], s["reason"] = "crashed", "flooded its message channel"


def _relay_close(s, keep):
    """End one job: what it wrote before it exited, its exit status, its processes swept (but
    the running jobs in `keep`); sends and returns its job_end."""
    import signal, time
    pid, st, status, reason = s["pid"], s["st"], s["status"], s["reason"]
    if st is not None and status is None and not s["eof"]:     # what it wrote before it exited
        _os.set_blocking(s["rfd"], False)
        try:
            while True:
                chunk = _os.read(s["rfd"], 1 << 20)
                if not chunk or not _relay_take(s, chunk):
                    break
        except BlockingIOError:
            pass
    for fd in (s["rfd"], s["wfd"]) + ((s["pidfd"],) if s["pidfd"] is not None else ()):
        _os.close(fd)
    if st is None:
        try:
            _os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
        try:
            st = _os.waitpid(pid, 0)[1]
        except ChildProcessError:
            pass
    if status is None:
        if st is not None and _os.WIFEXITED(st) and _os.WEXITSTATUS(st) == 0:
            status = "ok"
        elif st is not None and _os.WIFEXITED(st):
            status, reason = "crashed", "exit code %d" % _os.WEXITSTATUS(st)
        elif st is not None:
            status, reason = "crashed", "killed by signal %d" % _os.WTERMSIG(st)
        else:
            status, reason = "crashed", "lost"
    _sweep_children(pid, keep)
    end = {"kind": "job_end", "job": s["id"], "status": status, "reason": reason,
           "wall": time.monotonic() - s["t0"]}
    mode = b""
    if s.get("sfd") is not None:
        _os.set_blocking(s["sfd"], False)
        try:
            mode = _os.read(s["sfd"], 1)
        except OSError:
            pass
        _os.close(s["sfd"])
    if mode == b"p":
        end["isolation"] = "private"        # its own tmpfs/overlay: nothing it wrote is left
    else:                                   # shared areas: what is left there now is evidence
        left = _areas_left()
        end.update(isolation="watched", left=left[:20], left_count=len(left))
    if s["garbage"]:
        end.update(garbage=s["garbage"], garbage_reasons=s["reasons"])
    send(end)
    return end


def _relay_round(running):
    """One select() over the running jobs: their output, their exits, their pending answers
    and the grader's answers to their asks (routed by job id).  A job whose child exited,
    ran past its limit or flooded its channel gets its status here."""
    import select, time
    now = time.monotonic()
    for s in running:
        if s["deadline"] is not None and s["deadline"] <= now and s["status"] is None:
            s["status"], s["reason"] = "timeout", "exceeded the %g s job limit" % s["limit"]
    live = [s for s in running if s["status"] is None and s["st"] is None]
    if len(live) < len(running):
        return
    waiting = [s for s in live if s["waiting"]]
    buffered = bool(waiting) and b"\n" in _INBUF[0]
    rd = [fd for s in live for fd in ([] if s["eof"] else [s["rfd"]])
          + ([s["pidfd"]] if s["pidfd"] is not None else [])]
    rd += [_CH["in"]] if waiting and not buffered else []
    wr = [s["wfd"] for s in live if s["pending"]]
    waits = [s["deadline"] - now for s in live if s["deadline"] is not None]
    waits += [0.02] if any(s["pidfd"] is None for s in live) else []
    pause = 0 if buffered else min(waits) if waits else None
    ready_r, ready_w, _ = select.select(rd, wr, [], pause)
    for s in live:
        if s["wfd"] in ready_w:
            try:
                s["pending"] = s["pending"][_os.write(s["wfd"], s["pending"][:65536]):]
            except OSError:
                s["pending"] = b""
    if waiting and (buffered or _CH["in"] in ready_r):
        reply = receive()                   # the grader's answer (None once its input ended)
        to = [s for s in waiting if reply is None or not isinstance(reply, dict)
              or reply.get("job") == s["id"]]
        for s in to[:len(waiting) if reply is None else 1]:
            s["waiting"] = False
            answer = reply.get("reply") if isinstance(reply, dict) else None
            s["pending"] += (_json.dumps({"reply": answer}) + "\n").encode()
            _os.set_blocking(s["wfd"], False)
    for s in live:
        if s["rfd"] in ready_r:
            _relay_read(s)
        if s["status"] is None and (s["pidfd"] is None or s["pidfd"] in ready_r):
            done, code = _os.waitpid(s["pid"], _os.WNOHANG)
            if done:
                s["st"] = code


def _is_long(job):
    return isinstance(job, dict) and job.get("long") is True


def _next_job(pending, running, end):
    """The next of a list of jobs run `concurrency` at once: the first in order, except that
    a long job (job["long"] is True: a fine mesh's run) starts as soon as no other long job
    runs, and beside one only when no short job is left.  While short jobs remain one slot is
    always theirs, so a long job that hangs leaves every short job run; and the next long job
    does not wait behind the short ones once the slot of the one before it is free."""
    if not pending:
        return end
    if not any(_is_long(s["job"]) for s in running):
        for i, job in enumerate(pending):
            if _is_long(job):
                return pending.pop(i)
    for i, job in enumerate(pending):
        if not _is_long(job):
            return pending.pop(i)
    return pending.pop(0)


def fork_jobs(jobs, run_job, concurrency=1):
    """The warm fork server: for each job (in the order given) fork a child that runs
    run_job(job) and exits; relay its messages tagged with job["id"]; enforce
    _REQ["job_timeout"]; send one job_end per job.  Returns the job_end messages, in the
    order the jobs started.  Up to `concurrency` jobs run at once (each its own child, process group and
    user namespace; their asks are answered by job id).
    jobs may be an iterator (e.g. one that ask()s the grader for the next job): a job child
    then holds no plan of the jobs after it, as it would in a list it inherited (with
    concurrency 1 only: the next job is drawn when no job is running).  With more than one at
    once, jobs marked long are drawn as _next_job says."""
    if _REQ.get("gated"):                   # the grader says go before any job (run_isolated(gate=)):
        word = receive()                    # nothing of the submission runs until then; anything
        if not (isinstance(word, dict) and word.get("go") is True):     # else ends the run
            _os._exit(0)
        if isinstance(word.get("request"), dict):   # the request's late entries (e.g. draws the
            _REQ.update(word["request"])            # grader makes while the child starts)
    report_runtime()
    libc = _libc()
    if libc is not None:
        libc.prctl(4, 0, 0, 0, 0)           # PR_SET_DUMPABLE 0: no job may trace or read this parent
        libc.prctl(36, 1, 0, 0, 0)          # PR_SET_CHILD_SUBREAPER: a job's orphans come back here
    if "base" not in _AREAS_BASE:                # the areas before any job of this driver ran
        _AREAS_BASE["base"] = _areas_snapshot()
    import gc
    gc.freeze()                             # the warm heap stays shared: a job's collections
    limit = _REQ.get("job_timeout")         # do not touch (copy) every page of it
    width = max(1, int(concurrency))
    end_of_jobs, running, ends, started = object(), [], {}, 0
    source = iter(jobs) if width == 1 else None
    pending = None if width == 1 else list(jobs)
    while True:
        while len(running) < width:
            job = next(source, end_of_jobs) if source is not None else \
                _next_job(pending, running, end_of_jobs)
            if job is end_of_jobs:
                break
            job = dict(job) if isinstance(job, dict) else {"value": job}
            job.setdefault("id", started)
            for stream in (_sys.stdout, _sys.stderr):
                stream.flush()
            c2p_r, c2p_w = _os.pipe()
            p2c_r, p2c_w = _os.pipe()
            st_r, st_w = _os.pipe()         # one byte: did the job get private areas
            pid = _os.fork()
            if pid == 0:
                _os.close(c2p_r)
                _os.close(p2c_w)
                _os.close(st_r)
                for other in running:       # nothing of the jobs beside it
                    for fd in (other["rfd"], other["wfd"], other["pidfd"], other["sfd"]):
                        if fd is not None:
                            _os.close(fd)
                _job_child(job, run_job, c2p_w, p2c_r, libc, st_w)
            try:
                _os.setpgid(pid, pid)       # (also done by the child: no race either way)
            except OSError:
                pass
            _os.close(c2p_w)
            _os.close(p2c_r)
            _os.close(st_w)
            running.append(dict(_relay_open(job, pid, c2p_r, p2c_w, limit, st_r), order=started))
            started += 1
        if not running:
            break
        _relay_round(running)
        for s in [s for s in running if s["status"] is not None or s["st"] is not None]:
            running.remove(s)
            ends[s["order"]] = _relay_close(s, [r["pid"] for r in running])
    return [ends[i] for i in sorted(ends)]


_sys.path.insert(0, _REQ["submission_dir"])
_os.chdir(_REQ["submission_dir"])
