"""MpqEnv: one multipath QUIC connection of an mpqsched scenario as a
Gymnasium environment. docs/gym.md in the repository describes the
observation, the action and the reward in full."""

import json
import struct

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from . import binary as _binary
from .errors import InvalidAction, ProtocolError
from .process import Process

_HEAD = struct.Struct("<QBB6xd")
TERMINATED, TRUNCATED = 1, 2

REWARDS = ("edar", "goodput")


class Layout:
    """Where the arrays of an observation frame are (from the Go side)."""

    def __init__(self, d):
        self.size = d["size"]
        self.arrays = {k: (v["offset"], tuple(v["shape"]), np.dtype(v["dtype"]), int(np.prod(v["shape"])))
                       for k, v in d["arrays"].items()}
        self.path_features = d["path_features"]
        self.conn_features = d["conn_features"]
        self.report_features = d["report_features"]

    def parse(self, payload):
        if len(payload) != self.size:
            raise ProtocolError(f"observation of {len(payload)} bytes, layout says {self.size}")
        step, flags, n, action_at = _HEAD.unpack_from(payload)
        arrays = {}
        for k, (off, shape, dt, count) in self.arrays.items():
            arrays[k] = np.frombuffer(payload, dt, count, off).reshape(shape).copy()
        return step, flags, n, action_at, arrays


def _request(scenario, scenario_file, seed, options):
    q = {"seed": int(seed), "options": options}
    if scenario_file:
        q["file"] = str(scenario_file)
    else:
        q["scenario"] = scenario
    return q


