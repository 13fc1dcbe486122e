"""The public names of API.md, and nothing else, are exported."""

import xtile


def test_all() -> None:
    assert xtile.__all__ == sorted(xtile.__all__)
    assert set(xtile.__all__) == {"__version__", "onnx", "openvino", "tile", "tile_shape"}
    assert xtile.onnx.__all__ == ["tile", "tile_shape", "tile_v1"]
    assert xtile.openvino.__all__ == ["tile"]
    for name in xtile.__all__:
        assert hasattr(xtile, name)
