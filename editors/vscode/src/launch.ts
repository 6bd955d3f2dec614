/**
 * The command lines the extension runs: the server, its version check and the pip
 * installation. Pure: no `vscode` import.
 */

/** How the server is started: `python -m torch_lsp` in an interpreter, or a `torch-lsp` executable. */
export type ServerLaunch =
    | { readonly kind: "interpreter"; readonly python: string; readonly pythonArgs: readonly string[] }
    | { readonly kind: "executable"; readonly path: string };

export interface CommandLine {
    readonly command: string;
    readonly args: string[];
}

/** The PyPI distribution that provides the server (pyproject.toml `name`). */
export const DISTRIBUTION = "torch-lsp";

/** `python -m torch_lsp serve` or `torch-lsp serve`: LSP over stdio. */
export function serveCommand(launch: ServerLaunch): CommandLine {
    return withTorchLspArgs(launch, ["serve"]);
}

/** `python -m torch_lsp --version`: proves torch-lsp (not some other `torch_lsp` module) is importable. */
export function versionCommand(launch: ServerLaunch): CommandLine {
    return withTorchLspArgs(launch, ["--version"]);
}

/** `python -m pip install torch-lsp`, into the interpreter that will run the server. */
export function installCommand(python: string, pythonArgs: readonly string[]): CommandLine {
    return { command: python, args: [...pythonArgs, "-m", "pip", "install", DISTRIBUTION] };
}

function withTorchLspArgs(launch: ServerLaunch, args: string[]): CommandLine {
    if (launch.kind === "executable") {
        return { command: launch.path, args };
    }
    return { command: launch.python, args: [...launch.pythonArgs, "-m", "torch_lsp", ...args] };
}

/** The version in `torch-lsp 0.1.0` (what `--version` prints), or undefined for anything else. */
export function parseVersion(output: string): string | undefined {
    return /^torch-lsp (\S+)\s*$/m.exec(output)?.[1];
}

/** A command line as a user would type it, for messages and the output. */
export function describeCommand(line: CommandLine): string {
    return [line.command, ...line.args].map(quoteIfNeeded).join(" ");
}

function quoteIfNeeded(word: string): string {
    return /^[\w@%+=:,./\\-]+$/.test(word) ? word : `"${word.replace(/(["\\$`])/g, "\\$1")}"`;
}
