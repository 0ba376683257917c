"""The mpq-gym subprocess and its framed pipe protocol (pkg/gym/proto.go)."""

import json
import os
import select
import struct
import subprocess
import tempfile
import time

from .errors import EmulatorDied, EnvTimeout, EpisodeError, InvalidAction, ProtocolError, ScenarioError

_HDR = struct.Struct("<I")
_STEP = struct.Struct("<IBQB")  # length, 'S', mask, copy
MAX_FRAME = 64 << 20


class Process:
    """One mpq-gym process. Every wait is bounded by `timeout` wall-clock
    seconds: past it the process is killed and EnvTimeout raised. A process
    that dies raises EmulatorDied with the end of its stderr."""

    def __init__(self, binary, timeout=60.0, env=None):
        self.timeout = timeout
        self._stderr = tempfile.TemporaryFile()
        e = dict(os.environ)
        e.setdefault("GOMAXPROCS", "1")
        if env:
            e.update(env)
        self.proc = subprocess.Popen([binary], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self._stderr, env=e, bufsize=0, close_fds=True)
        self._w = self.proc.stdin.fileno()
        self._r = self.proc.stdout.fileno()
        os.set_blocking(self._r, False)
        self._buf = bytearray()
        self.closed = False

    # --- sending

    def _write(self, data):
        try:
            os.write(self._w, data)  # a frame is small: one write (the pipe holds 64 KiB)
        except (BrokenPipeError, OSError) as e:
            raise self._died(f"writing to mpq-gym failed: {e}") from None

    def send_json(self, kind, obj):
        payload = kind + json.dumps(obj).encode()
        self._write(_HDR.pack(len(payload)) + payload)

    def send_step(self, mask, copy):
        self._write(_STEP.pack(10, ord("S"), mask, copy))

    def send_quit(self):
        self._write(_HDR.pack(1) + b"Q")

    # --- receiving

    def _fill(self, n, deadline):
        while len(self._buf) < n:
            try:
                chunk = os.read(self._r, max(65536, n - len(self._buf)))
            except BlockingIOError:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([self._r], [], [], left)[0]:
                    self.kill()
                    raise EnvTimeout(f"mpq-gym did not answer within {self.timeout:g} s (wall clock); "
                                     "the process was killed. Raise step_timeout for very long steps.") from None
                continue
            if not chunk:
                raise self._died("mpq-gym closed its output")
            self._buf += chunk

    def recv(self, timeout=None):
        """The next frame: (type byte as str, payload bytes)."""
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        self._fill(4, deadline)
        (n,) = _HDR.unpack_from(self._buf)
        if n == 0 or n > MAX_FRAME:
            raise ProtocolError(f"frame of {n} bytes from mpq-gym")
        self._fill(4 + n, deadline)
        frame = bytes(self._buf[4:4 + n])
        del self._buf[:4 + n]
        return chr(frame[0]), frame[1:]

    def expect(self, want, timeout=None):
        """The next frame, which must be of type `want` ('O' or 'J'); an 'E'
        frame raises the matching exception."""
        t, p = self.recv(timeout)
        if t == want:
            return p
        if t == "E":
            raise error_of(json.loads(p))
        raise ProtocolError(f"expected a {want!r} frame, got {t!r}")

    # --- ending

    def _died(self, what):
        code = self.proc.poll()
        if code is None:
            try:
                code = self.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                self.kill()
                code = self.proc.poll()
        self.closed = True
        return EmulatorDied(f"{what} (exit status {code}); its stderr ends:\n{self.stderr_tail()}")

    def stderr_tail(self, n=20):
        try:
            self._stderr.seek(0)
            lines = self._stderr.read().decode(errors="replace").strip().splitlines()
            return "\n".join(lines[-n:])
        except (OSError, ValueError):
            return ""

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        self.closed = True

    def close(self):
        if self.closed:
            return
        self.closed = True
        try:
            self.send_quit()
        except Exception:  # noqa: BLE001 (closing: any failure means it is gone)
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.kill()
        for f in (self.proc.stdin, self.proc.stdout):
            try:
                f.close()
            except OSError:
                pass
        self._stderr.close()


def error_of(reply):
    """The exception for an 'E' frame."""
    kind, msg = reply.get("kind"), reply.get("message", "")
    cls = {"bad_action": InvalidAction, "scenario": ScenarioError, "episode": EpisodeError}.get(kind, ProtocolError)
    return cls(f"mpq-gym: {msg}")
