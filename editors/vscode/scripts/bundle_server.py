"""Fills editors/vscode/bundled/ with the server the extension ships, so that it works with
no package index (run by `npm run package`, with the Python in $PYTHON or `python3`):

- bundled/wheels/: torch-lsp's wheel, built from this repository (the Install button's);
- bundled/libs/: that wheel and its dependencies installed with `pip install --target`, which
  the extension puts on the user's interpreter's PYTHONPATH.

Every dependency is pure Python but libcst, whose parser is a compiled module built per
CPython version; its compiled module for each CPython the extension supports is added next
to the one pip installed (Python loads the one named for it: native.cpython-312-...so), so
one libs folder serves Python 3.10 to 3.13 on the platform the package is built on.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from importlib.metadata import PathDistribution
from pathlib import Path

EXTENSION = Path(__file__).resolve().parent.parent
# The repository the wheel is built from: this one, or $TORCH_LSP_REPOSITORY for a copy of the extension elsewhere.
REPOSITORY = Path(os.environ.get("TORCH_LSP_REPOSITORY") or EXTENSION.parent.parent)
BUNDLED = EXTENSION / "bundled"
PYTHON_VERSIONS = ["3.10", "3.11", "3.12", "3.13"]


def pip(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "pip", *args], check=True)


def wheel_platform(libs: Path, name: str) -> tuple[str, str]:
    """The version and platform tag of the wheel pip installed for `name` (e.g. cp311-cp311-manylinux_2_28_x86_64)."""
    info = next(libs.glob(f"{name}-*.dist-info"))
    distribution = PathDistribution(info)
    tag = next(line for line in (info / "WHEEL").read_text().splitlines() if line.startswith("Tag: "))
    return distribution.version, tag.removeprefix("Tag: ").split("-", 2)[2]


def add_native_parsers(libs: Path) -> None:
    version, platform = wheel_platform(libs, "libcst")
    if platform == "any":
        return
    with tempfile.TemporaryDirectory() as downloads:
        for python in PYTHON_VERSIONS:
            pip("download", "--quiet", "--no-deps", "--only-binary=:all:", "--python-version", python,
                "--platform", platform, "--dest", downloads, f"libcst=={version}")
        for wheel in Path(downloads).glob("libcst-*.whl"):
            with zipfile.ZipFile(wheel) as archive:
                for name in archive.namelist():
                    if name.startswith("libcst/native.") and not (libs / name).exists():
                        (libs / name).write_bytes(archive.read(name))


def main() -> None:
    shutil.rmtree(BUNDLED, ignore_errors=True)
    wheels, libs = BUNDLED / "wheels", BUNDLED / "libs"
    pip("wheel", "--quiet", "--no-deps", "--wheel-dir", str(wheels), str(REPOSITORY))
    (wheel,) = wheels.glob("torch_lsp-*.whl")
    pip("install", "--quiet", "--no-compile", "--only-binary=:all:", "--target", str(libs), str(wheel))
    add_native_parsers(libs)
    # Console scripts point at the Python that built the bundle; the extension runs `-m torch_lsp`.
    shutil.rmtree(libs / "bin", ignore_errors=True)
    # libcst's own test suite is not needed to run it.
    shutil.rmtree(libs / "libcst" / "tests", ignore_errors=True)
    for cache in list(libs.rglob("__pycache__")):
        shutil.rmtree(cache)
    natives = sorted(path.name for path in (libs / "libcst").glob("native.*"))
    print(f"bundled {wheel.name} and its dependencies in {libs.relative_to(EXTENSION)}; libcst parsers: {natives}")


if __name__ == "__main__":
    main()
