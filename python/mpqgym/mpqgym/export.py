"""Exporting a trained policy to ONNX for mpqsched's Go side (pkg/model/
gympolicy): `mpquic-bench run -schedulers learned -policy FILE` then runs it
as a scheduler, on onnxruntime or the pure-Go interpreter.

The contract (docs/gym.md): float32 inputs named after the observation keys
with a batch axis of 1; one output "logits"; metadata mpqgym.policy = "1",
mpqgym.slots, mpqgym.inputs, mpqgym.actions ("joint": 2^(P+1) logits, index
k = the MultiBinary action with bit i marking slot i and bit P asking for
copies; "modes": 2 logits, 0 = every path new data, 1 = every path copies).

export_mlp writes a multilayer perceptron with input normalisation, the
shape most small policies have; any other network works if it keeps the
contract (the pure-Go interpreter runs Gemm, MatMul, Add, Sub, Mul, Div,
Relu, LeakyRelu, Tanh, Sigmoid, Softmax, Clip, Reshape, Flatten, Concat and
Identity; onnxruntime anything). Needs the onnx package
(pip install 'mpqgym[export]').
"""

import numpy as np

KEYS = ("conn", "paths", "present", "report", "edar_conn", "edar_sub")
ACTIONS = ("joint", "modes")


def flatten(obs, inputs):
    """The observation keys `inputs`, flattened and concatenated as the
    exported graph does (float32; a batch of observations stays batched if
    every array has a leading batch axis of the same length)."""
    parts = []
    for k in inputs:
        a = np.asarray(obs[k], np.float32)
        parts.append(a.reshape(1, -1) if a.ndim == _rank(k) else a.reshape(a.shape[0], -1))
    return np.concatenate(parts, axis=1)


def _rank(key):
    return {"conn": 1, "paths": 2, "present": 1, "report": 1, "edar_conn": 1, "edar_sub": 3}[key]


def mlp_forward(x, layers, activation="relu", mean=None, std=None):
    """numpy forward pass of export_mlp's network on flattened inputs x [B, N]."""
    x = np.asarray(x, np.float32)
    if mean is not None:
        x = (x - np.asarray(mean, np.float32)) / np.asarray(std, np.float32)
    act = {"relu": lambda v: np.maximum(v, 0), "tanh": np.tanh}[activation]
    for i, (w, b) in enumerate(layers):
        x = x @ np.asarray(w, np.float32) + np.asarray(b, np.float32)
        if i < len(layers) - 1:
            x = act(x)
    return x


def action_of(logits, slots, actions="joint"):
    """The MultiBinary action (numpy int8 [slots + 1]) of the arg max."""
    k = int(np.argmax(logits))
    if actions == "modes":
        return np.array([1] * slots + [k], np.int8)
    return np.array([(k >> i) & 1 for i in range(slots + 1)], np.int8)


def index_of(action):
    """The joint index k of a MultiBinary action."""
    return int(sum(int(v) << i for i, v in enumerate(np.asarray(action).tolist())))


def export_mlp(path, layers, *, slots, inputs=("conn", "paths"), actions="joint", activation="relu",
               mean=None, std=None, metadata=None):
    """Writes the MLP `layers` ([(W [in, out], b [out]), ...], hidden layers
    with `activation`, "relu" or "tanh") reading the observation keys
    `inputs` (flattened and concatenated, then (x - mean) / std if given) to
    the ONNX file `path`. The last layer's width must be 2^(slots+1) for
    "joint" actions, 2 for "modes"."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    inputs = tuple(inputs)
    for k in inputs:
        if k not in KEYS:
            raise ValueError(f"unknown observation key {k!r} (one of {KEYS})")
    if actions not in ACTIONS:
        raise ValueError(f"actions must be one of {ACTIONS}")
    want = 2 ** (slots + 1) if actions == "joint" else 2
    if np.asarray(layers[-1][0]).shape[1] != want:
        raise ValueError(f"the last layer has {np.asarray(layers[-1][0]).shape[1]} outputs; {actions!r} actions "
                         f"over {slots} slots need {want}")
    shapes = {"conn": [18], "paths": [slots, 20], "present": [slots], "report": [11 + slots], "edar_conn": [3],
              "edar_sub": [slots, 6, 6]}
    nodes, inits, graph_in = [], [], []
    flat = []
    for k in inputs:
        graph_in.append(helper.make_tensor_value_info(k, TensorProto.FLOAT, [1] + shapes[k]))
        nodes.append(helper.make_node("Flatten", [k], [k + "_flat"], axis=1))
        flat.append(k + "_flat")
    x = "x"
    nodes.append(helper.make_node("Concat", flat, [x], axis=1) if len(flat) > 1 else
                 helper.make_node("Identity", flat, [x]))
    if mean is not None:
        inits += [numpy_helper.from_array(np.asarray(mean, np.float32).reshape(1, -1), "mean"),
                  numpy_helper.from_array(np.asarray(std, np.float32).reshape(1, -1), "std")]
        nodes += [helper.make_node("Sub", [x, "mean"], ["x_c"]), helper.make_node("Div", ["x_c", "std"], ["x_n"])]
        x = "x_n"
    for i, (w, b) in enumerate(layers):
        inits += [numpy_helper.from_array(np.asarray(w, np.float32), f"w{i}"),
                  numpy_helper.from_array(np.asarray(b, np.float32), f"b{i}")]
        last = i == len(layers) - 1
        out = "logits" if last else f"h{i}"
        nodes.append(helper.make_node("Gemm", [x, f"w{i}", f"b{i}"], [out if last else out + "_pre"]))
        if not last:
            nodes.append(helper.make_node({"relu": "Relu", "tanh": "Tanh"}[activation], [out + "_pre"], [out]))
        x = out
    graph = helper.make_graph(nodes, "mpqgym_policy", graph_in,
                              [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, want])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="mpqgym")
    model.ir_version = 8  # onnxruntime 1.24 refuses onnx 1.19's default IR
    meta = {"mpqgym.policy": "1", "mpqgym.slots": str(slots), "mpqgym.inputs": ",".join(inputs),
            "mpqgym.actions": actions}
    meta.update(metadata or {})
    for k, v in meta.items():
        model.metadata_props.add(key=k, value=str(v))
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return path
