"""Finding (and, in a checkout, building) the Go command mpq-gym."""

import os
import shutil
import subprocess
import threading

from .errors import BinaryNotFound

ENV_BINARY = "MPQ_GYM_BIN"
MODULE = "module github.com/mpqsched/mpqsched"

_lock = threading.Lock()
_built = {}


def find_checkout(start=None):
    """The mpqsched checkout holding `start` (default: this package, then the
    working directory), or None."""
    starts = [start] if start else [os.path.dirname(os.path.abspath(__file__)), os.getcwd()]
    for s in starts:
        d = os.path.abspath(s)
        while True:
            gm = os.path.join(d, "go.mod")
            if os.path.isfile(gm):
                with open(gm, encoding="utf-8") as f:
                    if f.readline().strip() == MODULE:
                        return d
            parent = os.path.dirname(d)
            if parent == d:
                break
            d = parent
    return None


def binary(path=None):
    """Path of the mpq-gym executable to run.

    In order: `path`; $MPQ_GYM_BIN; in an mpqsched checkout (this package's,
    else the working directory's), `go build -o bin/mpq-gym ./cmd/mpq-gym`
    once per process (Go's cache makes it quick when nothing changed), or
    bin/mpq-gym there if Go is missing; mpq-gym on PATH. Raises
    BinaryNotFound saying how to get it."""
    if path:
        if not os.access(path, os.X_OK):
            raise BinaryNotFound(f"mpq-gym binary {path!r} is not an executable file")
        return path
    env = os.environ.get(ENV_BINARY)
    if env:
        if not os.access(env, os.X_OK):
            raise BinaryNotFound(f"${ENV_BINARY}={env!r} is not an executable file")
        return env
    root = find_checkout()
    go = shutil.which("go")
    if root:
        out = os.path.join(root, "bin", "mpq-gym")
        if go:
            with _lock:
                if root not in _built:
                    r = subprocess.run([go, "build", "-o", out, "./cmd/mpq-gym"], cwd=root,
                                       capture_output=True, text=True)
                    if r.returncode != 0:
                        raise BinaryNotFound(f"building mpq-gym in {root} failed:\n{r.stderr.strip()}")
                    _built[root] = out
            return _built[root]
        if os.access(out, os.X_OK):
            return out
    onpath = shutil.which("mpq-gym")
    if onpath:
        return onpath
    where = f"the checkout at {root}" if root else "an mpqsched checkout"
    raise BinaryNotFound(
        "mpq-gym (the emulator side of mpqgym) was not found and cannot be built: "
        + ("no Go toolchain on PATH. " if not go else "")
        + f"Install Go 1.26 or later (your distribution's golang package or the Go project's "
        f"download page) and run `make gym` or `go build -o bin/ ./cmd/mpq-gym` in {where}, "
        f"or point ${ENV_BINARY} at a built mpq-gym binary.")
