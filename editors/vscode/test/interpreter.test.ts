import assert from "node:assert/strict";
import * as path from "node:path";
import { test } from "node:test";

import {
    chooseInterpreter,
    chooseLaunch,
    configuredCommand,
    InterpreterSources,
    PathVariables,
    PythonEnvironment,
    substituteVariables,
} from "../src/interpreter";

const FOLDER = path.resolve("/work/project");
const VARIABLES: PathVariables = { workspaceFolder: FOLDER, home: "/home/ada", env: { VENV: "/opt/venv" } };

/** The sources with no setting, a trusted workspace and the Python extension absent. */
function sources(overrides: Partial<InterpreterSources> = {}): InterpreterSources {
    return {
        configured: undefined,
        variables: VARIABLES,
        trusted: true,
        activeEnvironment: async () => undefined,
        platform: "linux",
        ...overrides,
    };
}

const pythonExtensionWith = (environment: PythonEnvironment) => async () => environment;
const mustNotAsk = async (): Promise<PythonEnvironment> => {
    throw new Error("the Python extension must not be asked");
};

test("the torch-lsp.interpreter setting comes first, and is used without asking the Python extension", async () => {
    const choice = await chooseInterpreter(sources({ configured: ["/usr/bin/python3.12", "-X", "utf8"], activeEnvironment: mustNotAsk }));
    assert.deepEqual(choice, { ok: true, command: "/usr/bin/python3.12", args: ["-X", "utf8"], source: "setting" });
});

test("the setting may be a plain string", async () => {
    const choice = await chooseInterpreter(sources({ configured: "${workspaceFolder}/.venv/bin/python", activeEnvironment: mustNotAsk }));
    assert.deepEqual(choice, { ok: true, command: path.join(FOLDER, ".venv/bin/python"), args: [], source: "setting" });
});

test("an empty setting falls through to the Python extension's environment", async () => {
    for (const configured of [undefined, null, [], "", ["  "]]) {
        const choice = await chooseInterpreter(
            sources({ configured, activeEnvironment: pythonExtensionWith({ executable: "/envs/a/bin/python", version: { major: 3, minor: 11 } }) }),
        );
        assert.deepEqual(choice, { ok: true, command: "/envs/a/bin/python", args: [], source: "python-extension" }, String(configured));
    }
});

test("without the Python extension (or an environment with no interpreter) python3 is used", async () => {
    assert.deepEqual(await chooseInterpreter(sources()), { ok: true, command: "python3", args: [], source: "default" });
    const noExecutable = sources({ activeEnvironment: pythonExtensionWith({ executable: undefined }) });
    assert.deepEqual(await chooseInterpreter(noExecutable), { ok: true, command: "python3", args: [], source: "default" });
    assert.deepEqual(await chooseInterpreter(sources({ platform: "win32" })), { ok: true, command: "python", args: [], source: "default" });
});

test("an untrusted workspace does not run the Python extension's (possibly workspace-local) environment", async () => {
    const choice = await chooseInterpreter(sources({ trusted: false, activeEnvironment: mustNotAsk }));
    assert.deepEqual(choice, { ok: true, command: "python3", args: [], source: "default" });
});

test("an environment older than Python 3.10 is refused with a sentence that says what to do", async () => {
    const old = sources({ activeEnvironment: pythonExtensionWith({ executable: "/envs/old/bin/python", version: { major: 3, minor: 8, micro: 10 } }) });
    const choice = await chooseInterpreter(old);
    assert.equal(choice.ok, false);
    assert.match(!choice.ok ? choice.message : "", /\/envs\/old\/bin\/python\) is Python 3\.8\.10, but torch-lsp needs Python 3\.10 or newer\. Select a newer interpreter/);
    const unknownVersion = sources({ activeEnvironment: pythonExtensionWith({ executable: "/envs/x/bin/python" }) });
    assert.equal((await chooseInterpreter(unknownVersion)).ok, true);
});

test("a setting of the wrong type is reported, not guessed at", async () => {
    for (const configured of [42, { path: "python" }, ["python", 3]]) {
        const choice = await chooseInterpreter(sources({ configured, activeEnvironment: mustNotAsk }));
        assert.equal(choice.ok, false, JSON.stringify(configured));
        assert.match(!choice.ok ? choice.message : "", /torch-lsp\.interpreter setting must be a path or a list of strings/);
    }
});

test("variables and ~ are substituted", () => {
    assert.equal(substituteVariables("${userHome}/bin/python", VARIABLES), "/home/ada/bin/python");
    assert.equal(substituteVariables("~/bin/python", VARIABLES), "/home/ada/bin/python");
    assert.equal(substituteVariables("${env:VENV}/bin/python", VARIABLES), "/opt/venv/bin/python");
    assert.equal(substituteVariables("${env:MISSING}python", VARIABLES), "python");
    assert.equal(substituteVariables("a~b", VARIABLES), "a~b");
    const noFolder = { ...VARIABLES, workspaceFolder: undefined };
    assert.equal(substituteVariables("${workspaceFolder}/.venv/bin/python", noFolder), "${workspaceFolder}/.venv/bin/python");
});

test("a relative path is relative to the workspace folder; a bare name is left for PATH", () => {
    assert.deepEqual(configuredCommand([".venv/bin/python"], VARIABLES), [path.join(FOLDER, ".venv/bin/python")]);
    assert.deepEqual(configuredCommand(["python3.12"], VARIABLES), ["python3.12"]);
    assert.deepEqual(configuredCommand(["/abs/python", "-I"], VARIABLES), ["/abs/python", "-I"]);
});

test("torch-lsp.path, when set, is run instead of any interpreter", async () => {
    const choice = await chooseLaunch("~/bin/torch-lsp", sources({ configured: ["/usr/bin/python3"], activeEnvironment: mustNotAsk }));
    assert.deepEqual(choice, { ok: true, launch: { kind: "executable", path: "/home/ada/bin/torch-lsp" }, description: "set in torch-lsp.path" });
});

test("without torch-lsp.path the interpreter runs the server", async () => {
    for (const pathSetting of [undefined, null, "", "  "]) {
        const choice = await chooseLaunch(pathSetting, sources({ configured: "/usr/bin/python3" }));
        assert.deepEqual(choice, {
            ok: true,
            launch: { kind: "interpreter", python: "/usr/bin/python3", pythonArgs: [] },
            description: "set in torch-lsp.interpreter",
        });
    }
    const refused = await chooseLaunch(7, sources());
    assert.equal(refused.ok, false);
});
