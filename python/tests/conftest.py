"""Shared fixtures. CTest passes the test libraries' paths in the environment
(python/tests/CMakeLists.txt); run by hand, the release build's are used."""

import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = ROOT / "build" / "release"


def _path(var: str, default: pathlib.Path) -> str:
    p = os.environ.get(var) or str(default)
    if not os.path.exists(p):
        pytest.fail(f"{var}: {p} does not exist (build the release preset first)")
    return p


@pytest.fixture(scope="session")
def orch_vector() -> str:
    return _path("TASKRING_PY_ORCH_VECTOR", BUILD / "python/tests/libtaskring_py_orch_vector.so")


@pytest.fixture(scope="session")
def orch_one_task() -> str:
    return _path("TASKRING_PY_ORCH_ONE_TASK", BUILD / "python/tests/libtaskring_py_orch_one_task.so")


def pytest_sessionstart(session):
    """TASKRING_PY_EXPECT_INSTALLED=<dir>: the suite must test the package
    installed under <dir> (the wheel test, tests/install), never a build
    tree's copy that a stray PYTHONPATH or the working directory put first."""
    want = os.environ.get("TASKRING_PY_EXPECT_INSTALLED")
    if not want:
        return
    import taskring

    where = os.path.realpath(taskring.__file__)
    if not where.startswith(os.path.realpath(want) + os.sep):
        raise pytest.UsageError(f"taskring was imported from {where}, not from the installed package under {want}")


@pytest.fixture(scope="session")
def kernel_so() -> str:
    return _path("TASKRING_PY_KERNEL_SO", BUILD / "python/tests/libtaskring_py_kernel_so.so")


@pytest.fixture(scope="session")
def taskring_cli() -> str:
    return _path("TASKRING_CLI", BUILD / "tools/taskring/taskring")


@pytest.fixture(params=["tmr", "hbg"])
def worker(request):
    import taskring

    with taskring.ChipWorker(runtime=request.param) as w:
        yield w


@pytest.fixture
def tmr_worker():
    import taskring

    with taskring.ChipWorker(runtime="tmr") as w:
        yield w
