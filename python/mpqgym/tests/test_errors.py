"""Bad actions, a dead subprocess, a timeout and a missing binary each raise
a clear exception, never hang."""

import os
import signal
import time

import numpy as np
import pytest

import mpqgym
import mpqgym.binary
from mpqgym import BinaryNotFound, EmulatorDied, EnvTimeout, InvalidAction


@pytest.fixture
def env():
    e = mpqgym.make("hetero-2path", max_bytes=1 << 20)
    e.reset(seed=1)
    yield e
    e.close()


@pytest.mark.parametrize("action", [np.array([1, 1]), np.array([1, 1, 2]), np.array([0.5, 1, 0]), [[1, 1, 0]], "x"])
def test_bad_action_is_refused_and_env_goes_on(env, action):
    with pytest.raises(InvalidAction):
        env.step(action)
    _, _, _, _, info = env.step(np.array([1, 1, 0]))
    assert info["step"] == 1


def test_bad_action_refused_by_the_emulator(env):
    env._proc.send_step(0b100, 0)  # slot 2 of 2, past the Python-side check
    with pytest.raises(InvalidAction, match="slot"):
        env._proc.expect("O")
    env._proc.send_step(0b11, 3)
    with pytest.raises(InvalidAction, match="copy flag"):
        env._proc.expect("O")
    _, _, _, _, info = env.step(np.array([1, 1, 0]))  # the same boundary, answered well
    assert info["step"] == 1


def test_dead_subprocess(env):
    os.kill(env._proc.proc.pid, signal.SIGKILL)
    t = time.monotonic()
    with pytest.raises(EmulatorDied, match="exit status -9"):
        env.step(np.array([1, 1, 0]))
    assert time.monotonic() - t < 5


def test_timeout_kills_and_raises():
    env = mpqgym.make("hetero-2path", step_timeout=0.5, max_bytes=1 << 20)
    try:
        env.reset(seed=1)
        os.kill(env._proc.proc.pid, signal.SIGSTOP)  # a hung emulator
        t = time.monotonic()
        with pytest.raises(EnvTimeout, match="did not answer within 0.5 s"):
            env.step(np.array([1, 1, 0]))
        assert 0.4 < time.monotonic() - t < 3
        assert env._proc.proc.poll() is not None  # killed
    finally:
        env.close()


def test_missing_binary(monkeypatch):
    monkeypatch.setenv("MPQ_GYM_BIN", "/nonexistent/mpq-gym")
    with pytest.raises(BinaryNotFound, match="MPQ_GYM_BIN"):
        mpqgym.make("hetero-2path")
    monkeypatch.delenv("MPQ_GYM_BIN")
    monkeypatch.setattr(mpqgym.binary, "find_checkout", lambda start=None: None)
    monkeypatch.setattr(mpqgym.binary.shutil, "which", lambda name: None)
    with pytest.raises(BinaryNotFound, match="no Go toolchain.*Install Go 1.26"):
        mpqgym.make("hetero-2path")
