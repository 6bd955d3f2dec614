/**
 * Which program runs the server: a `torch-lsp.path` executable if set, else Python
 * chosen the way the Python tools extensions (ruff, black, pylint) choose: the
 * `torch-lsp.interpreter` setting, else the Python extension's active environment,
 * else `python3`.
 *
 * Pure: no `vscode` import. The Python extension is reached through `activeEnvironment`,
 * which the caller builds over the extension's API (src/pythonExtension.ts).
 */
import * as path from "node:path";

import { ServerLaunch } from "./launch";

/** torch-lsp needs this Python or newer (pyproject.toml `requires-python`). */
export const MINIMUM_PYTHON = { major: 3, minor: 10 } as const;

/** What the Python extension says about its active environment. */
export interface PythonEnvironment {
    /** The interpreter's path; undefined when the environment has none (e.g. an empty conda env). */
    readonly executable: string | undefined;
    readonly version?: { readonly major?: number; readonly minor?: number; readonly micro?: number };
}

/** Values for `${workspaceFolder}`, `${userHome}`, `${env:NAME}` and `~` in paths. */
export interface PathVariables {
    readonly workspaceFolder: string | undefined;
    readonly home: string;
    readonly env: Readonly<Record<string, string | undefined>>;
}

export interface InterpreterSources {
    /** `torch-lsp.interpreter` as set: a path, or [path, ...arguments]; anything else is reported. */
    readonly configured: unknown;
    readonly variables: PathVariables;
    /** In an untrusted workspace the Python extension's environment (often a venv inside the workspace) is not run. */
    readonly trusted: boolean;
    /** The Python extension's active environment; undefined when the extension is absent or has none. */
    readonly activeEnvironment: () => Promise<PythonEnvironment | undefined>;
    /** `process.platform`: `python3` does not exist on Windows. */
    readonly platform: string;
}

export type InterpreterSource = "setting" | "python-extension" | "default";

export type InterpreterChoice =
    | { readonly ok: true; readonly command: string; readonly args: string[]; readonly source: InterpreterSource }
    | { readonly ok: false; readonly message: string };

/** Words for the status bar and messages: where the interpreter came from. */
export const SOURCE_DESCRIPTIONS: Record<InterpreterSource, string> = {
    setting: "set in torch-lsp.interpreter",
    "python-extension": "selected in the Python extension",
    default: "the default: neither torch-lsp.interpreter nor the Python extension names one",
};

export type LaunchChoice =
    | { readonly ok: true; readonly launch: ServerLaunch; readonly description: string }
    | { readonly ok: false; readonly message: string };

/** `torch-lsp.path` when set (a string), else `python -m torch_lsp` in the chosen interpreter. */
export async function chooseLaunch(pathSetting: unknown, sources: InterpreterSources): Promise<LaunchChoice> {
    if (pathSetting !== undefined && pathSetting !== null && typeof pathSetting !== "string") {
        return { ok: false, message: "The torch-lsp.path setting must be a string: the path to a torch-lsp executable." };
    }
    const executable = substituteVariables(pathSetting?.trim() ?? "", sources.variables);
    if (executable !== "") {
        const launch: ServerLaunch = { kind: "executable", path: resolveProgram(executable, sources.variables.workspaceFolder) };
        return { ok: true, launch, description: "set in torch-lsp.path" };
    }
    const choice = await chooseInterpreter(sources);
    if (!choice.ok) {
        return choice;
    }
    const launch: ServerLaunch = { kind: "interpreter", python: choice.command, pythonArgs: choice.args };
    return { ok: true, launch, description: SOURCE_DESCRIPTIONS[choice.source] };
}

export async function chooseInterpreter(sources: InterpreterSources): Promise<InterpreterChoice> {
    if (!isCommandSetting(sources.configured)) {
        return {
            ok: false,
            message:
                "The torch-lsp.interpreter setting must be a path or a list of strings " +
                '(the path, then arguments), such as ["${workspaceFolder}/.venv/bin/python"].',
        };
    }
    const configured = configuredCommand(sources.configured, sources.variables);
    if (configured !== undefined) {
        return { ok: true, command: configured[0], args: configured.slice(1), source: "setting" };
    }
    if (sources.trusted) {
        const environment = await sources.activeEnvironment();
        if (environment?.executable) {
            const tooOld = olderThanMinimum(environment);
            if (tooOld) {
                return { ok: false, message: tooOld };
            }
            return { ok: true, command: environment.executable, args: [], source: "python-extension" };
        }
    }
    return { ok: true, command: defaultPython(sources.platform), args: [], source: "default" };
}

function isCommandSetting(value: unknown): value is string | readonly string[] | undefined | null {
    const isStrings = Array.isArray(value) && value.every((part) => typeof part === "string");
    return value === undefined || value === null || typeof value === "string" || isStrings;
}

export function defaultPython(platform: string): string {
    return platform === "win32" ? "python" : "python3";
}

/** The configured command line with variables substituted, or undefined when the setting is empty. */
export function configuredCommand(
    configured: string | readonly string[] | undefined | null,
    variables: PathVariables,
): string[] | undefined {
    const parts = typeof configured === "string" ? [configured] : [...(configured ?? [])];
    const words = parts.map((part) => substituteVariables(part, variables)).filter((part) => part.trim() !== "");
    if (words.length === 0) {
        return undefined;
    }
    return [resolveProgram(words[0], variables.workspaceFolder), ...words.slice(1)];
}

/** Replaces `${workspaceFolder}`, `${userHome}`, `${env:NAME}` and a leading `~`. */
export function substituteVariables(text: string, variables: PathVariables): string {
    const replaced = text.replace(/\$\{(workspaceFolder|userHome|env:([^}]+))\}/g, (whole, name: string, envName?: string) => {
        if (envName !== undefined) {
            return variables.env[envName] ?? "";
        }
        if (name === "userHome") {
            return variables.home;
        }
        // Without a folder the variable cannot be resolved; leaving it makes the error name it.
        return variables.workspaceFolder ?? whole;
    });
    if (replaced === "~" || replaced.startsWith("~/") || replaced.startsWith("~\\")) {
        return variables.home + replaced.slice(1);
    }
    return replaced;
}

/**
 * A relative path with a separator (`.venv/bin/python`) is relative to the workspace
 * folder, as in the Python extension's settings; a bare name (`python3.12`) is looked
 * up on PATH when it is run.
 */
export function resolveProgram(program: string, workspaceFolder: string | undefined): string {
    const hasSeparator = program.includes("/") || program.includes("\\");
    if (!hasSeparator || path.isAbsolute(program) || workspaceFolder === undefined) {
        return program;
    }
    return path.resolve(workspaceFolder, program);
}

/** A sentence when the environment's Python is known to be too old, else undefined. */
export function olderThanMinimum(environment: PythonEnvironment): string | undefined {
    const { major, minor, micro } = environment.version ?? {};
    if (major === undefined || minor === undefined) {
        return undefined; // unknown: the installation check will tell
    }
    const isOlder = major < MINIMUM_PYTHON.major || (major === MINIMUM_PYTHON.major && minor < MINIMUM_PYTHON.minor);
    if (!isOlder) {
        return undefined;
    }
    const shown = [major, minor, micro].filter((part) => part !== undefined).join(".");
    return (
        `The Python extension's selected environment (${environment.executable}) is Python ${shown}, ` +
        `but torch-lsp needs Python ${MINIMUM_PYTHON.major}.${MINIMUM_PYTHON.minor} or newer. ` +
        "Select a newer interpreter (Python: Select Interpreter) or set torch-lsp.interpreter."
    );
}
