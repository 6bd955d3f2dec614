/**
 * The server's lifecycle: choose what runs it, check that torch-lsp is installed there
 * (offering to install it), start the client, and restart or stop it on request.
 * Starts and stops run one after the other, never interleaved.
 */
import * as os from "node:os";
import * as vscode from "vscode";
import { LanguageClient, State } from "vscode-languageclient/node";

import { BundledServer, findBundledServer, launchCandidates } from "./bundled";
import { createClient } from "./client";
import { checkInstallation } from "./installCheck";
import { runInstallTask } from "./installer";
import { chooseLaunch, LaunchChoice, PythonEnvironment, resolveProgram, substituteVariables } from "./interpreter";
import { describeCommand, serveCommand, ServerLaunch } from "./launch";
import { activeEnvironment, isPythonExtensionInstalled, SELECT_INTERPRETER_COMMAND } from "./pythonExtension";
import { explicitValue, SECTION, serverSettings } from "./settings";
import { ServerStatus } from "./status";

const INSTALL = "Install torch-lsp";
const SELECT_INTERPRETER = "Select Interpreter";
const OPEN_SETTINGS = "Open Settings";
const SHOW_OUTPUT = "Show Output";

export class ServerController implements vscode.Disposable {
    private client: LanguageClient | undefined;
    private running: ServerLaunch | undefined;
    private queue: Promise<void> = Promise.resolve();
    private stopRequested = false;
    private readonly bundled: BundledServer;

    constructor(
        private readonly ownFolder: string,
        private readonly output: vscode.OutputChannel,
        private readonly status: ServerStatus,
    ) {
        this.bundled = findBundledServer(ownFolder);
    }

    /** Stops the server if it runs, then starts it again; `reason` goes to the output. */
    restart(reason: string): Promise<void> {
        return this.enqueue(async () => {
            this.log(`Starting the server (${reason}).`);
            await this.stopClient();
            await this.start();
        });
    }

    /** Restarts only when the program that would run the server is not the one running it. */
    restartIfLaunchChanged(reason: string): Promise<void> {
        return this.enqueue(async () => {
            const choice = await this.chooseLaunch();
            if (choice.ok && this.client !== undefined && sameLaunch(choice.launch, this.running)) {
                return;
            }
            this.log(`Starting the server (${reason}).`);
            await this.stopClient();
            await this.start(choice);
        });
    }

    stop(): Promise<void> {
        return this.enqueue(() => this.stopClient());
    }

    dispose(): void {
        void this.stop();
    }

    private enqueue(step: () => Promise<void>): Promise<void> {
        this.queue = this.queue.then(step).catch((error: unknown) => {
            this.status.show("error", String(error));
            this.log(`torch-lsp stopped on an unexpected error: ${error instanceof Error ? error.stack : String(error)}`);
        });
        return this.queue;
    }

    private async start(chosen?: LaunchChoice): Promise<void> {
        this.status.show("starting", "Looking for the Python interpreter.");
        const choice = chosen ?? (await this.chooseLaunch());
        if (!choice.ok) {
            this.fail(choice.message, [SELECT_INTERPRETER, OPEN_SETTINGS]);
            return;
        }
        const failures: string[] = [];
        for (const candidate of launchCandidates(choice.launch, this.bundled)) {
            const command = describeCommand(serveCommand(candidate.launch));
            const check = await checkInstallation(candidate.launch, this.ownFolder);
            if (check.installed) {
                const detail = `torch-lsp ${check.version}, ${candidate.what}: ${command} (${choice.description})`;
                this.log(`Starting ${detail}`);
                await this.startClient(candidate.launch, detail);
                return;
            }
            this.log(`Not ${candidate.what}: ${check.detail}`);
            failures.push(check.detail);
        }
        this.offerFix(choice.launch, choice.description, failures.join(" "));
    }

    private async startClient(launch: ServerLaunch, detail: string): Promise<void> {
        const client = createClient({
            launch,
            cwd: this.ownFolder,
            output: this.output,
            settingsFor: (scope) => this.settingsFor(scope),
        });
        client.onDidChangeState((event) => this.showClientState(event.newState, detail));
        this.client = client;
        this.running = launch;
        this.stopRequested = false;
        try {
            await client.start();
        } catch (error) {
            this.fail(`The torch-lsp server could not be started (${detail}): ${String(error)}`, [SHOW_OUTPUT]);
        }
    }

    private showClientState(state: State, detail: string): void {
        if (state === State.Starting) {
            this.status.show("starting", detail);
        } else if (state === State.Running) {
            this.status.show("running", detail);
        } else {
            // Stopped without being asked to: the client gave up after repeated crashes.
            this.status.show(this.stopRequested ? "stopped" : "error", this.stopRequested ? detail : `The server stopped: ${detail}`);
        }
    }

