"""One exact, fast, differentiable Tile for every array-API backend."""

from . import onnx, openvino
from ._threads import threads
from ._tile import tile, tile_shape

__all__ = ["__version__", "onnx", "openvino", "threads", "tile", "tile_shape"]

__version__ = "0.1.0"
