/**
 * The server the extension ships, so that it works with no package index: `bundled/libs`
 * (the torch_lsp package and its dependencies, put on the user's interpreter's PYTHONPATH,
 * as Microsoft's Python tool extensions ship theirs) and `bundled/wheels` (torch-lsp's own
 * wheel, which the Install button installs). scripts/bundle_server.py fills the folder
 * when the extension is packaged. Pure: no `vscode` import.
 */
import * as fs from "node:fs";
import * as path from "node:path";

import { ServerLaunch } from "./launch";

export interface BundledServer {
    /** The folder that holds the `torch_lsp` package and its dependencies. */
    readonly libs: string | undefined;
    /** torch-lsp's wheel, for the Install button. */
    readonly wheel: string | undefined;
}

/** The command a `torch-lsp` installed anywhere on PATH runs as. */
export const ON_PATH = "torch-lsp";

export function findBundledServer(extensionFolder: string): BundledServer {
    const bundled = path.join(extensionFolder, "bundled");
    const libs = path.join(bundled, "libs");
    const hasLibs = fs.existsSync(path.join(libs, "torch_lsp", "__main__.py"));
    const wheels = path.join(bundled, "wheels");
    const wheel = fs.existsSync(wheels) ? fs.readdirSync(wheels).find((name) => /^torch_lsp-.+\.whl$/.test(name)) : undefined;
    return { libs: hasLibs ? libs : undefined, wheel: wheel === undefined ? undefined : path.join(wheels, wheel) };
}

export interface LaunchCandidate {
    readonly launch: ServerLaunch;
    /** What runs, in words, for the status bar and the output. */
    readonly what: string;
}

/**
 * What to try, in order, for a chosen launch: a `torch-lsp.path` executable alone; for an
 * interpreter, the shipped server in it, then its own installation of torch-lsp, then a
 * `torch-lsp` on PATH.
 */
export function launchCandidates(chosen: ServerLaunch, bundled: BundledServer): LaunchCandidate[] {
    if (chosen.kind === "executable") {
        return [{ launch: chosen, what: "the torch-lsp.path executable" }];
    }
    const candidates: LaunchCandidate[] = [];
    if (bundled.libs !== undefined) {
        candidates.push({ launch: { ...chosen, libs: bundled.libs }, what: "the server shipped with the extension" });
    }
    candidates.push({ launch: chosen, what: "torch-lsp installed in the interpreter" });
    candidates.push({ launch: { kind: "executable", path: ON_PATH }, what: "torch-lsp found on PATH" });
    return candidates;
}
