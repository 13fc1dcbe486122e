"""
Count the distinct behaviours a test run checked, from its JUnit XML (``--junitxml``).

A behaviour is a passed test id, less the ids that ran the same code as another: a
backend's "standard" or "cached" implementation where it has no primitives beyond its
checks, or keeps no programs (``tests/conftest.py``'s `impls`). A test of subtests
counts its subtests, from the run's summary line (``N subtests passed``), given as the
second argument, in place of its own id. Usage:
``python .ci/behaviours.py run.xml [SUBTESTS]``.
"""

import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository's tests

from tests.conftest import impls
from xtile._testing import Backend

# the implementations that run different code, per backend (test_tile's, with "cached")
IMPLS = {b.value: set(impls(b, "tests.test_tile")) for b in Backend}
# the tests whose cases are subtests
SUBTESTED = {"test_long_outputs", "test_word_runs", "test_arrays_of_every_backend"}


def main(path: str, subtests: int = 0) -> None:
    """Print the passed ids, the ids of the same code, and the distinct behaviours."""
    passed = same = parents = 0
    for case in ET.parse(path).iter("testcase"):
        if any(case.find(tag) is not None for tag in ("skipped", "failure", "error")):
            continue
        name = case.get("name", "")
        if name.startswith("hypothesis-statistics"):
            continue
        passed += 1
        tokens = re.search(r"\[(.*)\]", name)
        parts = tokens.group(1).split("-") if tokens else []
        library = next((p for p in parts if p in IMPLS), None)
        impl = next((p for p in parts if p in {"fast", "cached", "standard"}), None)
        if library and impl and impl not in IMPLS[library]:
            same += 1
            continue
        parents += subtests > 0 and re.sub(r"\[.*", "", name) in SUBTESTED
    print(f"passed ids {passed}, of the same code as another {same}, subtests {subtests}")
    print(f"distinct behaviours {passed - same - parents + subtests}")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 0)