    private async stopClient(): Promise<void> {
        const client = this.client;
        this.client = undefined;
        this.running = undefined;
        if (client === undefined) {
            return;
        }
        this.stopRequested = true;
        try {
            await client.stop();
        } catch (error) {
            this.log(`The server did not stop cleanly: ${String(error)}`);
        }
        this.status.show("stopped", "");
    }

    private chooseLaunch(): Promise<LaunchChoice> {
        const folder = vscode.workspace.workspaceFolders?.[0];
        const configuration = vscode.workspace.getConfiguration(SECTION, folder?.uri);
        const trusted = vscode.workspace.isTrusted;
        const launchSetting = (key: string) => explicitValue(configuration.inspect(key), { trusted, restricted: true });
        return chooseLaunch(launchSetting("path"), {
            configured: launchSetting("interpreter"),
            variables: { workspaceFolder: folder?.uri.fsPath, home: os.homedir(), env: process.env },
            trusted,
            // Without the Python extension, its setting python.defaultInterpreterPath still names the user's Python.
            activeEnvironment: async () =>
                (await activeEnvironment(folder?.uri, (line) => this.log(line))) ?? defaultInterpreterPath(folder?.uri),
            platform: process.platform,
        });
    }

    private settingsFor(scope: vscode.Uri | undefined): Record<string, unknown> {
        const resource = scope ?? vscode.workspace.workspaceFolders?.[0]?.uri;
        const configuration = vscode.workspace.getConfiguration(SECTION, resource);
        return serverSettings((key) => configuration.inspect(key), vscode.workspace.isTrusted);
    }

    private offerFix(launch: ServerLaunch, description: string, detail: string): void {
        if (launch.kind === "executable") {
            this.fail(
                `torch-lsp could not be run from torch-lsp.path (${launch.path}): ${detail} ` +
                    "Correct the torch-lsp.path setting, or clear it to run torch-lsp in the Python interpreter.",
                [OPEN_SETTINGS, SHOW_OUTPUT],
            );
            return;
        }
        this.fail(
            `torch-lsp could not run in the Python interpreter ${launch.python} (${description}), ` +
                `neither the server shipped with the extension nor one installed there or on PATH: ${detail} ` +
                "Install it there, select another interpreter (Python 3.10 or newer), or set torch-lsp.path.",
            [INSTALL, SELECT_INTERPRETER, SHOW_OUTPUT],
            () => this.install(launch.python, launch.pythonArgs),
        );
    }

    private async install(python: string, pythonArgs: readonly string[]): Promise<void> {
        const exitCode = await runInstallTask(python, pythonArgs, this.bundled.wheel, (line) => this.log(line));
        if (exitCode === 0) {
            await this.restart(`torch-lsp was installed in ${python}`);
            return;
        }
        const why = exitCode === undefined ? "the task could not be started" : `pip exited with status ${exitCode}`;
        this.fail(
            `Installing torch-lsp into ${python} failed (${why}); the terminal of the task shows pip's messages. ` +
                "Install it by hand or select another interpreter, then run torch-lsp: Restart Server.",
            [SELECT_INTERPRETER, SHOW_OUTPUT],
        );
    }

    /** Shows the error in the status bar, the output and a message with its buttons. */
    private fail(message: string, buttons: string[], install?: () => Promise<void>): void {
        this.status.show("error", message);
        this.log(message);
        const offered = buttons.filter((button) => button !== SELECT_INTERPRETER || isPythonExtensionInstalled());
        void vscode.window.showErrorMessage(message, ...offered).then((picked) => {
            if (picked === INSTALL && install) {
                void install();
            } else if (picked === SELECT_INTERPRETER) {
                void vscode.commands.executeCommand(SELECT_INTERPRETER_COMMAND);
            } else if (picked === OPEN_SETTINGS) {
                void vscode.commands.executeCommand("workbench.action.openSettings", SECTION);
            } else if (picked === SHOW_OUTPUT) {
                this.output.show(true);
            }
        });
    }

    private log(line: string): void {
        this.output.appendLine(`[${new Date().toLocaleTimeString()}] ${line}`);
    }
}

/** `python.defaultInterpreterPath` when set to something other than its default, `python`. */
function defaultInterpreterPath(scope: vscode.Uri | undefined): PythonEnvironment | undefined {
    const configured = vscode.workspace.getConfiguration("python", scope).get<string>("defaultInterpreterPath")?.trim();
    if (!configured || configured === "python") {
        return undefined;
    }
    const folder = vscode.workspace.getWorkspaceFolder(scope ?? vscode.Uri.file(os.homedir()))?.uri.fsPath;
    const variables = { workspaceFolder: folder ?? vscode.workspace.workspaceFolders?.[0]?.uri.fsPath, home: os.homedir(), env: process.env };
    return { executable: resolveProgram(substituteVariables(configured, variables), variables.workspaceFolder) };
}

function sameLaunch(a: ServerLaunch, b: ServerLaunch | undefined): boolean {
    return JSON.stringify(a) === JSON.stringify(b);
}
