"""The public names of API.md, and `xtile.threads` (the thread control), and nothing else."""

import xtile


def test_all() -> None:
    assert xtile.__all__ == sorted(xtile.__all__)
    names = {"__version__", "onnx", "openvino", "threads", "tile", "tile_shape"}
    assert set(xtile.__all__) == names
    assert xtile.onnx.__all__ == ["tile", "tile_shape", "tile_v1"]
    assert xtile.openvino.__all__ == ["tile"]
    for name in xtile.__all__:
        assert hasattr(xtile, name)
