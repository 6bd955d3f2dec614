"""One Settings type: defaults < pyproject `[tool.torch-lsp]` < editor settings.

(Minimal placeholder interface; the full loader is being written.)
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Settings:
    select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    extend_select: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    severity: dict[str, str] = field(default_factory=dict)

    def is_selected(self, code: str, path: str | None = None) -> bool:
        from server.diagnostics import all_rules

        rule = all_rules().get(code)
        default = rule.enabled_by_default if rule else True
        selected = default if not self.select else any(code.startswith(p) for p in self.select)
        if any(code.startswith(p) for p in self.extend_select):
            selected = True
        if any(code.startswith(p) for p in self.ignore):
            selected = False
        return selected

    def severity_of(self, code: str) -> str | None:
        return self.severity.get(code)
