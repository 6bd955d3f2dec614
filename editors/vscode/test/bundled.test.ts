// Which server runs: the one the extension ships first, in the user's interpreter; then that
// interpreter's own torch-lsp; then a torch-lsp on PATH. A torch-lsp.path setting is alone.
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";

import { findBundledServer, launchCandidates, ON_PATH } from "../src/bundled";
import { describeCommand, serveCommand, ServerLaunch } from "../src/launch";

const PYTHON: ServerLaunch = { kind: "interpreter", python: "/usr/bin/python3", pythonArgs: [] };

function extensionFolder(withServer: boolean): string {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), "torch-lsp-extension-"));
    if (withServer) {
        fs.mkdirSync(path.join(folder, "bundled", "libs", "torch_lsp"), { recursive: true });
        fs.writeFileSync(path.join(folder, "bundled", "libs", "torch_lsp", "__main__.py"), "");
        fs.mkdirSync(path.join(folder, "bundled", "wheels"));
        fs.writeFileSync(path.join(folder, "bundled", "wheels", "torch_lsp-0.1.0-py3-none-any.whl"), "");
    }
    return folder;
}

test("the shipped server is found in bundled/, with the wheel the Install button installs", () => {
    const folder = extensionFolder(true);
    assert.deepEqual(findBundledServer(folder), {
        libs: path.join(folder, "bundled", "libs"),
        wheel: path.join(folder, "bundled", "wheels", "torch_lsp-0.1.0-py3-none-any.whl"),
    });
    assert.deepEqual(findBundledServer(extensionFolder(false)), { libs: undefined, wheel: undefined });
});

test("the shipped server runs first, in the chosen interpreter, with its libs first on PYTHONPATH", () => {
    const folder = extensionFolder(true);
    const candidates = launchCandidates(PYTHON, findBundledServer(folder));
    assert.deepEqual(candidates.map((candidate) => candidate.launch), [
        { ...PYTHON, libs: path.join(folder, "bundled", "libs") },
        PYTHON,
        { kind: "executable", path: ON_PATH },
    ]);
    const line = serveCommand(candidates[0].launch);
    assert.deepEqual(line.args, ["-m", "torch_lsp", "serve"]);
    assert.equal(line.env?.PYTHONPATH?.split(path.delimiter)[0], path.join(folder, "bundled", "libs"));
    assert.ok(describeCommand(line).startsWith(`PYTHONPATH=${path.join(folder, "bundled", "libs")}`));
    assert.equal(serveCommand(candidates[1].launch).env, undefined);
});

test("without a shipped server, the interpreter's torch-lsp, then PATH; torch-lsp.path is tried alone", () => {
    assert.deepEqual(launchCandidates(PYTHON, findBundledServer(extensionFolder(false))).map((c) => c.launch), [
        PYTHON,
        { kind: "executable", path: ON_PATH },
    ]);
    const configured: ServerLaunch = { kind: "executable", path: "/opt/torch-lsp" };
    assert.deepEqual(launchCandidates(configured, findBundledServer(extensionFolder(true))).map((c) => c.launch), [configured]);
});
