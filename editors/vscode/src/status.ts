/** The status bar item that shows the server's state and opens the output on click. */
import * as vscode from "vscode";

export type ServerState = "starting" | "running" | "stopped" | "error";

const ICONS: Record<ServerState, string> = {
    starting: "$(loading~spin)",
    running: "$(check)",
    stopped: "$(circle-slash)",
    error: "$(error)",
};

const LABELS: Record<ServerState, string> = {
    starting: "starting",
    running: "running",
    stopped: "stopped",
    error: "not running (error)",
};

export class ServerStatus implements vscode.Disposable {
    private readonly item: vscode.StatusBarItem;
    private current: ServerState = "stopped";

    constructor(showOutputCommand: string) {
        this.item = vscode.window.createStatusBarItem("torch-lsp.status", vscode.StatusBarAlignment.Right, 100);
        this.item.name = "torch-lsp";
        this.item.command = showOutputCommand;
        this.show("stopped", "");
        this.item.show();
    }

    get state(): ServerState {
        return this.current;
    }

    /** `detail` says what runs the server, or what went wrong. */
    show(state: ServerState, detail: string): void {
        this.current = state;
        this.item.text = `${ICONS[state]} torch-lsp`;
        this.item.tooltip = [`torch-lsp: ${LABELS[state]}`, detail, "Click to show the output."].filter(Boolean).join("\n\n");
        this.item.backgroundColor = state === "error" ? new vscode.ThemeColor("statusBarItem.errorBackground") : undefined;
    }

    dispose(): void {
        this.item.dispose();
    }
}
