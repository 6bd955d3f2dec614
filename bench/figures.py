"""The benchmark's output: rows of figures printed as one plain-text table."""
from __future__ import annotations

import statistics
from dataclasses import dataclass


@dataclass
class Row:
    measurement: str
    size: str  # what was measured on ("2,000 lines", "4 files, 8,650 lines", "")
    value: str  # the headline figure, with its unit
    detail: str = ""  # spread, ratio, note


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def spread(samples: list[float]) -> str:
    """'min-max of n' in ms, for the detail column."""
    if len(samples) < 2:
        return f"n={len(samples)}"
    return f"min {min(samples) * 1000:.1f} / max {max(samples) * 1000:.1f} ms, n={len(samples)}"


def median(samples: list[float]) -> float:
    return statistics.median(samples)


def lines_label(n: int) -> str:
    return f"{n:,} lines"


def render(rows: list[Row]) -> str:
    headers = Row("measurement", "on", "median / value", "detail")
    table = [headers] + rows
    widths = [max(len(getattr(r, field)) for r in table) for field in ("measurement", "size", "value")]
    out = []
    for index, r in enumerate(table):
        cells = [r.measurement.ljust(widths[0]), r.size.ljust(widths[1]), r.value.rjust(widths[2]), r.detail]
        out.append("  ".join(cells).rstrip())
        if index == 0:
            out.append("  ".join("-" * w for w in widths) + "  " + "-" * 6)
    return "\n".join(out)
