"""The worked examples of the ONNX Tile and OpenVINO Tile-1 specifications, verbatim."""

__all__ = ["SPEC_EXAMPLES", "SpecExample"]

from typing import NamedTuple


class SpecExample(NamedTuple):
    """An input (nested list, or a shape to fill with 1, 2, ...), repeats and the output."""

    name: str
    data: list[object] | tuple[int, ...]
    repeats: tuple[int, ...]
    expected: list[object] | tuple[int, ...]  # values, or the output shape


SPEC_EXAMPLES = [
    # ONNX Tile-6/13 summary: A = [[1, 2], [3, 4]], B = [1, 2]
    SpecExample("onnx_summary", [[1, 2], [3, 4]], (1, 2), [[1, 2, 1, 2], [3, 4, 3, 4]]),
    # ONNX test_tile_precomputed
    SpecExample(
        "onnx_tile_precomputed",
        [[0.0, 1.0], [2.0, 3.0]],
        (2, 2),
        [[0, 1, 0, 1], [2, 3, 2, 3], [0, 1, 0, 1], [2, 3, 2, 3]],
    ),
    # OpenVINO Tile-1, short description: data promoted, then repeats promoted
    SpecExample("openvino_promote_data", (2, 3), (2, 2, 2), (2, 4, 6)),
    SpecExample("openvino_promote_repeats", (4, 2, 3), (2, 2), (4, 4, 6)),
    # OpenVINO Tile-1, examples 1 to 3
    SpecExample("openvino_example_1", (2, 3, 4), (1, 2, 3), (2, 6, 12)),
    SpecExample("openvino_example_2", (2, 3, 4), (5, 1, 2, 3), (5, 2, 6, 12)),
    SpecExample("openvino_example_3", (5, 2, 3, 4), (1, 2, 3), (5, 2, 6, 12)),
]
