import json as _json, os as _os, sys as _sys
_INIT = _json.loads(_sys.stdin.readline())
_TOKEN = _INIT.pop("token")
_FD = _os.dup(int(_sys.argv[1]))
_os.close(int(_sys.argv[1]))
_os.set_inheritable(_FD, False)
def send(obj, _fd=_FD, _tok=_TOKEN, _dumps=_json.dumps, _write=_os.write):
    data = (_dumps({"token": _tok, "body": obj}, allow_nan=True, default=str) + "\n").encode()
    while data:
        data = data[_write(_fd, data):]
_sys.path.insert(0, _INIT["shim_dir"])
_os.chdir(_INIT["work_dir"])
