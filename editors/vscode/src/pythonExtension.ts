/**
 * The Python extension's environments API (ms-python.python), reached without a
 * dependency on it: the extension may be absent, inactive, or too old to have the API.
 * The types are the parts of `@vscode/python-extension` this extension reads.
 */
import * as vscode from "vscode";

import { PythonEnvironment } from "./interpreter";

export const PYTHON_EXTENSION_ID = "ms-python.python";
export const SELECT_INTERPRETER_COMMAND = "python.setInterpreter";

interface EnvironmentPath {
    readonly id: string;
    readonly path: string;
}

interface ResolvedEnvironment {
    readonly executable: { readonly uri: vscode.Uri | undefined };
    readonly version?: { readonly major?: number; readonly minor?: number; readonly micro?: number };
}

interface EnvironmentsApi {
    getActiveEnvironmentPath(resource?: vscode.Uri): EnvironmentPath;
    resolveEnvironment(environment: EnvironmentPath | string): Promise<ResolvedEnvironment | undefined>;
    readonly onDidChangeActiveEnvironmentPath: vscode.Event<unknown>;
}

interface PythonExtensionApi {
    readonly ready?: Promise<void>;
    readonly environments?: EnvironmentsApi;
}

export function isPythonExtensionInstalled(): boolean {
    return vscode.extensions.getExtension(PYTHON_EXTENSION_ID) !== undefined;
}

async function environmentsApi(log: (line: string) => void): Promise<EnvironmentsApi | undefined> {
    const extension = vscode.extensions.getExtension<PythonExtensionApi>(PYTHON_EXTENSION_ID);
    if (extension === undefined) {
        return undefined;
    }
    try {
        const api = extension.isActive ? extension.exports : await extension.activate();
        await api?.ready;
        if (api?.environments === undefined) {
            log("The Python extension has no environments API (it is older than 2023.6); it is not asked for an interpreter.");
        }
        return api?.environments;
    } catch (error) {
        log(`The Python extension could not be activated, so it is not asked for an interpreter: ${String(error)}`);
        return undefined;
    }
}

/** The active environment for `resource`, or undefined without the Python extension. */
export async function activeEnvironment(
    resource: vscode.Uri | undefined,
    log: (line: string) => void,
): Promise<PythonEnvironment | undefined> {
    const environments = await environmentsApi(log);
    if (environments === undefined) {
        return undefined;
    }
    const active = environments.getActiveEnvironmentPath(resource);
    const resolved = await environments.resolveEnvironment(active);
    if (resolved?.executable.uri === undefined) {
        log(`The Python extension's active environment (${active.path}) has no interpreter it could resolve.`);
        return undefined;
    }
    return { executable: resolved.executable.uri.fsPath, version: resolved.version };
}

/** Calls `listener` when the user selects another interpreter in the Python extension. */
export async function onActiveEnvironmentChange(
    listener: () => void,
    log: (line: string) => void,
): Promise<vscode.Disposable | undefined> {
    const environments = await environmentsApi(log);
    return environments?.onDidChangeActiveEnvironmentPath(() => listener());
}
