"""SUBPROCESS RUNNER: the sandbox every child runs in (namespaces, the allow-list root, rlimits),
its probe, and the authenticated reply line (a part of every grader that runs code; see
CONTRIBUTING.md)."""
import json
import os
import shutil
import subprocess
import sys
import threading
from graders._embed import embed
from graders.common.bench import GRADER_NAME
from graders.common.records import (Check, Status, _INTERRUPT, make_dirs_below, new_work_dir,
    remove_work_dir)
# -- end of source-tree preamble: the build keeps only what follows --
# ---- the sandbox: probed once, the same for every child of every grader ----
# pid 1 of the run's pid namespace (or, where there is none, a plain watcher), run as
# `python -I -S -B -c _SANDBOX_INIT <config>`.  With a config "root" it builds the
# allow-list root: a tmpfs holding read-only binds of the system and Python directories,
# the run's own folders, a minimal /dev and its own /proc; pivot_root to it and detach the
# old root (a chroot could be climbed out of).  It then starts the driver with the rlimits
# and stays: when the grader dies (the lifeline socket reads EOF) or the driver exits,
# everything else in the run is killed.  It reports the driver's exit on the lifeline.
_SANDBOX_INIT = embed("common/child_sandbox_init.py")

_SANDBOX = {}          # the probed sandbox level and launch prefix (once per grader process)
_SHM_BYTES = 1 << 30   # the child's /dev/shm (multiprocessing's locks and shared arrays); RAM-backed
_PIVOT_ROOT_NR = {"x86_64": 155, "aarch64": 41, "riscv64": 41, "ppc64le": 203, "s390x": 217}


CHILD_RUNTIME = {}     # what the first child said it runs with (report_runtime): the run block
# Each forked job gets private writable areas (a tmpfs over the scratch folder, /dev/shm, a
# writable /tmp, an overlay over the submission copy; its own SysV IPC and network) where the
# kernel allows a mount namespace per job; else the warm parent watches those areas and every
# job_end says what is left there ("isolation": "private" | "watched", "left": [paths]).
# "private": False here makes every job take the watched path (what a host without the
# namespace gets; the tests use it); "ipc_net": False then also keeps the run's IPC and network
# namespaces shared (a host that refuses those too: the parent then lists SysV objects).
JOB_AREAS = {"private": True, "ipc_net": True}


def _python_exe() -> str:
    """The interpreter the grader runs with, as it was started: its folder resolved (the
    sandbox holds real paths), its own name kept, so a virtual environment's `python` (a
    symlink to the base interpreter) still finds its pyvenv.cfg, as the grader's did (the
    link's target was taken before: a venv's packages were lost to its children)."""
    exe = sys.executable or sys.argv[0]
    return os.path.join(os.path.realpath(os.path.dirname(os.path.abspath(exe))), os.path.basename(exe))


def _grader_site_dirs() -> list:
    """The grader's own site directories, in its path order, as real paths: a venv's, the
    user's (--user), the system's or a conda environment's; the child starts without `site`
    and gets exactly these (python -I would drop the user's, and the base interpreter's
    own `site` would add the base's instead of the venv's)."""
    import site
    try:
        known = list(site.getsitepackages())
    except AttributeError:
        known = []
    try:
        user = site.getusersitepackages() if site.ENABLE_USER_SITE else None
    except AttributeError:
        user = None
    out = []
    for p in sys.path:
        if p and os.path.isdir(p) and ("site-packages" in p or "dist-packages" in p
                                      or p in known or p == user):
            real = os.path.realpath(p)
            if real not in out:
                out.append(real)
    return out


def _pth_dirs() -> list:
    """The folders the .pth files of the grader's site directories add (an editable
    install, a package kept outside site-packages): the child's `site` adds them too.  Not
    one that is, or holds, a path the grader was given (the submission, targets, reference
    files): nothing given to the grader enters the child's view through a .pth line."""
    given = [os.path.realpath(a) for a in sys.argv[1:] if a and not a.startswith("-") and os.path.exists(a)]
    out = []
    for d in _grader_site_dirs():
        try:
            names = sorted(n for n in os.listdir(d) if n.endswith(".pth"))
        except OSError:
            continue
        for name in names:
            try:
                with open(os.path.join(d, name), encoding="utf-8", errors="replace") as fh:
                    lines = fh.read(1 << 16).splitlines()
            except OSError:
                continue
            for line in lines:
                line = line.strip()
                if line and not line.startswith(("#", "import ", "import\t")):
                    p = os.path.realpath(os.path.join(d, line))
                    if os.path.isdir(p) and p not in out and p != "/" and \
                            not any(g == p or g.startswith(p.rstrip("/") + "/") for g in given):
                        out.append(p)
    return out


