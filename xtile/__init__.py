"""One exact, fast, differentiable Tile for every array-API backend."""

from . import onnx, openvino
from ._tile import tile, tile_shape

__all__ = ["__version__", "onnx", "openvino", "tile", "tile_shape"]

__version__ = "0.1.0"
