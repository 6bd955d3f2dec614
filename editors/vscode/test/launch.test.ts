import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";

import { checkInstallation } from "../src/installCheck";
import { describeCommand, installCommand, parseVersion, serveCommand, ServerLaunch, versionCommand } from "../src/launch";

const IN_VENV: ServerLaunch = { kind: "interpreter", python: "/p/bin/python", pythonArgs: ["-X", "utf8"] };
const EXECUTABLE: ServerLaunch = { kind: "executable", path: "/p/bin/torch-lsp" };

test("the server runs as `python -m torch_lsp serve`, or `torch-lsp serve`", () => {
    assert.deepEqual(serveCommand(IN_VENV), { command: "/p/bin/python", args: ["-X", "utf8", "-m", "torch_lsp", "serve"] });
    assert.deepEqual(serveCommand(EXECUTABLE), { command: "/p/bin/torch-lsp", args: ["serve"] });
    assert.deepEqual(versionCommand(IN_VENV).args, ["-X", "utf8", "-m", "torch_lsp", "--version"]);
});

test("pip installs the wheel the extension ships into the same interpreter", () => {
    assert.deepEqual(installCommand("/p/bin/python", ["-X", "utf8"], "/ext/bundled/wheels/torch_lsp-0.1.0-py3-none-any.whl"), {
        command: "/p/bin/python",
        args: ["-X", "utf8", "-m", "pip", "install", "/ext/bundled/wheels/torch_lsp-0.1.0-py3-none-any.whl"],
    });
});

test("only torch-lsp's own version line counts", () => {
    assert.equal(parseVersion("torch-lsp 0.1.0\n"), "0.1.0");
    assert.equal(parseVersion("some-server 1.0\n"), undefined);
    assert.equal(parseVersion(""), undefined);
});

test("command lines are shown as they would be typed", () => {
    assert.equal(describeCommand({ command: "/my env/python", args: ["-m", "torch_lsp"] }), '"/my env/python" -m torch_lsp');
});

const scratch = () => fs.mkdtempSync(path.join(os.tmpdir(), "torch-lsp-check-"));
const SYSTEM_PYTHON = process.platform === "win32" ? "python" : "python3";

test("a missing program is reported as not found", async () => {
    const check = await checkInstallation({ kind: "executable", path: path.join(scratch(), "no-such-torch-lsp") }, scratch());
    assert.equal(check.installed, false);
    assert.match(!check.installed ? check.detail : "", /could not be run: the program was not found/);
});

test("an interpreter without torch-lsp is reported with Python's own error", async () => {
    // -S leaves out site-packages, so torch-lsp cannot be importable whatever is installed.
    const check = await checkInstallation({ kind: "interpreter", python: SYSTEM_PYTHON, pythonArgs: ["-S"] }, scratch());
    assert.equal(check.installed, false);
    assert.match(!check.installed ? check.detail : "", /-S -m torch_lsp --version` failed \(exit status 1\): .*No module named torch_lsp/s);
});

test("another module called `torch_lsp` is not mistaken for torch-lsp", async () => {
    const folder = scratch();
    fs.mkdirSync(path.join(folder, "torch_lsp"));
    fs.writeFileSync(path.join(folder, "torch_lsp", "__main__.py"), "print('some other server 2.0')\n");
    const check = await checkInstallation({ kind: "interpreter", python: SYSTEM_PYTHON, pythonArgs: ["-S"] }, folder);
    assert.equal(check.installed, false);
    assert.match(!check.installed ? check.detail : "", /which is not torch-lsp's version/);
});

// tests/editors/test_vscode_package.py sets this to the interpreter torch-lsp is installed in.
const TORCH_LSP_PYTHON = process.env.TORCH_LSP_TEST_PYTHON;

test("an interpreter with torch-lsp installed passes, with its version", { skip: TORCH_LSP_PYTHON ? false : "TORCH_LSP_TEST_PYTHON is not set" }, async () => {
    const check = await checkInstallation({ kind: "interpreter", python: TORCH_LSP_PYTHON ?? "", pythonArgs: [] }, scratch());
    assert.equal(check.installed, true, !check.installed ? check.detail : "");
    assert.match(check.installed ? check.version : "", /^\d+\.\d+/);
});
