"""The PEP 517 build backend of `pip install .`: configures and builds the extension with CMake
and zips the package into a wheel with the standard library, so that no build dependency comes
from a package index (pyproject.toml names none).

The build goes to build/wheel-<python tag> in the tree (kept, so a second install rebuilds only
what changed). `--config-settings build-dir=DIR` takes an existing build folder instead (the
tests install from build/ without building the engines again).
"""

import base64
import hashlib
import os
import pathlib
import re
import subprocess
import sys
import sysconfig
import zipfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
NAME = "qscheme"


def _version():
    text = (ROOT / "CMakeLists.txt").read_text()
    return re.search(r"project\(qscheme VERSION ([0-9.]+)", text).group(1)


def _tag():
    impl = f"cp{sys.version_info.major}{sys.version_info.minor}"
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return f"{impl}-{impl}-{platform}"


def _build(config_settings):
    given = (config_settings or {}).get("build-dir")
    if given:
        build = pathlib.Path(given)
        if not build.is_absolute():
            build = ROOT / build
    else:
        build = ROOT / "build" / f"wheel-{_tag()}"
        subprocess.run(["cmake", "-S", str(ROOT), "-B", str(build), "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                        f"-DPython_EXECUTABLE={sys.executable}", "-DQSCHEME_TESTS=OFF", "-DQSCHEME_PROPS=OFF",
                        "-DQSCHEME_FUZZERS=OFF", "-DQSCHEME_TOOLS=OFF", "-DQSCHEME_BENCH=OFF", "-DQSCHEME_KIT=OFF",
                        "-DQSCHEME_INSTALL=OFF", "-DQSCHEME_PYTHON=ON"], check=True, stdout=sys.stderr)
    jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 1))
    subprocess.run(["cmake", "--build", str(build), "--target", "_qscheme", "-j", jobs], check=True, stdout=sys.stderr)
    return build / "python" / NAME


def _metadata():
    return (f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {_version()}\n"
            "Summary: Exact, fast tensor quantization schemes (Burn's scheme model) and an oracle for your kernels\n"
            "Requires-Python: >=3.9\nRequires-Dist: numpy\n")


def _record_line(path, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    package = _build(config_settings)
    dist_info = f"{NAME}-{_version()}.dist-info"
    files = {}
    for path in sorted(package.iterdir()):
        if path.suffix in (".py", ".so"):
            files[f"{NAME}/{path.name}"] = path.read_bytes()
    files[f"{dist_info}/METADATA"] = _metadata().encode()
    files[f"{dist_info}/WHEEL"] = (f"Wheel-Version: 1.0\nGenerator: qscheme_build\nRoot-Is-Purelib: false\n"
                                   f"Tag: {_tag()}\n").encode()
    record = [_record_line(p, d) for p, d in files.items()] + [f"{dist_info}/RECORD,,"]
    files[f"{dist_info}/RECORD"] = ("\n".join(record) + "\n").encode()
    wheel = f"{NAME}-{_version()}-{_tag()}.whl"
    with zipfile.ZipFile(pathlib.Path(wheel_directory) / wheel, "w", zipfile.ZIP_DEFLATED) as z:
        for p, d in files.items():
            z.writestr(p, d)
    return wheel


def build_sdist(sdist_directory, config_settings=None):
    raise RuntimeError("qscheme builds from its source tree: `pip install .` in a clone")
