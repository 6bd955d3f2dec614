// The real torch-lsp server, started with the command line the extension uses and told
// the settings the extension maps, over stdio as VS Code's client would. This is what
// the design rests on: the server reads the mapped keys from initializationOptions and
// from `workspace/configuration`, and asks again on `workspace/didChangeConfiguration`,
// so a changed rule setting needs no restart.
import assert from "node:assert/strict";
import { ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { test } from "node:test";
import {
    createMessageConnection,
    MessageConnection,
    PublishDiagnosticsParams,
    StreamMessageReader,
    StreamMessageWriter,
} from "vscode-languageserver-protocol/node";

import { serveCommand } from "../src/launch";
import { serverSettings } from "../src/settings";

// tests/editors/test_vscode_package.py sets this to the interpreter torch-lsp is installed in.
const PYTHON = process.env.TORCH_LSP_TEST_PYTHON;
const DIAGNOSTICS_TIMEOUT_MS = 60_000;

const SAMPLE = `import torch.nn.functional as F


def probabilities(logits):
    return F.softmax(logits)


def train(model, loader, optimizer):
    history = []
    for x, y in loader:
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        history.append(loss)
    return history
`;

/** The settings as VS Code would hold them after the user set them (user level). */
const userSettings = (values: Record<string, unknown>) => serverSettings((key) => ({ globalValue: values[key] }), true);

class Session {
    readonly received: PublishDiagnosticsParams[] = [];
    /** The methods the server registered for with client/registerCapability. */
    readonly registered: string[] = [];
    private waiters: (() => void)[] = [];
    /** What the client answers to `workspace/configuration` for "torch-lsp". */
    configuration: Record<string, unknown> = {};

    constructor(readonly connection: MessageConnection, readonly process: ChildProcess) {
        connection.onNotification("textDocument/publishDiagnostics", (params: PublishDiagnosticsParams) => {
            this.received.push(params);
            this.waiters.splice(0).forEach((wake) => wake());
        });
        connection.onRequest("workspace/configuration", (params: { items: { section?: string }[] }) =>
            params.items.map((item) => (item.section === "torch-lsp" ? this.configuration : null)),
        );
        connection.onRequest("client/registerCapability", (params: { registrations: { method: string }[] }) => {
            this.registered.push(...params.registrations.map((registration) => registration.method));
            return null;
        });
        connection.onRequest((_method: string, _params: unknown) => null); // window/workDoneProgress/create and the like
        connection.onNotification((_method: string, _params: unknown) => undefined); // window/logMessage and the like
        connection.listen();
    }

    /** The codes of the next published diagnostics for `uri` that satisfy `wanted`. */
    async codesWhen(uri: string, wanted: (codes: string[]) => boolean): Promise<Map<string, number>> {
        const deadline = Date.now() + DIAGNOSTICS_TIMEOUT_MS;
        for (;;) {
            const latest = this.received.filter((params) => params.uri === uri).at(-1);
            const codes = new Map((latest?.diagnostics ?? []).map((d) => [String(d.code), d.severity ?? 0]));
            if (latest && wanted([...codes.keys()])) {
                return codes;
            }
            assert.ok(Date.now() < deadline, `no diagnostics as expected for ${uri}; last: ${JSON.stringify(latest)}`);
            await new Promise<void>((wake) => {
                this.waiters.push(wake);
                setTimeout(wake, 1000);
            });
        }
    }
}

function startServer(python: string, cwd: string): Session {
    const line = serveCommand({ kind: "interpreter", python, pythonArgs: [] });
    const child = spawn(line.command, line.args, { cwd, stdio: ["pipe", "pipe", "inherit"] });
    const connection = createMessageConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
    return new Session(connection, child);
}

test("the server applies the mapped settings, and a changed setting without a restart", { skip: PYTHON ? false : "TORCH_LSP_TEST_PYTHON is not set", timeout: 120_000 }, async () => {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), "torch-lsp-workspace-"));
    const file = path.join(folder, "train.py");
    fs.writeFileSync(file, SAMPLE);
    const uri = pathToFileURL(file).href;
    const session = startServer(PYTHON ?? "", fs.mkdtempSync(path.join(os.tmpdir(), "torch-lsp-cwd-")));
    try {
        const mapped = userSettings({ ignore: ["TL201"], severity: { TL301: "error" } });
        session.configuration = mapped;
        await session.connection.sendRequest("initialize", {
            processId: process.pid,
            rootUri: pathToFileURL(folder).href,
            workspaceFolders: [{ uri: pathToFileURL(folder).href, name: "workspace" }],
            capabilities: { workspace: { configuration: true, didChangeConfiguration: { dynamicRegistration: true } } },
            initializationOptions: mapped,
        });
        await session.connection.sendNotification("initialized", {});
        await session.connection.sendNotification("textDocument/didOpen", {
            textDocument: { uri, languageId: "python", version: 1, text: SAMPLE },
        });
        const first = await session.codesWhen(uri, (codes) => codes.includes("TL301"));
        assert.equal(first.has("TL201"), false, "ignore: [TL201] was not applied");
        assert.equal(first.get("TL301"), 1, "severity: {TL301: error} was not applied");

        // VS Code's client sends workspace/didChangeConfiguration only to a server that
        // registered for it; it then sends a bare notification on any change, and the server pulls.
        assert.ok(session.registered.includes("workspace/didChangeConfiguration"), `registered: ${session.registered}`);
        session.configuration = userSettings({});
        await session.connection.sendNotification("workspace/didChangeConfiguration", { settings: null });
        const second = await session.codesWhen(uri, (codes) => codes.includes("TL201"));
        assert.equal(second.get("TL301"), 2, "TL301 should be back to its default severity, warning");

        await session.connection.sendRequest("shutdown");
        await session.connection.sendNotification("exit");
    } finally {
        session.connection.dispose();
        session.process.kill();
    }
});
