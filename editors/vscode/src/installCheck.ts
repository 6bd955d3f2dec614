/**
 * Whether torch-lsp can run with a given launch: runs its `--version` and reads the
 * answer. Uses node's child_process only (no `vscode`), so it is tested for real.
 */
import { execFile } from "node:child_process";

import { commandEnvironment, describeCommand, parseVersion, ServerLaunch, versionCommand } from "./launch";

export type InstallationCheck =
    | { readonly installed: true; readonly version: string }
    | { readonly installed: false; readonly detail: string };

const CHECK_TIMEOUT_MS = 60_000; // the first import after an install compiles every module
const DETAIL_LINES = 6;

/**
 * Runs the version check in `cwd`. The caller passes a folder of its own, not the
 * workspace: `python -m` puts the working folder first on sys.path, so a workspace with
 * its own `torch_lsp` package would otherwise be run in place of torch-lsp.
 */
export function checkInstallation(launch: ServerLaunch, cwd: string): Promise<InstallationCheck> {
    const line = versionCommand(launch);
    return new Promise((resolve) => {
        execFile(line.command, line.args, { cwd, env: commandEnvironment(line), timeout: CHECK_TIMEOUT_MS, windowsHide: true }, (error, stdout, stderr) => {
            const version = parseVersion(String(stdout));
            if (!error && version !== undefined) {
                resolve({ installed: true, version });
                return;
            }
            resolve({ installed: false, detail: failureDetail(describeCommand(line), error, String(stdout), String(stderr)) });
        });
    });
}

type ExecError = (Error & { code?: string | number | null; killed?: boolean; signal?: NodeJS.Signals | null }) | null;

function failureDetail(command: string, error: ExecError, stdout: string, stderr: string): string {
    if (error?.code === "ENOENT") {
        return `\`${command}\` could not be run: the program was not found.`;
    }
    if (error?.killed) {
        return `\`${command}\` did not finish within ${CHECK_TIMEOUT_MS / 1000} s.`;
    }
    if (error) {
        const status = typeof error.code === "number" ? `exit status ${error.code}` : String(error.code ?? error.signal);
        return `\`${command}\` failed (${status}): ${lastLines(stderr || stdout || error.message)}`;
    }
    return `\`${command}\` printed ${JSON.stringify(lastLines(stdout))}, which is not torch-lsp's version (is another package named \`torch_lsp\` installed?).`;
}

function lastLines(text: string): string {
    return text.trim().split(/\r?\n/).slice(-DETAIL_LINES).join("\n");
}
