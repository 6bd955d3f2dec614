/**
 * The torch-lsp extension: runs the torch-lsp language server for Python files and
 * keeps it in step with the settings, the selected interpreter and workspace trust.
 */
import * as vscode from "vscode";

import { ServerController } from "./controller";
import { onActiveEnvironmentChange } from "./pythonExtension";
import { needsRestart, SECTION } from "./settings";
import { ServerStatus } from "./status";

export const RESTART_COMMAND = "torch-lsp.restart";
export const SHOW_OUTPUT_COMMAND = "torch-lsp.showOutput";

let controller: ServerController | undefined;

export function activate(context: vscode.ExtensionContext): void {
    // One output for every run of the server, so a restart keeps the earlier log.
    const output = vscode.window.createOutputChannel("torch-lsp");
    const status = new ServerStatus(SHOW_OUTPUT_COMMAND);
    const server = new ServerController(context.extensionPath, output, status);
    controller = server;
    const log = (line: string) => output.appendLine(line);
    context.subscriptions.push(
        output,
        status,
        vscode.commands.registerCommand(RESTART_COMMAND, () => server.restart("the Restart Server command")),
        vscode.commands.registerCommand(SHOW_OUTPUT_COMMAND, () => output.show(true)),
        vscode.workspace.onDidChangeConfiguration((event) => {
            if (needsRestart((key) => event.affectsConfiguration(key))) {
                void server.restartIfLaunchChanged(`${SECTION}.interpreter or ${SECTION}.path changed`);
            }
        }),
        vscode.workspace.onDidGrantWorkspaceTrust(() => server.restart("the workspace is now trusted")),
        vscode.workspace.onDidChangeWorkspaceFolders(() => server.restartIfLaunchChanged("the workspace folders changed")),
    );
    void server.restart("a Python file was opened");
    // Activating the Python extension can take a while: do not hold up our own activation.
    void onActiveEnvironmentChange(
        () => void server.restartIfLaunchChanged("the Python extension's interpreter changed"),
        log,
    ).then((subscription) => subscription && context.subscriptions.push(subscription));
}

/** Stops the server; VS Code waits for it before it disposes the subscriptions. */
export function deactivate(): Promise<void> | undefined {
    return controller?.stop();
}
