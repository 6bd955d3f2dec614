"""The shape tables stay greppable: every registered name is written out literally."""
from __future__ import annotations

from pathlib import Path

import pytest

from torch_lsp.shapes import functions, layers
from torch_lsp.shapes.functions.registry import method

PACKAGES = (Path(functions.__file__).parent, Path(layers.__file__).parent)
SOURCE = "\n".join(path.read_text(encoding="utf-8") for package in PACKAGES for path in sorted(package.glob("*.py")))


@pytest.mark.parametrize("table", [functions.METHODS, functions.FUNCTIONS, layers.KINDS],
                         ids=["methods", "functions", "layers"])
def test_every_registered_name_appears_in_quotes(table):
    missing = sorted(key for key in table if f'"{key.rsplit(".", 1)[-1]}"' not in SOURCE)
    assert not missing, f"registered without a literal name: {missing}"


def test_a_name_registered_twice_is_an_error():
    with pytest.raises(ValueError, match="registered twice"):
        method("sum")(lambda call, x: x)
