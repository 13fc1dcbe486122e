"""Type aliases shared by the package."""

from collections.abc import Sequence
from types import ModuleType
from typing import Any, TypeAlias

__all__ = ["Array", "ArrayNamespace", "Repeats", "ShapeLike"]

# Arrays of every namespace are accepted; no common static type describes them.
Array: TypeAlias = Any
ArrayNamespace: TypeAlias = ModuleType
Repeats: TypeAlias = "int | Sequence[int] | Array"
ShapeLike: TypeAlias = Sequence[int | None]
