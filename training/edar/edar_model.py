"""The EdAR Q-network (paper §IV.C) in JAX.

Representation network: six LSTM1s (10 units each), one per subflow feature
series, run over the k+1 = 6 steps of history of every subflow; each keeps
its last two hidden states (6 x 2 x 10 = 120 values per subflow). LSTM2 (60
units) runs over the subflows; its last hidden state joins the connection
state M_t (3 values) as the input of the core network 63 -> 128 -> 32 -> 2
with ReLU on the hidden layers. Output: Q(s, normal), Q(s, redundant).

The six LSTM1s are kept packed block-diagonally in the ONNX layout, so export
is a copy: gate order i, o, f, c; W [4H, I], R [4H, H]; rows g*60 + f*10 + u
(gate g, feature f, unit u). Masks keep the off-block weights at zero.
"""

import jax
import jax.numpy as jnp
import numpy as np

F = 6  # feature series per subflow
T = 6  # history steps (k + 1)
H1 = 10  # units per LSTM1
HP = F * H1  # packed LSTM1 width (60)
H2 = 60  # LSTM2 units
C = 3  # connection features
FC1, FC2, OUT = 128, 32, 2


def masks():
    rows = np.arange(4 * HP)
    feat = (rows % HP) // H1
    w = (np.arange(F)[None, :] == feat[:, None]).astype(np.float32)
    r = ((np.arange(HP)[None, :] // H1) == feat[:, None]).astype(np.float32)
    return jnp.asarray(w), jnp.asarray(r)


MASK_W1, MASK_R1 = masks()


def init(key):
    ks = jax.random.split(key, 8)

    def u(k, shape, bound):
        return jax.random.uniform(k, shape, jnp.float32, -bound, bound)

    b1, b2 = 1 / np.sqrt(H1), 1 / np.sqrt(H2)
    return {
        "lstm1_W": u(ks[0], (4 * HP, F), b1) * MASK_W1,
        "lstm1_R": u(ks[1], (4 * HP, HP), b1) * MASK_R1,
        "lstm1_b": jnp.zeros((4 * HP,), jnp.float32),
        "lstm2_W": u(ks[2], (4 * H2, 2 * HP), b2),
        "lstm2_R": u(ks[3], (4 * H2, H2), b2),
        "lstm2_b": jnp.zeros((4 * H2,), jnp.float32),
        "fc1_W": u(ks[4], (C + H2, FC1), np.sqrt(6 / (C + H2))),
        "fc1_b": jnp.zeros((FC1,), jnp.float32),
        "fc2_W": u(ks[5], (FC1, FC2), np.sqrt(6 / FC1)),
        "fc2_b": jnp.zeros((FC2,), jnp.float32),
        "out_W": u(ks[6], (FC2, OUT), np.sqrt(6 / FC2)),
        "out_b": jnp.zeros((OUT,), jnp.float32),
    }


def count_params(p):
    """Trainable parameters, the masked-out block entries excluded."""
    n = sum(int(v.size) for k, v in p.items() if k not in ("lstm1_W", "lstm1_R"))
    return n + int(MASK_W1.sum()) + int(MASK_R1.sum())


def _cell(W, R, b, h, c, x):
    """One ONNX-LSTM step, gates i, o, f, c."""
    g = x @ W.T + h @ R.T + b
    n = h.shape[-1]
    i = jax.nn.sigmoid(g[..., :n])
    o = jax.nn.sigmoid(g[..., n:2 * n])
    f = jax.nn.sigmoid(g[..., 2 * n:3 * n])
    cc = jnp.tanh(g[..., 3 * n:])
    c = f * c + i * cc
    return o * jnp.tanh(c), c


def q_values(p, conn, sub, n):
    """conn [B,3], sub [B,P,T,F] (subflow slots beyond n are padding), n [B]
    -> Q [B,2]. Padding never reaches LSTM2's state, so the result equals
    running LSTM2 over the first n subflows only."""
    B, P = sub.shape[0], sub.shape[1]
    W1, R1 = p["lstm1_W"] * MASK_W1, p["lstm1_R"] * MASK_R1
    x = jnp.transpose(sub.reshape(B * P, T, F), (1, 0, 2))  # [T, B*P, F]

    def step1(carry, xt):
        h, c = _cell(W1, R1, p["lstm1_b"], *carry, xt)
        return (h, c), h

    z = jnp.zeros((B * P, HP), jnp.float32)
    _, hs = jax.lax.scan(step1, (z, z), x)  # [T, B*P, 60]
    rep = jnp.concatenate([hs[T - 2], hs[T - 1]], axis=-1).reshape(B, P, 2 * HP)

    mask = (jnp.arange(P)[None, :] < n[:, None]).T  # [P, B]

    def step2(carry, inp):
        xt, m = inp
        h, c = _cell(p["lstm2_W"], p["lstm2_R"], p["lstm2_b"], *carry, xt)
        m = m[:, None]
        return (jnp.where(m, h, carry[0]), jnp.where(m, c, carry[1])), None

    z2 = jnp.zeros((B, H2), jnp.float32)
    (h2, _), _ = jax.lax.scan(step2, (z2, z2), (jnp.transpose(rep, (1, 0, 2)), mask))
    y = jnp.concatenate([conn, h2], axis=-1)
    y = jax.nn.relu(y @ p["fc1_W"] + p["fc1_b"])
    y = jax.nn.relu(y @ p["fc2_W"] + p["fc2_b"])
    return y @ p["out_W"] + p["out_b"]
