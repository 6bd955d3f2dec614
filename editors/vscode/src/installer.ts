/**
 * Installs torch-lsp into the interpreter that will run it: `python -m pip install` of the
 * wheel the extension ships, as a VS Code task, so pip's output stays visible in a terminal.
 */
import * as vscode from "vscode";

import { describeCommand, installCommand } from "./launch";

export const INSTALL_TASK_TYPE = "torch-lsp";
const INSTALL_TASK_NAME = "Install torch-lsp";

/** pip's exit status, or undefined when the task could not be started. */
export async function runInstallTask(
    python: string,
    pythonArgs: readonly string[],
    shippedWheel: string | undefined,
    log: (line: string) => void,
): Promise<number | undefined> {
    const line = installCommand(python, pythonArgs, shippedWheel);
    const scope = vscode.workspace.workspaceFolders?.[0] ?? vscode.TaskScope.Workspace;
    const task = new vscode.Task(
        { type: INSTALL_TASK_TYPE },
        scope,
        INSTALL_TASK_NAME,
        "torch-lsp",
        new vscode.ProcessExecution(line.command, line.args),
    );
    task.presentationOptions = { reveal: vscode.TaskRevealKind.Always, panel: vscode.TaskPanelKind.Dedicated, clear: true };
    log(`Installing torch-lsp: ${describeCommand(line)}`);
    return new Promise((resolve) => {
        const ended = vscode.tasks.onDidEndTaskProcess((event) => {
            const ours = event.execution.task;
            if (ours.definition.type === INSTALL_TASK_TYPE && ours.name === INSTALL_TASK_NAME) {
                ended.dispose();
                resolve(event.exitCode);
            }
        });
        vscode.tasks.executeTask(task).then(undefined, (error: unknown) => {
            ended.dispose();
            log(`The installation task could not be started (${String(error)}). Run \`${describeCommand(line)}\` in a terminal.`);
            resolve(undefined);
        });
    });
}
