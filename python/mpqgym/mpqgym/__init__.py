"""mpqgym: Gymnasium environments over mpqsched's virtual-time emulator.

    import mpqgym
    env = mpqgym.make("edar-handoff", edar=True)      # a library scenario
    env = mpqgym.make(scenario_file="my.json")         # a scenario file
    envs = mpqgym.make_vec("hetero-2path", num_envs=4) # N processes

Registered ids: "mpqgym/Scenario-v0" (kwargs as MpqEnv), and, after
register_scenarios(), "mpqgym/<scenario>-v0" for every library scenario.
"""

import subprocess

import gymnasium as gym

from . import binary as _binary
from .env import MpqEnv
from .errors import (BinaryNotFound, EmulatorDied, EnvTimeout, EpisodeError, InvalidAction, MpqGymError,
                     ProtocolError, ScenarioError)
from .vector import MpqVectorEnv

__all__ = ["MpqEnv", "MpqVectorEnv", "make", "make_vec", "scenarios", "register_scenarios",
           "BinaryNotFound", "EmulatorDied", "EnvTimeout", "EpisodeError", "InvalidAction", "MpqGymError",
           "ProtocolError", "ScenarioError"]

# nondeterministic=True: a seed fixes the network and its loss, not the order
# of the emulator's goroutines, so a step's counters (packets_sent, say) can
# differ by a packet between two runs of one seed (docs/gym.md, "Episodes, seeds, scenarios").
# Gymnasium's checker then skips its bit-for-bit step comparison;
# test_seeds_reproduce_within_tolerance checks the tolerance we do claim.
gym.register(id="mpqgym/Scenario-v0", entry_point="mpqgym.env:MpqEnv", nondeterministic=True)


def make(scenario="hetero-2path", **kwargs):
    """An MpqEnv (no Gymnasium wrappers: gymnasium.make("mpqgym/Scenario-v0",
    scenario=...) adds the usual checkers)."""
    return MpqEnv(scenario, **kwargs)


def make_vec(scenario="hetero-2path", num_envs=2, **kwargs):
    """An MpqVectorEnv of num_envs mpq-gym processes."""
    return MpqVectorEnv(scenario, num_envs=num_envs, **kwargs)


def scenarios(binary=None):
    """The names of the library's scenarios (mpq-gym -list)."""
    out = subprocess.run([_binary.binary(binary), "-list"], capture_output=True, text=True, check=True, timeout=60)
    return out.stdout.split()


def register_scenarios(binary=None):
    """Registers "mpqgym/<scenario>-v0" for every library scenario; returns the ids."""
    ids = []
    for name in scenarios(binary):
        eid = f"mpqgym/{name}-v0"
        if eid not in gym.registry:
            gym.register(id=eid, entry_point="mpqgym.env:MpqEnv", kwargs={"scenario": name},
                         nondeterministic=True)
        ids.append(eid)
    return ids