class MpqEnv(gym.Env):
    """A scenario of mpqsched's library (or a scenario file) as an environment.

    One step is one decision interval (TI = the smallest path min RTT, 10 ms
    before any sample) of the data sender's scheduler; virtual time stands
    still between steps, however long the agent thinks.

    Observation (a Dict; P = `slots`, by default the scenario's path count):
      conn    float64[18]    the connection: time, TI, every sched.ConnInfo field
      paths   float64[P, 20] slot i = the i-th path: every sched.PathInfo field
      present int8[P]        1 where a slot holds a path
      report  float64[11+P]  the receiver's reports of the TI that ended and
                             EdAR's reward terms, then bytes received per slot
      edar_conn float32[3], edar_sub float32[P, 6, 6]   EdAR's state (edar=True)
    Units and columns: docs/gym.md; the names are in `feature_names`.

    Action: MultiBinary(P + 1): action[i] = 1 marks path slot i, action[P] = 1
    sends copies of unacknowledged data instead of new data. Marks of slots
    that hold no path (present 0) are ignored. All paths and no copies is minRTT; all paths with copies is EdAR's redundant mode; no path
    sends nothing this TI.

    Reward: "edar" (default) r = V_g − α·V_w − β·V_o of the reports received
    during the step's TI (EdAR's, α = 1, β = 0.5); "goodput" V_g only; or a
    callable f(obs, info) -> float. The reports of a TI mostly describe data
    sent one TI earlier (one RTT), so the reward of a step mostly credits the
    previous action, as EdAR's trainer assumes. The receiver reports every
    report_interval_ms (20); a TI shorter than that may end without a report
    (no reward) unless report_per_min_rtt=True, which makes it report once
    per the smallest RTT of its paths.

    Episode: one transfer of the scenario; terminated when it completes,
    truncated at a timed scenario's end, at max_seconds or max_steps, or if the
    transfer fails (info["result"]["error"]). The last step's info["result"]
    holds the run's metrics (goodput, FCT, redundant bytes, ...).

    Seeds: reset(seed=s) runs the scenario with seed s (its ranges and the
    emulator's randomness); reset() without a seed draws one from the
    environment's generator. Episodes of one seed and one policy agree within
    the emulator's tolerance (about 0.1%: goroutine order and TLS randomness
    are not fixed), not bit for bit.
    """

    metadata = {"render_modes": []}

    def __init__(self, scenario="hetero-2path", *, scenario_file=None, edar=False, slots=None,
                 reward="edar", alpha=None, beta=None, goodput_scale=None, receive_buffer=None,
                 report_interval_ms=None, report_per_min_rtt=False, max_seconds=None, max_steps=None, max_bytes=None,
                 opportunistic=False, step_timeout=60.0, binary=None):
        if not (callable(reward) or reward in REWARDS):
            raise ValueError(f"reward must be one of {REWARDS} or a callable, not {reward!r}")
        self.scenario, self.scenario_file = scenario, scenario_file
        self.reward_mode = reward
        opts = {"edar": bool(edar), "opportunistic": bool(opportunistic)}
        if report_per_min_rtt:
            opts["report_per_min_rtt"] = True
        for k, v in (("slots", slots), ("alpha", alpha), ("beta", beta), ("goodput_scale", goodput_scale),
                     ("receive_buffer", receive_buffer), ("report_interval_ms", report_interval_ms),
                     ("max_seconds", max_seconds), ("max_steps", max_steps), ("max_bytes", max_bytes)):
            if v is not None:
                opts[k] = v
        self.options = opts
        self._proc = Process(_binary.binary(binary), timeout=step_timeout)
        try:
            self._proc.send_json(b"D", _request(scenario, scenario_file, 0, opts))
            self.description = json.loads(self._proc.expect("J"))
        except BaseException:
            self._proc.close()
            raise
        self.layout = Layout(self.description["layout"])
        self.slots = P = self.description["slots"]
        obs = {
            "conn": spaces.Box(-np.inf, np.inf, (len(self.layout.conn_features),), np.float64),
            "paths": spaces.Box(-np.inf, np.inf, (P, len(self.layout.path_features)), np.float64),
            "present": spaces.MultiBinary(P),
            "report": spaces.Box(-np.inf, np.inf, (len(self.layout.report_features),), np.float64),
        }
        if edar:
            obs["edar_conn"] = spaces.Box(0, 10, (3,), np.float32)
            obs["edar_sub"] = spaces.Box(0, 10, (P, 6, 6), np.float32)
        self.observation_space = spaces.Dict(obs)
        self.action_space = spaces.MultiBinary(P + 1)
        self.feature_names = {"conn": self.layout.conn_features, "paths": self.layout.path_features,
                              "report": self.layout.report_features}
        self._n = 0
        self._running = False

    # --- Gymnasium API

    def reset(self, *, seed=None, options=None):
        """options may override, for this episode only, the scenario
        ("scenario" or "scenario_file") and any constructor option
        (max_bytes, bytes (a transfer size), max_seconds, ...); the
        observation keeps this environment's slots."""
        super().reset(seed=seed)
        self._begin_reset(seed, options, seeded=True)
        return self._end_reset()

    def step(self, action):
        self._begin_step(action)
        return self._end_step()

    # The halves of reset and step, so that MpqVectorEnv can start every
    # process before it waits for any.

    def _begin_reset(self, seed, options=None, seeded=False):
        if not seeded and seed is not None:
            super().reset(seed=seed)
        if seed is None:
            seed = int(self.np_random.integers(0, 2**31 - 1))
        scenario, scenario_file, opts = self.scenario, self.scenario_file, self.options
        if options:
            options = dict(options)
            if "scenario" in options or "scenario_file" in options:
                scenario, scenario_file = options.pop("scenario", None), options.pop("scenario_file", None)
            opts = {**self.options, "slots": self.slots, **options}
        self._proc.send_json(b"R", _request(scenario, scenario_file, seed, opts))
        self._running = False
        self._seed = seed

    def _end_reset(self):
        obs, _, _, _, info = self._observe(self._proc.expect("O"))
        info["seed"] = self._seed
        self._running = True
        return obs, info

    def _begin_step(self, action):
        if not self._running:
            raise ProtocolError("step() before reset(), or after the episode ended: call reset()")
        mask, cp = self.encode_action(action)
        self._proc.send_step(mask, cp)

    def _end_step(self):
        return self._observe(self._proc.expect("O"))

    def close(self):
        if getattr(self, "_proc", None) is not None:
            self._proc.close()
        super().close()

    # --- helpers

    def encode_action(self, action):
        """(path mask, copy flag) of an action, checked against the action
        space (InvalidAction otherwise). Marks of slots that hold no path now
        are allowed; the emulator ignores them."""
        a = np.asarray(action)
        P = self.slots
        if a.shape != (P + 1,) or a.dtype.kind not in "iub":
            raise InvalidAction(f"action must be an integer array of shape ({P + 1},) (MultiBinary({P + 1})), "
                                f"got {a.dtype} {a.shape}")
        v = a.tolist()
        mask = 0
        for i, x in enumerate(v):
            if x != 0 and x != 1:
                raise InvalidAction(f"action values must be 0 or 1, got {v}")
            if x and i < P:
                mask |= 1 << i
        return mask, int(v[P])

    def _observe(self, payload):
        step, flags, n, action_at, arrays = self.layout.parse(payload)
        self._n = n
        present = np.zeros(self.slots, np.int8)
        present[:n] = 1
        obs = {"conn": arrays["conn"], "paths": arrays["paths"], "present": present, "report": arrays["report"]}
        if "edar_conn" in arrays:
            obs["edar_conn"], obs["edar_sub"] = arrays["edar_conn"], arrays["edar_sub"]
        rep = arrays["report"]
        info = {"step": step, "time_s": float(arrays["conn"][0]), "action_time_s": action_at,
                "reports": int(rep[0]), "vg": float(rep[7]), "vw": float(rep[8]), "vo": float(rep[9])}
        terminated, truncated = bool(flags & TERMINATED), bool(flags & TRUNCATED)
        if terminated or truncated:
            self._running = False
            info["result"] = json.loads(self._proc.expect("J"))
        if callable(self.reward_mode):
            reward = float(self.reward_mode(obs, info))
        elif self.reward_mode == "goodput":
            reward = float(rep[7])
        else:
            reward = float(rep[10])
        return obs, reward, terminated, truncated, info
