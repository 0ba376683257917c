"""Vectorised environments: N processes through Gymnasium's vector API."""

import gymnasium as gym
import numpy as np

import mpqgym


def test_vector_env_autoreset():
    envs = mpqgym.make_vec("hetero-2path", num_envs=3, max_bytes=512 << 10)
    try:
        obs, infos = envs.reset(seed=10)
        assert obs["paths"].shape == (3, 2, 20) and list(infos["seed"]) == [10, 11, 12]
        assert envs.observation_space.contains(obs)
        acts = np.ones((3, 3), np.int8)
        acts[:, 2] = 0
        done_at = [None] * 3
        for k in range(1, 400):
            obs, rew, term, trunc, infos = envs.step(acts)
            for i in range(3):
                if done_at[i] is None and (term[i] or trunc[i]):
                    done_at[i] = k
                    assert term[i] and infos["result"]["sha256_ok"][i]
                elif done_at[i] == k - 1:  # NEXT_STEP autoreset: the new episode's first observation
                    assert infos["step"][i] == 0 and rew[i] == 0 and not term[i]
            if all(d is not None and d < k for d in done_at):
                break
        assert all(done_at), done_at
    finally:
        envs.close()


def test_gymnasium_async_vector_env():
    envs = gym.vector.AsyncVectorEnv([lambda: mpqgym.make("hetero-2path", max_bytes=256 << 10)] * 2)
    try:
        obs, _ = envs.reset(seed=1)
        for _ in range(5):
            obs, rew, term, trunc, _ = envs.step(np.array([[1, 1, 0], [1, 0, 1]]))
        assert obs["conn"].shape == (2, 18)
    finally:
        envs.close()
