"""Build hook for pyproject.toml: the _taskring extension is built by CMake.

setuptools (Debian's, with --no-build-isolation) packs python/taskring and
one extension, taskring._taskring, which this build_ext makes by running
CMake on this repository and building the target `taskring_python` (the
extension and the copies of the pure-Python files) instead of compiling
sources itself. Where:
  TASKRING_CMAKE_BUILD_DIR=<dir>  an existing configured build tree (for
                                  example build/release) is built and used;
  otherwise                       build/pip-<python tag> is configured
                                  (Release, no benchmarks) for the running
                                  interpreter and built; it is kept, so a
                                  second `pip install .` is incremental.
TASKRING_CMAKE_ARGS adds configure arguments; CMAKE_BUILD_PARALLEL_LEVEL
sets the jobs as usual. docs/python.md says why this backend.
"""

import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent


def project_version() -> str:
    """The version from the top-level CMakeLists.txt, so there is one."""
    text = (ROOT / "CMakeLists.txt").read_text()
    m = re.search(r"project\(taskring\s+VERSION\s+([0-9.]+)", text)
    if not m:
        raise RuntimeError("setup.py: no `project(taskring VERSION x.y.z` in CMakeLists.txt")
    return m.group(1)


def base_python() -> str:
    """The interpreter behind a venv: same ABI, and it outlives the venv that
    the build tree was first configured from."""
    return os.path.realpath(getattr(sys, "_base_executable", None) or sys.executable)


def run(cmd, **kw):
    print("setup.py:", " ".join(shlex.quote(str(c)) for c in cmd), flush=True)
    subprocess.run([str(c) for c in cmd], check=True, **kw)


class CMakeBuildExt(build_ext):
    def build_extension(self, ext):
        build_dir = os.environ.get("TASKRING_CMAKE_BUILD_DIR")
        if build_dir:
            build_dir = pathlib.Path(build_dir).resolve()
            if not (build_dir / "CMakeCache.txt").exists():
                raise RuntimeError(f"TASKRING_CMAKE_BUILD_DIR={build_dir}: not a configured CMake build tree")
        else:
            # Two levels below the root, like build/release: ccache (base_dir)
            # then sees the same relative paths and reuses its objects.
            tag = sysconfig.get_config_var("SOABI") or "py"
            build_dir = ROOT / "build" / f"pip-{tag}"
            configure = ["cmake", "-S", ROOT, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release",
                         "-DTASKRING_BUILD_BENCH=OFF", f"-DTASKRING_PYTHON={base_python()}"]
            if shutil.which("ninja"):
                configure += ["-G", "Ninja"]
            configure += shlex.split(os.environ.get("TASKRING_CMAKE_ARGS", ""))
            if not (build_dir / "CMakeCache.txt").exists() or os.environ.get("TASKRING_CMAKE_ARGS"):
                run(configure)
        run(["cmake", "--build", build_dir, "--target", "taskring_python"])
        built = sorted((build_dir / "python" / "taskring").glob("_taskring*.so"))
        if len(built) != 1:
            raise RuntimeError(f"setup.py: expected one _taskring*.so under {build_dir}/python/taskring, found {built}")
        target = pathlib.Path(self.get_ext_fullpath(ext.name))
        if built[0].name != target.name:
            raise RuntimeError(f"setup.py: CMake built {built[0].name} for another interpreter than "
                               f"this one ({target.name}); set TASKRING_PYTHON in that build tree")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(built[0], target)


# setup.cfg points egg_info here; setuptools wants the folder to exist.
(ROOT / "build" / "pip").mkdir(parents=True, exist_ok=True)

setup(
    version=project_version(),
    ext_modules=[Extension("taskring._taskring", sources=[])],
    cmdclass={"build_ext": CMakeBuildExt},
)
