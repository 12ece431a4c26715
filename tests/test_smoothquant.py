"""SmoothQuant: the smoothed fp32 graph computes what the original does, and quantises with less error."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from kb import fastembed, smoothquant  # noqa: E402


def _graph(path, w1: np.ndarray, w2: np.ndarray) -> None:
    """x (batch, seq, 16) -> MatMul w1 -> Gelu -> MatMul w2 -> y: a feed-forward block in miniature."""
    from onnx import TensorProto, helper, numpy_helper

    g = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w1"], ["h"]), helper.make_node("Gelu", ["h"], ["a"], domain="com.microsoft"),
         helper.make_node("MatMul", ["a", "w2"], ["y"])],
        "ffn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["b", "s", 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["b", "s", 4])],
        [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(w2, "w2")])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    onnx.save(model, str(path))


def _run(path, x: np.ndarray) -> np.ndarray:
    so = ort.SessionOptions()
    so.log_severity_level = 3
    return ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]


def test_smoothing_keeps_the_function_and_cuts_the_int8_error(tmp_path):
    rng = np.random.default_rng(0)
    w1 = rng.normal(0, 0.3, (16, 32)).astype(np.float32)
    w2 = rng.normal(0, 0.3, (32, 4)).astype(np.float32)
    w1[:, 3] *= 40  # one hidden channel far larger than the others: the outlier dynamic int8 suffers from

    def inputs(n: int, seed: int) -> list[np.ndarray]:
        r = np.random.default_rng(seed)
        xs = [r.normal(0, 1, (1, 12, 16)).astype(np.float32) for _ in range(n)]
        for x in xs:
            x[..., 5] *= 30  # an outlier input channel too
        return xs

    src, smoothed = tmp_path / "ffn.onnx", tmp_path / "ffn.smooth.onnx"
    _graph(src, w1, w2)
    assert smoothquant.smooth(src, smoothed, ({"x": x} for x in inputs(20, 1))) == 2
    onnx.checker.check_model(onnx.load(str(smoothed)))
    assert sum(n.op_type == "Mul" for n in onnx.load(str(smoothed)).graph.node) == 2

    test = np.concatenate(inputs(10, 2))
    exact = _run(src, test)
    assert np.allclose(_run(smoothed, test), exact, rtol=1e-4, atol=1e-4)  # same function in fp32

    plain_q, smooth_q = tmp_path / "plain.int8.onnx", tmp_path / "smooth.int8.onnx"
    fastembed._quantize(src, plain_q)
    fastembed._quantize(src, smooth_q, ({"x": x} for x in inputs(20, 1)))
    err_plain = np.abs(_run(plain_q, test) - exact).mean()
    err_smooth = np.abs(_run(smooth_q, test) - exact).mean()
    assert err_smooth < 0.5 * err_plain, (err_smooth, err_plain)
    assert not (tmp_path / "smooth.int8.onnx.smooth").exists()  # the intermediate graph is removed


def test_no_calibration_text_is_an_error(tmp_path):
    rng = np.random.default_rng(0)
    _graph(tmp_path / "ffn.onnx", rng.normal(size=(16, 32)).astype(np.float32),
           rng.normal(size=(32, 4)).astype(np.float32))
    with pytest.raises(ValueError, match="calibration"):
        smoothquant.smooth(tmp_path / "ffn.onnx", tmp_path / "out.onnx", iter(()))


def test_calibration_texts_are_shipped_with_the_package():
    from pathlib import Path

    path = Path(fastembed.__file__).with_name("models") / fastembed.CALIBRATION
    texts = [t for t in path.read_text(encoding="utf-8").splitlines() if t.strip() and not t.startswith("#")]
    assert len(texts) >= 100 and all(len(t) > 20 for t in texts)
