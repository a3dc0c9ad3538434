"""Where things are: the source tree, the build directory, the `wasd` binary.

ctest passes WASD_BIN, WASD_SOURCE_DIR and WASD_BUILD_DIR (tests/CMakeLists.txt);
without them the defaults are this checkout and its build/ directory.
"""
import os

SOURCE_DIR = os.environ.get("WASD_SOURCE_DIR") or os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD_DIR = os.environ.get("WASD_BUILD_DIR") or os.path.join(SOURCE_DIR, "build")
WASD = os.environ.get("WASD_BIN") or os.path.join(BUILD_DIR, "wasd")
TESTS_DIR = os.path.join(SOURCE_DIR, "tests")
TESTDATA = os.path.join(TESTS_DIR, "testdata")


def testdata(*parts):
    """Path of a file under tests/testdata."""
    return os.path.join(TESTDATA, *parts)


def read_testdata(*parts):
    with open(testdata(*parts), "rb") as f:
        return f.read()