def _readonly_paths(extra=()) -> list:
    """What the child may read: the system's programs, libraries and /etc, and the Python
    installation with its site-packages; nothing else of the filesystem."""
    import site
    paths = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc"]
    py = {os.path.realpath(p) for p in (sys.base_prefix, sys.prefix, sys.exec_prefix,
                                        sys.base_exec_prefix)}
    try:
        sites = list(site.getsitepackages())
    except AttributeError:
        sites = []
    for p in sites + sys.path:
        if p and ("site-packages" in p or "dist-packages" in p) and os.path.isdir(p):
            py.add(os.path.realpath(p))
    py.update(_grader_site_dirs())
    py.update(_pth_dirs())
    py.add(os.path.dirname(_python_exe()))
    py.add(os.path.dirname(os.path.realpath(_python_exe())))
    paths += sorted(p for p in py if p != "/")
    paths += [os.path.realpath(p) for p in extra]
    keep = []
    for p in paths:
        if not any(p == k or p.startswith(k.rstrip("/") + "/") for k in keep):
            keep.append(p)
    return keep


def _launch_cfg(work: str, root: bool, rw: list, argv: list, cwd: str, rlimits: list,
                lifeline: int, ro_extra=(), hidden: str = "") -> dict:
    import glob
    import platform
    return {"root": os.path.join(work, "root") if root else None,
            "ro": _readonly_paths(ro_extra) + [d for d in (os.path.join(work, "driver"),)
                                               if os.path.isdir(d)],
            "rw": rw, "dev": ["/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"]
            + sorted(glob.glob("/dev/nvidia*")), "shm_bytes": _SHM_BYTES,
            "pivot_root_nr": _PIVOT_ROOT_NR.get(platform.machine(), -1),
            "argv": argv, "cwd": cwd, "rlimits": rlimits, "lifeline": lifeline, "hidden": hidden,
            "close": [0] + [int(a) for a in argv[-1:] if a.isdigit()]}


def _try_launch(prefix: list, root: bool, work: str) -> dict | None:
    """Start _SANDBOX_INIT through prefix in probe mode; what it saw, or None if it did not run."""
    if _INTERRUPT["at"] is not None:        # Ctrl-C: nothing new starts
        return None
    import socket
    marker = os.path.join(work, "hidden")
    with open(marker, "w") as fh:
        fh.write("x")
    make_dirs_below(work, os.path.join(work, "root"))
    a, b = socket.socketpair()
    try:
        cfg = dict(_launch_cfg(work, root, [], [], "/", [], b.fileno()), probe=marker,
                   python=_python_exe())
        proc = subprocess.Popen(prefix + [_python_exe(), "-I", "-S", "-B", "-c", _SANDBOX_INIT,
                                          json.dumps(cfg)],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, pass_fds=(b.fileno(),),
                                start_new_session=True)
        b.close()
        proc.wait(timeout=30)
        a.settimeout(5)
        said = a.recv(65536).decode(errors="replace")
        if proc.returncode != 0 or not said.startswith("probe "):
            return None
        return json.loads(said[6:])
    except (OSError, ValueError, subprocess.SubprocessError):
        return None
    finally:
        a.close()
        b.close()


_PROBE_LOCK = threading.Lock()


def sandbox_level() -> dict:
    """How the child is confined here (probed once by running a child the real way)."""
    with _PROBE_LOCK:
        if not _SANDBOX and _INTERRUPT["at"] is None:   # after Ctrl-C: not probed, {} (unknown)
            _probe_sandbox()
    return {k: v for k, v in _SANDBOX.items() if k not in ("prefix", "root")}


def _full_prefix() -> list:
    unshare = shutil.which("unshare") or "/usr/bin/unshare"
    return [unshare, "--user", "--map-root-user", "--net", "--mount", "--pid", "--ipc", "--fork",
            "--kill-child"]


def _full_level(seen: dict) -> dict | None:
    """The full sandbox's level from what its init saw, or None if it did not hold."""
    if not (seen and seen.get("python") and seen.get("pid1") and not seen.get("hidden_visible")):
        return None
    return dict(user_namespace=True, net_namespace=True, mount_namespace=True,
                pid_namespace=True, ipc_namespace=True, file_isolation=True,
                prefix=_full_prefix(), root=True, job_user_namespace=bool(seen.get("job_userns")),
                job_private_areas=bool(seen.get("job_mountns")),
                note="" if seen.get("proc") else "the child has no /proc (the host refused one)",
                rlimits=["RLIMIT_AS", "RLIMIT_CPU", "RLIMIT_FSIZE", "RLIMIT_CORE"])


