"""
`xtile.onnx.tile` against onnxruntime's own Tile node, on the realistic workload.

Each call site of `xtile._cli._realworld.SITES` (but bfloat16's, which NumPy lacks)
becomes an ONNX Tile of NumPy arrays: the input
promoted to the repeats' rank (ONNX Tile does not broadcast), the repeats an int64
constant of the model, as an exporter writes them. Per site, timed in turns
(`xtile._cli._bench.best_times`): one `InferenceSession.run` of that one-node model
(onnxruntime's intra-op threads: ``--threads``) and `xtile.onnx.tile` with the repeats
as the same int64 array. Prints each site's ratio (onnxruntime's time / xtile's: above
1 xtile is faster) and their geomean and minimum. Usage::

    python benchmarks/onnx_runtime.py [--repeat 5] [--threads 1]
"""

import argparse
import math

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

import xtile
from xtile._cli import _bench, _realworld


def _session(x: np.ndarray, reps: np.ndarray, threads: int) -> ort.InferenceSession:
    """A model of one Tile node whose repeats are a constant, for inputs like `x`."""
    elem = helper.np_dtype_to_tensor_dtype(x.dtype)
    out_shape = [d * r for d, r in zip(x.shape, reps.tolist(), strict=True)]
    graph = helper.make_graph(
        [helper.make_node("Tile", ["x", "repeats"], ["y"])],
        "tile",
        [helper.make_tensor_value_info("x", elem, list(x.shape))],
        [helper.make_tensor_value_info("y", elem, out_shape)],
        [helper.make_tensor("repeats", TensorProto.INT64, [len(reps)], reps.tolist())],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = threads
    return ort.InferenceSession(model.SerializeToString(), options, ["CPUExecutionProvider"])


def main() -> None:
    """Time every site both ways and print the ratios."""
    parser = argparse.ArgumentParser(description=__doc__.partition("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="samples per timing (5)")
    parser.add_argument("--threads", type=int, default=1, help="onnxruntime's threads (1)")
    args = parser.parse_args()
    ratios = []
    for site in (s for s in _realworld.SITES if s.dtype != "bfloat16"):
        x = _realworld.make(site, np.asarray)
        n = max(x.ndim, len(site.reps))
        x = np.ascontiguousarray(x.reshape((1,) * (n - x.ndim) + x.shape))  # as ORT is fed
        reps = np.asarray((1,) * (n - len(site.reps)) + site.reps, dtype=np.int64)
        if x.ndim == 0:
            continue  # no ONNX Tile of a 0-D input
        session = _session(x, reps, args.threads)
        feed = {"x": x}
        assert np.array_equal(session.run(None, feed)[0], xtile.onnx.tile(x, reps))
        runtime_s, xtile_s = _bench.best_times(
            [lambda s=session, f=feed: s.run(None, f), lambda x=x, r=reps: xtile.onnx.tile(x, r)],
            _bench._same,
            args.repeat,
        )
        ratios.append(runtime_s / xtile_s)
        print(f"{runtime_s / xtile_s:6.2f}  {site.library} {site.shape}x{site.reps} {site.dtype}")
    geomean = math.exp(sum(map(math.log, ratios)) / len(ratios))
    print(
        f"{len(ratios)} sites: onnxruntime / xtile.onnx.tile geomean {geomean:.2f}, "
        f"min {min(ratios):.2f}"
    )


if __name__ == "__main__":
    main()
