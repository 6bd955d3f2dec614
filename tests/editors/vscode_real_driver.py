"""Drives a running code-server (a real VS Code workbench) in Chromium, as a user would with the
keyboard, and prints one JSON object of what the page showed. Run by test_vscode_real.py with the
Python that has Playwright (the recipe's venv), not with the tests' own interpreter:

  python vscode_real_driver.py '{"url": ..., "folder": ..., "script": "train.py", "script_line": 7,
      "hover_column": 22, "fix_column": 12, "notebook": "analysis.ipynb", "notebook_line": 5,
      "screenshots": DIR}'

Each step waits for what it needs to see (a selector or a text), up to a timeout; a step that
times out is recorded under "errors" with a screenshot, and the later steps still run, so one
failure does not hide the others.
"""
from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from playwright.async_api import Page, async_playwright
from playwright.async_api import TimeoutError as PlaywrightTimeout

STEP_TIMEOUT_MS = 45_000
PROBLEMS = ".markers-panel"
HOVER = ".monaco-hover"
# The quick-fix menu: the action widget of current VS Code builds.
ACTIONS = ".action-widget"
SAVE_TRIES = 30  # seconds, one save a second, for the applied fix to reach the disk
MENU_TRIES, MENU_WAIT_MS = 4, 15_000  # the quick-fix menu, opened again if it shows no such entry


async def open_file(page: Page, name: str) -> None:
    await page.keyboard.press("Control+P")
    await page.wait_for_selector(".quick-input-widget input", state="visible")
    await page.keyboard.type(name)
    # The file picker lists the file once it has indexed the folder.
    await page.locator(".quick-input-list .monaco-list-row").filter(has_text=name).first.wait_for()
    await page.keyboard.press("Enter")
    await page.locator(".tabs-container .tab.active").filter(has_text=name).wait_for()


async def go_to(page: Page, line: int, column: int) -> None:
    await page.keyboard.press("Control+G")
    await page.wait_for_selector(".quick-input-widget input", state="visible")
    await page.keyboard.type(f"{line}:{column}")
    await page.keyboard.press("Enter")
    await page.wait_for_selector(".quick-input-widget", state="hidden")


async def problems_text(page: Page, expected: str) -> str:
    """The Problems panel's text, once it shows `expected`."""
    await page.keyboard.press("Control+Shift+M")
    panel = page.locator(PROBLEMS)
    await panel.filter(has_text=expected).first.wait_for()
    return await panel.first.inner_text()


async def notebook_cell_text(page: Page, *expected: str) -> str:
    """The text of the notebook's first code cell, inlay hints included, once it shows `expected`."""
    cell = page.locator(".notebookOverlay .code-cell-row .view-lines").first
    for text in expected:
        await page.locator(".notebookOverlay .code-cell-row .view-lines").filter(has_text=text).first.wait_for()
    return await cell.inner_text()


async def show_hover(page: Page) -> str:
    # "Show or Focus Hover" (Ctrl+K Ctrl+I) at the cursor: no mouse position to get wrong.
    await page.keyboard.press("Control+K")
    await page.keyboard.press("Control+I")
    hover = page.locator(HOVER).filter(has_text="Tensor[")
    await hover.first.wait_for()
    text = await hover.first.inner_text()
    await page.keyboard.press("Escape")
    return text


