"""Reader for EdAR transition files (docs/edar-format.md), written by the Go
package sched/edar. One file = a 32-byte header + fixed-size little-endian
records, so a whole file is one np.frombuffer with a structured dtype."""

import glob
import os

import numpy as np

MAGIC = b"EDARTR"
VERSION = 1  # sched/edar's FormatVersion; a model's edar.format_version
HEADER_SIZE = 32
HISTORY = 6  # k + 1
SUB_FEATURES = 6  # d, o, x, w, l, f
CONN_FEATURES = 3  # a_{t-1}, b_t, I_t
MAX_SUBFLOWS = 8

HEADER = np.dtype([
    ("magic", "S6"), ("version", "<u2"), ("slots", "<u2"), ("history", "<u2"),
    ("sub_features", "<u2"), ("conn_features", "<u2"), ("record_size", "<u4"),
    ("reserved", "V12"),
])


def record_dtype(slots):
    state = [("conn", "<f4", (CONN_FEATURES,)), ("sub", "<f4", (slots, HISTORY, SUB_FEATURES))]
    return np.dtype([
        ("n", "u1"), ("n2", "u1"), ("a", "u1"), ("done", "u1"), ("r", "<f4"),
        ("s", state), ("s2", state),
    ])


class FormatError(ValueError):
    pass


def read_file(path):
    """Returns the structured record array of one transition file."""
    raw = open(path, "rb").read()
    if len(raw) < HEADER_SIZE:
        raise FormatError(f"{path}: short header")
    h = np.frombuffer(raw[:HEADER_SIZE], HEADER)[0]
    if h["magic"] != MAGIC or h["version"] != VERSION:
        raise FormatError(f"{path}: magic {h['magic']!r} version {h['version']}, want {MAGIC!r} {VERSION}")
    slots = int(h["slots"])
    if not 1 <= slots <= MAX_SUBFLOWS or (h["history"], h["sub_features"], h["conn_features"]) != (HISTORY, SUB_FEATURES, CONN_FEATURES):
        raise FormatError(f"{path}: unsupported shape in header {h}")
    dt = record_dtype(slots)
    if h["record_size"] != dt.itemsize:
        raise FormatError(f"{path}: record size {h['record_size']}, want {dt.itemsize}")
    body = raw[HEADER_SIZE:]
    if len(body) % dt.itemsize:
        raise FormatError(f"{path}: truncated record")
    rec = np.frombuffer(body, dt)
    if len(rec) and (rec["n"].min() < 1 or rec["n"].max() > slots or rec["a"].max() > 1):
        raise FormatError(f"{path}: invalid subflow count or action")
    return rec


def load_dir(path, slots=None):
    """Loads every *.edar file under path (or one file) into dense arrays
    padded to `slots` subflows (default: the most slots of any file): dict of s_conn [N,3], s_sub [N,P,6,6], n [N],
    a [N], r [N], done [N], s2_conn, s2_sub, n2."""
    files = [path] if os.path.isfile(path) else sorted(glob.glob(os.path.join(path, "**", "*.edar"), recursive=True))
    if not files:
        raise FileNotFoundError(f"no *.edar transition files under {path}")
    parts = [read_file(f) for f in files]
    if slots is None:
        slots = max(p.dtype["s"]["sub"].shape[0] for p in parts)
    n = sum(len(p) for p in parts)
    out = {
        "s_conn": np.zeros((n, CONN_FEATURES), np.float32),
        "s_sub": np.zeros((n, slots, HISTORY, SUB_FEATURES), np.float32),
        "s2_conn": np.zeros((n, CONN_FEATURES), np.float32),
        "s2_sub": np.zeros((n, slots, HISTORY, SUB_FEATURES), np.float32),
    }
    cols = {k: [] for k in ("n", "n2", "a", "r", "done")}
    i = 0
    for p in parts:
        k = len(p)
        ps = p.dtype["s"]["sub"].shape[0]
        if ps > slots:
            raise FormatError(f"file has {ps} slots, trainer set to {slots}")
        out["s_conn"][i:i + k] = p["s"]["conn"]
        out["s_sub"][i:i + k, :ps] = p["s"]["sub"]
        out["s2_conn"][i:i + k] = p["s2"]["conn"]
        out["s2_sub"][i:i + k, :ps] = p["s2"]["sub"]
        for c in cols:
            cols[c].append(p[c])
        i += k
    for c, v in cols.items():
        out[c] = np.concatenate(v)
    out["files"] = files
    return out


def write_file(path, records, slots):
    """Writes a record array of record_dtype(slots) as one transition file,
    atomically (a temporary file renamed into place)."""
    dt = record_dtype(slots)
    h = np.zeros((), HEADER)
    h["magic"], h["version"], h["slots"], h["history"] = MAGIC, VERSION, slots, HISTORY
    h["sub_features"], h["conn_features"], h["record_size"] = SUB_FEATURES, CONN_FEATURES, dt.itemsize
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(h.tobytes())
        f.write(np.asarray(records, dt).tobytes())
    os.replace(tmp, path)
