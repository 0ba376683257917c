"""MpqVectorEnv: N mpq-gym processes stepped together (Gymnasium's vector
API, autoreset mode NEXT_STEP). Each step sends every process its action
first and then collects the answers, so the N emulators run at once, one per
core."""

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space, concatenate, create_empty_array

from .env import MpqEnv


class MpqVectorEnv(VectorEnv):
    """num_envs copies of MpqEnv(scenario, **kwargs), one process each.

    reset(seed=s) seeds copy i with s + i (or seed[i] for a list). A copy whose
    episode ended is reset by the next step() (its action is ignored), which
    returns the new episode's first observation with reward 0: Gymnasium's
    NEXT_STEP autoreset."""

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(self, scenario="hetero-2path", num_envs=2, **kwargs):
        self.envs = []
        try:
            for _ in range(num_envs):
                self.envs.append(MpqEnv(scenario, **kwargs))
        except BaseException:
            for e in self.envs:
                e.close()
            raise
        self.num_envs = num_envs
        self.single_observation_space = self.envs[0].observation_space
        self.single_action_space = self.envs[0].action_space
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self._autoreset = np.zeros(num_envs, bool)
        self._rngs = [None] * num_envs

    def reset(self, *, seed=None, options=None):
        if seed is None:
            seeds = [None] * self.num_envs
        elif isinstance(seed, int):
            seeds = [seed + i for i in range(self.num_envs)]
        else:
            seeds = list(seed)
        for e, s in zip(self.envs, seeds):
            e._begin_reset(s, options)
        obs, infos = [], {}
        for i, e in enumerate(self.envs):
            o, info = e._end_reset()
            obs.append(o)
            infos = self._add_info(infos, info, i)
        self._autoreset[:] = False
        return self._batch(obs), infos

    def step(self, actions):
        for i, e in enumerate(self.envs):
            if self._autoreset[i]:
                e._begin_reset(None)
            else:
                e._begin_step(actions[i])
        obs, rewards = [], np.zeros(self.num_envs)
        term, trunc = np.zeros(self.num_envs, bool), np.zeros(self.num_envs, bool)
        infos = {}
        for i, e in enumerate(self.envs):
            if self._autoreset[i]:
                o, info = e._end_reset()
            else:
                o, rewards[i], term[i], trunc[i], info = e._end_step()
            obs.append(o)
            infos = self._add_info(infos, info, i)
        self._autoreset = term | trunc
        return self._batch(obs), rewards, term, trunc, infos

    def close_extras(self, **kwargs):
        for e in self.envs:
            e.close()

    def _batch(self, obs):
        out = create_empty_array(self.single_observation_space, self.num_envs)
        return concatenate(self.single_observation_space, obs, out)
