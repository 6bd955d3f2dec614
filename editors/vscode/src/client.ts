/** The LanguageClient for one run of the server: how it is started and what it is told. */
import * as vscode from "vscode";
import {
    CancellationToken,
    ConfigurationParams,
    ConfigurationRequest,
    Executable,
    LanguageClient,
    LanguageClientOptions,
    RevealOutputChannelOn,
} from "vscode-languageclient/node";

import { commandEnvironment, serveCommand, ServerLaunch } from "./launch";
import { SECTION } from "./settings";

export const CLIENT_NAME = "torch-lsp";
/** The server's "Probe shapes…" code lens command: [uri, class name, input shape?, remembered shape?]. */
export const PROBE_COMMAND = "torch-lsp.probeShapes";

export interface ClientSetup {
    readonly launch: ServerLaunch;
    /** The server's working folder: one of the extension's own (see checkInstallation). */
    readonly cwd: string;
    readonly output: vscode.OutputChannel;
    /** The server settings for a resource (a workspace folder or file), or the window's. */
    readonly settingsFor: (scope: vscode.Uri | undefined) => Record<string, unknown>;
}

export function createClient(setup: ClientSetup): LanguageClient {
    const line = serveCommand(setup.launch);
    // No `transport`: with one, vscode-languageclient would append `--stdio` to the command.
    const server: Executable = { command: line.command, args: line.args, options: { cwd: setup.cwd, env: commandEnvironment(line) } };
    const options: LanguageClientOptions = {
        documentSelector: [
            { scheme: "file", language: "python" },
            { scheme: "untitled", language: "python" },
            // Python cells of Jupyter notebooks: the server declares notebook sync, so the
            // client sends each notebook as one (notebookDocument/*) and asks per cell.
            { notebook: "jupyter-notebook", language: "python" },
        ],
        outputChannel: setup.output,
        traceOutputChannel: setup.output,
        revealOutputChannelOn: RevealOutputChannelOn.Never,
        initializationOptions: setup.settingsFor(undefined),
        middleware: {
            workspace: {
                configuration: (params, token, next) => answerConfiguration(params, token, next, setup.settingsFor),
            },
            executeCommand: async (command, args, next) => {
                if (command === PROBE_COMMAND && !args[2]) {
                    const shape = await askInputShape(String(args[1]), args[3]);
                    if (shape === undefined) {
                        return undefined; // dismissed
                    }
                    return next(command, [args[0], args[1], shape]);
                }
                return next(command, args);
            },
        },
    };
    // The id is the settings section: the client reads `torch-lsp.trace.server` by it.
    return new LanguageClient(SECTION, CLIENT_NAME, server, options);
}

/**
 * Answers the server's `workspace/configuration` for the "torch-lsp" section with the
 * mapped settings (server keys, only what the user set); other sections go to VS Code.
 * The server asks again whenever a setting changes, so no restart is needed for them.
 */
async function answerConfiguration(
    params: ConfigurationParams,
    token: CancellationToken,
    next: ConfigurationRequest.HandlerSignature,
    settingsFor: ClientSetup["settingsFor"],
): Promise<unknown[] | Awaited<ReturnType<ConfigurationRequest.HandlerSignature>>> {
    const own = params.items.map((item) =>
        item.section === SECTION ? settingsFor(item.scopeUri ? vscode.Uri.parse(item.scopeUri) : undefined) : undefined,
    );
    if (own.every((answer) => answer !== undefined)) {
        return own;
    }
    const fromVsCode = await next(params, token);
    if (!Array.isArray(fromVsCode)) {
        return fromVsCode; // an error: pass it on
    }
    return own.map((answer, index) => answer ?? fromVsCode[index]);
}

/**
 * Asks for the input shape to probe a module class with ("Probe shapes…" lens): the
 * server's other clients pick from suggestions; here the user types any shape.
 */
async function askInputShape(className: string, remembered: unknown): Promise<string | undefined> {
    return vscode.window.showInputBox({
        title: `Probe ${className}`,
        prompt: "Input shape: a leading name is the batch; several inputs separated by ';'; 'long [B, 16]' for token ids",
        value: typeof remembered === "string" ? remembered : "[B, 3, 32, 32]",
        validateInput: (text) => (/^[\s\w\[\]();,x×]+$/.test(text) ? undefined : "Write a shape such as [B, 3, 32, 32]"),
    });
}
