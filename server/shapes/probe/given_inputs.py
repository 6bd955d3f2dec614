"""Input shapes the user gave for a module class ("Probe shapes…"), remembered.

Where nothing in the file says what a model takes (no call site, no annotation or shape
comment), the user can say it once: the editor's "Probe shapes…" code lens asks for
`[B, 3, 32, 32]` and the probe runs the class on it from then on.  Answers are kept per
(file, class) in the user's cache folder (`$XDG_CACHE_HOME/torch-lsp/probe-inputs.json`),
never in the project: they are one user's choice, not the project's configuration.

The text a user types: one shape per input, `[8, 3, 32, 32]`, `8x3x32x32` or
`(B, 784)`; several inputs separated by `;`; a leading dtype for integer inputs
(`long [B, 16]` for token ids).  A leading name (`B`, `batch`) is the batch: it is run at
two sizes, so a dim shown as following the batch is checked to.
"""
from __future__ import annotations

import json
import os
import re
import threading

MAX_REMEMBERED = 500
MAX_DIMS = 8
MAX_SIZE = 1 << 20
DTYPES = {"float": "float32", "float32": "float32", "half": "float16", "float16": "float16",
          "bfloat16": "bfloat16", "long": "int64", "int64": "int64", "int": "int64", "bool": "bool"}
_INPUT = re.compile(r"^\s*(?:(?P<dtype>[A-Za-z]\w*)\s*(?=[\[(]))?[\[(]?(?P<dims>[^\[\]()]*)[\])]?\s*$")
_DIM_SEPARATOR = re.compile(r"\s*,\s*|\s*[x×]\s*|\s+")
_NAME = re.compile(r"^[A-Za-z_]\w*$")


class InputShapeError(ValueError):
    """The text is not a shape; the message says what is expected."""


def parse_input_shapes(text: str) -> list[dict]:
    """`"long [B, 16]; [B, 16]"` -> [{"dims": ["B", 16], "dtype": "int64"}, ...]."""
    inputs = []
    for part in re.split(r"\s*;\s*|(?<=[\])])\s*,\s*(?=\w*\s*[\[(])", text.strip()):
        if not part:
            continue
        match = _INPUT.match(part)
        dtype_word = (match.group("dtype") or "").lower() if match else ""
        if match is None or (dtype_word and dtype_word not in DTYPES):
            raise InputShapeError(f"`{part}` is not a shape: write it as `[8, 3, 32, 32]` or `[B, 784]`.")
        dims_text = match.group("dims")
        dims: list[int | str] = []
        for index, item in enumerate(d for d in _DIM_SEPARATOR.split(dims_text.strip()) if d):
            if item.isdigit() and 0 < int(item) <= MAX_SIZE:
                dims.append(int(item))
            elif index == 0 and _NAME.match(item):
                dims.append(item)  # the batch
            else:
                raise InputShapeError(
                    f"`{item}` in `{part}` is not a size: use positive numbers, and a name only for the "
                    "first dim (the batch).")
        if not dims or len(dims) > MAX_DIMS:
            raise InputShapeError(f"`{part}` needs between 1 and {MAX_DIMS} dims.")
        inputs.append({"dims": dims, "dtype": DTYPES.get(dtype_word, "float32")})
    if not inputs:
        raise InputShapeError("No shape given: write it as `[8, 3, 32, 32]` or `[B, 784]`.")
    return inputs


def render_input_shapes(inputs: list[dict]) -> str:
    """The inverse of `parse_input_shapes`, as a user would type it."""
    parts = []
    for spec in inputs:
        prefix = "long " if spec["dtype"] == "int64" else "" if spec["dtype"] == "float32" else spec["dtype"] + " "
        parts.append(prefix + "[" + ", ".join(str(d) for d in spec["dims"]) + "]")
    return "; ".join(parts)


def default_store_path() -> str:
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "torch-lsp", "probe-inputs.json")


class GivenInputs:
    """The remembered answers, by file path and class name."""

    def __init__(self, store_path: str | None = None):
        self.store_path = store_path or default_store_path()
        self.lock = threading.Lock()
        self.by_key: dict[str, list[dict]] | None = None

    def for_file(self, path: str | None) -> dict[str, list[dict]]:
        """Class name -> inputs the user gave for the classes of this file."""
        if not path:
            return {}
        prefix = os.path.abspath(path) + "::"
        with self.lock:
            remembered = self.loaded()
            return {key[len(prefix):]: value for key, value in remembered.items() if key.startswith(prefix)}

    def remember(self, path: str, class_name: str, inputs: list[dict]) -> None:
        with self.lock:
            remembered = self.loaded()
            key = os.path.abspath(path) + "::" + class_name
            remembered.pop(key, None)
            remembered[key] = inputs  # the newest last: the oldest is forgotten first
            while len(remembered) > MAX_REMEMBERED:
                remembered.pop(next(iter(remembered)))
            self.save(remembered)

    def loaded(self) -> dict[str, list[dict]]:
        if self.by_key is None:
            try:
                with open(self.store_path, encoding="utf-8") as handle:
                    data = json.load(handle)
                self.by_key = {k: v for k, v in data.items() if isinstance(k, str) and valid(v)} \
                    if isinstance(data, dict) else {}
            except (OSError, ValueError):
                self.by_key = {}  # none yet, or unreadable: start afresh rather than fail a probe
        return self.by_key

    def save(self, remembered: dict[str, list[dict]]) -> None:
        try:
            os.makedirs(os.path.dirname(self.store_path), exist_ok=True)
            temporary = self.store_path + ".tmp"
            with open(temporary, "w", encoding="utf-8") as handle:
                json.dump(remembered, handle)
            os.replace(temporary, self.store_path)
        except OSError:
            pass  # remembered for this session only


def valid(inputs: object) -> bool:
    return isinstance(inputs, list) and bool(inputs) and all(
        isinstance(spec, dict) and isinstance(spec.get("dims"), list) and spec.get("dtype") in DTYPES.values()
        and all(isinstance(d, (int, str)) for d in spec["dims"]) for spec in inputs)
