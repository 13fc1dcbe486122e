"""The public names of API.md, and nothing else, are exported."""

import xtile


def test_all() -> None:
    assert xtile.__all__ == sorted(xtile.__all__)
    assert set(xtile.__all__) == {"__version__", "tile", "tile_shape"}
    for name in xtile.__all__:
        assert hasattr(xtile, name)
