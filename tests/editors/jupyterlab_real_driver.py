"""Drives a running JupyterLab (with jupyterlab-lsp) in Chromium and prints one JSON object of what
the notebook showed. Run by test_jupyterlab_real.py with the Python that has Playwright (the
vscode_real recipe's venv), not with the tests' own interpreter:

  python jupyterlab_real_driver.py '{"url": ..., "notebook": "train.ipynb", "cell": 1,
      "screenshots": DIR, "chromium": "/usr/bin/chromium"}'

It opens the notebook, waits until a diagnostic's underline appears in the given code cell (0-based),
hovers it and records the tooltip's text; a step that times out is recorded under "errors", with a
screenshot.
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

WAIT_S = 180  # the server starts when the notebook opens; on a loaded machine that takes a while
# CodeMirror 6's lint extension, which jupyterlab-lsp 5 renders diagnostics with.
UNDERLINE = ".cm-lintRange"
TOOLTIP = ".cm-tooltip"


def main() -> int:
    arguments = json.loads(sys.argv[1])
    shots = Path(arguments["screenshots"])
    seen: dict = {"errors": []}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=arguments["chromium"], args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto(f"{arguments['url']}/lab/tree/{arguments['notebook']}")
        cells = page.locator(".jp-Notebook .jp-CodeCell")
        cell = cells.nth(arguments["cell"])
        underline = cell.locator(UNDERLINE)
        try:
            underline.first.wait_for(timeout=WAIT_S * 1000)
        except Exception as error:  # noqa: BLE001 - recorded, the test says what was missing
            seen["errors"].append(f"no diagnostic underline in cell {arguments['cell']}: {error}")
        seen["underlined_cells"] = [i for i in range(cells.count()) if cells.nth(i).locator(UNDERLINE).count()]
        if underline.count():
            seen["underlined_text"] = underline.first.inner_text()
            underline.first.hover()
            try:
                page.locator(TOOLTIP).filter(has_text="torch-lsp").first.wait_for(timeout=30_000)
                seen["tooltip"] = "\n".join(page.locator(TOOLTIP).all_inner_texts())
            except Exception as error:  # noqa: BLE001
                seen["errors"].append(f"no torch-lsp tooltip on hover: {error}")
        page.screenshot(path=str(shots / "notebook.png"))
        browser.close()
    print(json.dumps(seen))
    return 0


if __name__ == "__main__":
    sys.exit(main())