def _probe_sandbox() -> None:
    """Try the full sandbox, then user+net namespaces only, then none."""
    work = new_work_dir(f"{GRADER_NAME}-probe-")
    try:
        unshare = shutil.which("unshare") or "/usr/bin/unshare"
        level = _full_level(_try_launch(_full_prefix(), True, work))
        if level is None:
            basic = [unshare, "--user", "--map-root-user", "--net"]
            seen = _try_launch(basic, False, work)
            seen = seen if seen and seen["python"] else None
            level = dict(user_namespace=bool(seen), net_namespace=bool(seen),
                         mount_namespace=False, pid_namespace=False, ipc_namespace=False,
                         file_isolation=False,
                         prefix=basic if seen else [], root=False,
                         job_user_namespace=bool(seen and seen.get("job_userns")),
                         job_private_areas=bool(seen and seen.get("job_mountns")),
                         note="mount/pid namespaces unavailable: the child can read any "
                         "file the grader's user can" + ("" if seen else
                                                         "; no user/network namespace either"))
    finally:
        remove_work_dir(work)
    level["rlimits"] = ["RLIMIT_AS", "RLIMIT_CPU", "RLIMIT_FSIZE", "RLIMIT_CORE"]
    _SANDBOX.update(level)


def sandbox_check() -> Check:
    """INFO sandbox.isolation: what confined the child in this grading."""
    lv = sandbox_level()
    ns = [n for n in ("user", "net", "mount", "pid", "ipc") if lv.get(f"{n}_namespace")]
    files = "on (the child sees only Python, its copy and a scratch folder)" if lv["file_isolation"] \
        else "OFF"
    msg = (f"namespaces: {', '.join(ns) or 'none'}; file isolation {files}"
           f"; rlimits: {', '.join(r[7:] for r in lv['rlimits'])}")
    if lv.get("job_private_areas") and JOB_AREAS["private"]:
        msg += ("; jobs: each its own writable areas (a tmpfs per job over the scratch folder, "
                "/dev/shm and /tmp, an overlay over the copy; its own IPC and network)")
    else:
        msg += ("; jobs: shared writable areas, watched (a file a job leaves behind makes the checks "
                "that compare two jobs REVIEW)")
    return Check("sandbox.isolation", Status.INFO, msg + (f"; {lv['note']}" if lv["note"] else ""),
                 lv["file_isolation"])


def _drain(stream, sink: list, cap: int) -> None:
    kept = 0
    while True:
        chunk = stream.read(65536)
        if not chunk:
            break
        if kept < cap:
            sink.append(chunk[: cap - kept])
            kept += len(sink[-1])
    stream.close()


_MAX_DEPTH = 64        # deeper message bodies are refused (no grader code walks them recursively)
def _too_deep(obj) -> bool:
    stack = [(obj, 0)]
    while stack:
        o, d = stack.pop()
        if d > _MAX_DEPTH:
            return True
        if isinstance(o, dict):
            stack.extend((v, d + 1) for v in o.values())
        elif isinstance(o, list):
            stack.extend((v, d + 1) for v in o)
    return False


_MAX_INT_DIGITS = 4300   # Python's default int-string limit, held here whatever the process set
                         # (SciCode lifts it for its own parsing): a longer integer in a reply
                         # is refused, not parsed in quadratic time


def _bounded_int(digits: str) -> int:
    if len(digits.lstrip("-")) > _MAX_INT_DIGITS:
        raise ValueError(f"an integer of more than {_MAX_INT_DIGITS} digits")
    return int(digits)


def decode_reply(line: bytes, token: str) -> tuple:
    """(body, is_ask, None) for an authentic reply line, (None, False, why) for anything
    else.  Never raises: garbage is the child's failure, never the grader's."""
    import hmac
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, False, f"invalid UTF-8 at byte {exc.start}"
    try:
        msg = json.loads(text, parse_int=_bounded_int)
    except RecursionError:
        return None, False, "JSON nested too deeply to decode"
    except MemoryError:
        return None, False, "JSON too large to decode"
    except ValueError as exc:
        return None, False, f"not JSON ({str(exc)[:80]})"
    except Exception as exc:          # anything else json may raise on hostile input
        return None, False, f"not JSON ({type(exc).__name__})"
    if not isinstance(msg, dict) or not isinstance(msg.get("token"), str):
        return None, False, "no run token"
    if not hmac.compare_digest(msg["token"].encode("utf-8", "replace"), token.encode()):
        return None, False, "wrong run token"
    if "body" not in msg or set(msg) - {"token", "body", "ask"} \
            or msg.get("ask", False) not in (True, False):
        return None, False, "malformed message (valid token)"
    if _too_deep(msg["body"]):
        return None, False, f"message nested deeper than {_MAX_DEPTH} levels (valid token)"
    return msg["body"], msg.get("ask") is True, None


