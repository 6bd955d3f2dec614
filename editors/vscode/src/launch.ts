/**
 * The command lines the extension runs: the server, its version check and the pip
 * installation. Pure: no `vscode` import.
 */

/**
 * How the server is started: `python -m torch_lsp` in an interpreter, or a `torch-lsp`
 * executable. `libs` is the folder of the server the extension ships (bundled/libs: the
 * torch_lsp package and its dependencies), put first on the interpreter's PYTHONPATH;
 * without it the interpreter's own installation of torch-lsp runs.
 */
export type ServerLaunch =
    | { readonly kind: "interpreter"; readonly python: string; readonly pythonArgs: readonly string[]; readonly libs?: string }
    | { readonly kind: "executable"; readonly path: string };

export interface CommandLine {
    readonly command: string;
    readonly args: string[];
    /** Variables to set on top of the extension host's environment. */
    readonly env?: Readonly<Record<string, string>>;
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

/**
 * `python -m pip install <the wheel the extension ships>` into the interpreter that will run
 * the server (its dependencies come from the package index), or `... install torch-lsp`
 * when the extension ships no wheel.
 */
export function installCommand(python: string, pythonArgs: readonly string[], shippedWheel?: string): CommandLine {
    return { command: python, args: [...pythonArgs, "-m", "pip", "install", shippedWheel ?? DISTRIBUTION] };
}

function withTorchLspArgs(launch: ServerLaunch, args: string[]): CommandLine {
    if (launch.kind === "executable") {
        return { command: launch.path, args };
    }
    const line = { command: launch.python, args: [...launch.pythonArgs, "-m", "torch_lsp", ...args] };
    return launch.libs === undefined ? line : { ...line, env: { PYTHONPATH: prependPath(launch.libs, process.env.PYTHONPATH) } };
}

function prependPath(first: string, rest: string | undefined): string {
    const separator = process.platform === "win32" ? ";" : ":";
    return rest ? `${first}${separator}${rest}` : first;
}

/** The environment a command line runs in: the extension host's, with the line's variables on top. */
export function commandEnvironment(line: CommandLine): NodeJS.ProcessEnv {
    return { ...process.env, ...line.env };
}

/** The version in `torch-lsp 0.1.0` (what `--version` prints), or undefined for anything else. */
export function parseVersion(output: string): string | undefined {
    return /^torch-lsp (\S+)\s*$/m.exec(output)?.[1];
}

/** A command line as a user would type it, for messages and the output. */
export function describeCommand(line: CommandLine): string {
    const variables = Object.entries(line.env ?? {}).map(([name, value]) => `${name}=${quoteIfNeeded(value)}`);
    return [...variables, ...[line.command, ...line.args].map(quoteIfNeeded)].join(" ");
}

function quoteIfNeeded(word: string): string {
    return /^[\w@%+=:,./\\-]+$/.test(word) ? word : `"${word.replace(/(["\\$`])/g, "\\$1")}"`;
}
