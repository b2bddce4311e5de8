import json, os, sys
seen = {"pid": os.getpid(), "hidden_visible": os.path.exists(sys.argv[1]),
        "proc": os.path.exists("/proc/self/status")}
try:
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    seen["job_userns"] = os.fork() == 0 or None
    if seen["job_userns"] is True:
        os._exit(0 if libc.unshare(0x10000000) == 0 else 1)
    seen["job_userns"] = os.waitpid(-1, 0)[1] == 0
except Exception:
    seen["job_userns"] = False
print(json.dumps(seen))