async def apply_quick_fix(page: Page, title_part: str, saved: Path) -> list[str]:
    """Opens the quick-fix menu (Ctrl+.), picks the entry containing `title_part`, and saves
    (Ctrl+S) until the file `saved` on disk holds `title_part`: the editor applies the edit
    after the menu closes, a notebook's through its cell and later, and a save before that
    would write the old text."""
    menu = page.locator(ACTIONS)
    # The menu shows the actions the server gave when it opened: a request answered while the
    # editor was still settling (a loaded machine) shows none, so the menu is opened again.
    for attempt in range(MENU_TRIES):
        await page.keyboard.press("Control+.")
        try:
            await menu.filter(has_text=title_part).first.wait_for(timeout=MENU_WAIT_MS)
            break
        except PlaywrightTimeout:
            if attempt == MENU_TRIES - 1:
                raise
            await page.keyboard.press("Escape")
    titles = [t.strip() for t in await menu.locator(".action-label, .title").all_inner_texts() if t.strip()]
    await menu.locator(".monaco-list-row").filter(has_text=title_part).first.click()
    await page.wait_for_selector(ACTIONS, state="hidden")
    for _ in range(SAVE_TRIES):
        await page.keyboard.press("Control+S")
        await asyncio.sleep(1)
        if title_part in saved.read_text(encoding="utf-8"):
            break
    return titles


async def apply_notebook_quick_fix(page: Page, line: int, title_part: str, saved: Path) -> list[str]:
    """Puts the cursor at the end of the first cell's `line` (1-based) with the keyboard,
    one character back (inside the call the finding covers), then picks the fix from Ctrl+.
    and saves the notebook."""
    await page.locator(".notebookOverlay .code-cell-row .view-lines").first.click()
    await page.locator(".notebookOverlay .code-cell-row .monaco-editor.focused").first.wait_for()
    await page.keyboard.press("Control+Home")
    for _ in range(line - 1):
        await page.keyboard.press("ArrowDown")
    await page.keyboard.press("End")
    await page.keyboard.press("ArrowLeft")
    return await apply_quick_fix(page, title_part, saved)


async def step(seen: dict, name: str, page: Page, shots: Path, action) -> None:
    try:
        value = await action
        # The editor lays text out with no-break spaces; what was seen is compared as plain text.
        seen[name] = value.replace("\xa0", " ") if isinstance(value, str) else value
    except Exception as error:  # one failed step is reported, and the next ones still run
        seen["errors"].append(f"{name}: {type(error).__name__}: {str(error)[:600]}")
        await page.screenshot(path=str(shots / f"{name}.png"))


async def main(args: dict) -> dict:
    shots = Path(args["screenshots"])
    seen: dict = {"errors": []}
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=args.get("chromium", "/usr/bin/chromium"),
                                                   args=["--no-sandbox"])
        page = await browser.new_page(viewport={"width": 1400, "height": 900})
        page.set_default_timeout(STEP_TIMEOUT_MS)
        await page.goto(f"{args['url']}/?folder={args['folder']}", wait_until="domcontentloaded")
        await page.wait_for_selector(".monaco-workbench .part.editor", timeout=120_000)
        await page.wait_for_selector(".statusbar", timeout=120_000)

        await step(seen, "open_script", page, shots, open_file(page, args["script"]))
        await step(seen, "script_problems", page, shots, problems_text(page, "TL201"))
        # The hover and the fix act at the cursor, in the editor: focus it first.
        await page.locator(".editor-instance .monaco-editor .view-lines").first.click()
        await step(seen, "go_to_name", page, shots, go_to(page, args["script_line"], args["hover_column"]))
        await step(seen, "hover", page, shots, show_hover(page))
        await step(seen, "go_to_call", page, shots, go_to(page, args["script_line"], args["fix_column"]))
        await step(seen, "quick_fix_titles", page, shots, apply_quick_fix(page, "dim=-1", Path(args["folder"]) / args["script"]))

        await step(seen, "open_notebook", page, shots, open_file(page, args["notebook"]))
        await step(seen, "notebook_cells", page, shots, notebook_cell_text(page, "softmax", "[4, 5]"))
        await step(seen, "notebook_problems", page, shots, problems_text(page, args["notebook"]))
        await step(seen, "notebook_fix_titles", page, shots,
                   apply_notebook_quick_fix(page, args["notebook_line"], "dim=-1",
                                            Path(args["folder"]) / args["notebook"]))
        await page.screenshot(path=str(shots / "last.png"))
        await browser.close()
    return seen


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(json.loads(sys.argv[1])))))
