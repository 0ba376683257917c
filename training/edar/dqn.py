"""The DQN update of EdAR (Algorithm 1, lines 9-21), shared by the offline
trainer (train.py) and the online learner (online_gym.py): minibatch drawn
uniformly from a replay array, y = r + γ·max_a' Q'(s', a') (y = r when
done), squared TD loss, Adam, soft target update θ' ← (1−τ)θ' + τθ."""

import jax
import jax.numpy as jnp
import optax

import edar_model as m


def make_update(lr, gamma, tau, batch, rand_prev=False):
    """(opt, update). update(p, tgt, opt_state, key, data, pool, count) draws
    `batch` indexes uniformly from pool[:count] (count may change between
    calls without recompiling) and returns (p, tgt, opt_state, loss, mean
    Q(s,a)). With rand_prev, the a_{t-1} input of s and s' is replaced by a
    random bit (offline data from fixed-policy flows; README)."""
    opt = optax.adam(lr)

    def loss_fn(p, tgt, data, idx, key):
        s_conn, s2_conn = data["s_conn"][idx], data["s2_conn"][idx]
        if rand_prev:
            k1, k2 = jax.random.split(key)
            s_conn = s_conn.at[:, 0].set(jax.random.bernoulli(k1, 0.5, (idx.shape[0],)).astype(jnp.float32))
            s2_conn = s2_conn.at[:, 0].set(jax.random.bernoulli(k2, 0.5, (idx.shape[0],)).astype(jnp.float32))
        q = m.q_values(p, s_conn, data["s_sub"][idx], data["n"][idx])
        q_sa = jnp.take_along_axis(q, data["a"][idx][:, None].astype(jnp.int32), axis=1)[:, 0]
        n2 = jnp.maximum(data["n2"][idx], 1)
        q2 = m.q_values(tgt, s2_conn, data["s2_sub"][idx], n2)
        done = data["done"][idx].astype(jnp.float32)
        # Algorithm 1: y_t = r_t if the flow ends after t, else r_t + gamma max_a' Q'(s', a')
        y = data["r"][idx] + gamma * (1 - done) * jax.lax.stop_gradient(q2.max(axis=1))
        return jnp.mean((y - q_sa) ** 2), q_sa.mean()

    @jax.jit
    def update(p, tgt, s, key, data, pool, count):
        key, kr = jax.random.split(key)
        idx = pool[jax.random.randint(key, (batch,), 0, count)]  # uniform replay sample
        (loss, qm), g = jax.value_and_grad(loss_fn, has_aux=True)(p, tgt, data, idx, kr)
        upd, s = opt.update(g, s, p)
        p = optax.apply_updates(p, upd)
        tgt = jax.tree_util.tree_map(lambda t, q: (1 - tau) * t + tau * q, tgt, p)  # theta' = (1-tau) theta' + tau theta
        return p, tgt, s, loss, qm

    return opt, update
