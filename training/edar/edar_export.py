"""Hand-written ONNX export of the EdAR Q-network (onnx.helper), and the
parity gate against the JAX forward pass.

Graph (opset 17, IR version 8, which onnxruntime 1.24 accepts):
  inputs  conn [1,3] float, sub [subflows,6,6] float (subflows is dynamic)
  Transpose(sub, [1,0,2])            -> [6, n, 6]        time-major
  LSTM(lstm1_W, lstm1_R, lstm1_B)    -> Y [6, 1, n, 60]  six packed LSTM1s
  Slice(Y, 4:6 on axis 0)            -> [2, 1, n, 60]    last two hidden states
  Transpose([2,1,0,3]) + Reshape     -> [n, 1, 120]      per subflow h_{T-1}|h_T
  LSTM(lstm2_W, lstm2_R, lstm2_B)    -> Y_h [1, 1, 60]   over the subflows
  Reshape [1,60]; Concat(conn, .)    -> [1, 63]
  Gemm fc1 + Relu, Gemm fc2 + Relu, Gemm out -> q [1,2]
Initializer names are the contract with pkg/model/gonet, which reads them.
"""

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import edar_data
import edar_model as m

GRAPH_ID = "edar-qnet-v1"
OPSET = 17
IR_VERSION = 8


def build(params, metadata=None):
    p = {k: np.asarray(v, np.float32) for k, v in params.items()}
    p["lstm1_W"] = p["lstm1_W"] * np.asarray(m.MASK_W1)
    p["lstm1_R"] = p["lstm1_R"] * np.asarray(m.MASK_R1)

    def init(name, a, dtype=np.float32):
        return numpy_helper.from_array(np.ascontiguousarray(a, dtype), name)

    inits = [
        init("lstm1_W", p["lstm1_W"][None]),
        init("lstm1_R", p["lstm1_R"][None]),
        init("lstm1_B", np.concatenate([p["lstm1_b"], np.zeros_like(p["lstm1_b"])])[None]),
        init("lstm2_W", p["lstm2_W"][None]),
        init("lstm2_R", p["lstm2_R"][None]),
        init("lstm2_B", np.concatenate([p["lstm2_b"], np.zeros_like(p["lstm2_b"])])[None]),
        init("fc1_W", p["fc1_W"]), init("fc1_b", p["fc1_b"]),
        init("fc2_W", p["fc2_W"]), init("fc2_b", p["fc2_b"]),
        init("out_W", p["out_W"]), init("out_b", p["out_b"]),
        init("slice_starts", [m.T - 2], np.int64), init("slice_ends", [m.T], np.int64),
        init("slice_axes", [0], np.int64),
        init("shape_x2", [-1, 1, 2 * m.HP], np.int64), init("shape_h2", [1, m.H2], np.int64),
    ]
    N = helper.make_node
    nodes = [
        N("Transpose", ["sub"], ["x1"], perm=[1, 0, 2]),
        N("LSTM", ["x1", "lstm1_W", "lstm1_R", "lstm1_B"], ["y1"], hidden_size=m.HP),
        N("Slice", ["y1", "slice_starts", "slice_ends", "slice_axes"], ["y1_last2"]),
        N("Transpose", ["y1_last2"], ["y1_t"], perm=[2, 1, 0, 3]),
        N("Reshape", ["y1_t", "shape_x2"], ["x2"]),
        N("LSTM", ["x2", "lstm2_W", "lstm2_R", "lstm2_B"], ["", "h2"], hidden_size=m.H2),
        N("Reshape", ["h2", "shape_h2"], ["h2f"]),
        N("Concat", ["conn", "h2f"], ["z0"], axis=1),
        N("Gemm", ["z0", "fc1_W", "fc1_b"], ["z1"]), N("Relu", ["z1"], ["a1"]),
        N("Gemm", ["a1", "fc2_W", "fc2_b"], ["z2"]), N("Relu", ["z2"], ["a2"]),
        N("Gemm", ["a2", "out_W", "out_b"], ["q"]),
    ]
    graph = helper.make_graph(
        nodes, "edar_qnet",
        [helper.make_tensor_value_info("conn", TensorProto.FLOAT, [1, m.C]),
         helper.make_tensor_value_info("sub", TensorProto.FLOAT, ["subflows", m.T, m.F])],
        [helper.make_tensor_value_info("q", TensorProto.FLOAT, [1, 2])],
        initializer=inits,
    )
    model = helper.make_model(graph, producer_name="mpqsched-edar-train",
                              opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = IR_VERSION
    meta = {"edar.graph": GRAPH_ID, "edar.format_version": str(edar_data.VERSION)}
    meta.update(metadata or {})
    helper.set_model_props(model, meta)
    onnx.checker.check_model(model)
    return model


def parity_error(q, ref):
    """The error parity checks: |q - ref|, divided by |ref| where that is
    above 1. float32 rounding grows with the Q-values' magnitude, about
    r / (1 - γ): a model trained with γ = 0.9 has Q-values about four times
    those of the paper's 0.6 (5-35 against 1.2-11 on the same held-out
    states), and one adapted online (30 Nov) differed from JAX by 1.14e-5 in
    absolute terms, a relative error of at most 2.3e-6."""
    q, ref = np.asarray(q, np.float64), np.asarray(ref, np.float64)
    return float((np.abs(q - ref) / np.maximum(1.0, np.abs(ref))).max())


def parity(model_bytes, params, conn, sub, n, tol=1e-5):
    """Max |ORT - JAX| over held-out states, each run in ORT with its own
    subflow count (the dynamic axis). Raises if parity_error (relative
    where |Q| > 1) exceeds tol."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(model_bytes, so, providers=["CPUExecutionProvider"])
    ref = np.asarray(m.q_values(params, conn, sub, n))
    worst, worst_rel = 0.0, 0.0
    for i in range(len(n)):
        k = int(n[i])
        q = sess.run(["q"], {"conn": conn[i:i + 1], "sub": np.ascontiguousarray(sub[i, :k])})[0]
        worst = max(worst, float(np.abs(q[0] - ref[i]).max()))
        worst_rel = max(worst_rel, parity_error(q[0], ref[i]))
    if not worst_rel <= tol:
        raise RuntimeError(f"ONNX/JAX parity {worst:.3g} ({worst_rel:.3g} relative to |Q| above 1) exceeds {tol:g}: "
                           "export refused")
    return worst
