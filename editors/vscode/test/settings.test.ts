import assert from "node:assert/strict";
import { test } from "node:test";

import {
    explicitValue,
    needsRestart,
    restrictedSettings,
    ServerSetting,
    SERVER_SETTINGS,
    serverSettings,
    SettingInspection,
} from "../src/settings";

/** An `inspect` over plain objects: user (global), workspace and folder values. */
function inspector(levels: {
    global?: Record<string, unknown>;
    workspace?: Record<string, unknown>;
    folder?: Record<string, unknown>;
}): (key: string) => SettingInspection {
    return (key) => ({
        defaultValue: "the default, never sent",
        globalValue: levels.global?.[key],
        workspaceValue: levels.workspace?.[key],
        workspaceFolderValue: levels.folder?.[key],
    });
}

test("every VS Code setting maps to the server's key", () => {
    const everything = {
        select: ["TL1"],
        extendSelect: ["TL409"],
        ignore: ["TL401"],
        perFileIgnores: { "tests/**": ["TL1"] },
        severity: { TL301: "error" },
        "shapes.inlayHints": false,
        "probe.enabled": true,
        "probe.python": "/usr/bin/python3",
        "probe.device": "cpu",
        "probe.timeout": 5,
        "probe.memory": 2048,
        targetVersion: "2.5",
    };
    assert.deepEqual(serverSettings(inspector({ global: everything }), true), {
        select: ["TL1"],
        "extend-select": ["TL409"],
        ignore: ["TL401"],
        "per-file-ignores": { "tests/**": ["TL1"] },
        severity: { TL301: "error" },
        "shapes.inlayHints": false,
        "probe.enabled": true,
        "probe.python": "/usr/bin/python3",
        "probe.device": "cpu",
        "probe.timeout": 5,
        "probe.memory": 2048,
        "target-version": "2.5",
    });
});

/** Every server key "not set" (null), with `values` on top. */
const unsetBut = (values: Record<string, unknown> = {}) => ({
    select: null,
    "extend-select": null,
    ignore: null,
    "per-file-ignores": null,
    severity: null,
    "shapes.inlayHints": null,
    "probe.enabled": null,
    "probe.python": null,
    "probe.device": null,
    "probe.timeout": null,
    "probe.memory": null,
    "target-version": null,
    ...values,
});

test("settings left at their default are sent as null (not set), so the pyproject's values stay in force", () => {
    assert.deepEqual(serverSettings(inspector({}), true), unsetBut());
    // null is also how a user unsets `select` explicitly.
    assert.deepEqual(serverSettings(inspector({ global: { select: null } }), true), unsetBut());
});

test("a false or empty value the user set is sent", () => {
    const settings = serverSettings(inspector({ global: { "shapes.inlayHints": false, select: [] } }), true);
    assert.deepEqual(settings, unsetBut({ select: [], "shapes.inlayHints": false }));
});

test("the folder's value beats the workspace's, which beats the user's", () => {
    const inspect = inspector({ global: { ignore: ["TL1"] }, workspace: { ignore: ["TL2"] }, folder: { ignore: ["TL3"] } });
    assert.deepEqual(serverSettings(inspect, true), unsetBut({ ignore: ["TL3"] }));
    const withoutFolder = inspector({ global: { ignore: ["TL1"] }, workspace: { ignore: ["TL2"] } });
    assert.deepEqual(serverSettings(withoutFolder, true), unsetBut({ ignore: ["TL2"] }));
});

test("an untrusted workspace's settings still apply to rule selection (it is not restricted)", () => {
    const inspect = inspector({ global: { ignore: ["TL1"] }, workspace: { ignore: ["TL2"] } });
    assert.deepEqual(serverSettings(inspect, false), unsetBut({ ignore: ["TL2"], "probe.enabled": false }));
});

test("a restricted setting takes only the user's value in an untrusted workspace", () => {
    const inspection = { globalValue: "/usr/bin/python3", workspaceValue: "./evil" };
    assert.equal(explicitValue(inspection, { trusted: false, restricted: true }), "/usr/bin/python3");
    assert.equal(explicitValue(inspection, { trusted: true, restricted: true }), "./evil");
    assert.equal(explicitValue({ workspaceValue: "./evil" }, { trusted: false, restricted: true }), undefined);
    assert.equal(explicitValue(undefined, { trusted: true, restricted: false }), undefined);
});

test("the interpreter, the executable path and the probe's switch and interpreter are restricted configurations", () => {
    assert.deepEqual(restrictedSettings(), [
        "torch-lsp.interpreter", "torch-lsp.path", "torch-lsp.probe.enabled", "torch-lsp.probe.python",
    ]);
});

const WITH_PROBE: readonly ServerSetting[] = SERVER_SETTINGS;

test("a probe-like setting is restricted and forced to its untrusted value", () => {
    assert.deepEqual(restrictedSettings(WITH_PROBE), restrictedSettings());
    const userTurnsItOn = inspector({ global: { "probe.enabled": true } });
    assert.deepEqual(serverSettings(userTurnsItOn, false, WITH_PROBE), unsetBut({ "probe.enabled": false }));
    assert.deepEqual(serverSettings(userTurnsItOn, true, WITH_PROBE), unsetBut({ "probe.enabled": true }));
    const workspaceTurnsItOn = inspector({ workspace: { "probe.enabled": true } });
    assert.deepEqual(serverSettings(workspaceTurnsItOn, true, WITH_PROBE), unsetBut({ "probe.enabled": true }));
    assert.deepEqual(serverSettings(workspaceTurnsItOn, false, WITH_PROBE), unsetBut({ "probe.enabled": false }));
    assert.deepEqual(serverSettings(inspector({}), true, WITH_PROBE), unsetBut({ "probe.enabled": null }));
});

test("only a change of the interpreter or the executable path restarts the server", () => {
    const changed = (...keys: string[]) => (key: string) => keys.includes(key);
    assert.equal(needsRestart(changed("torch-lsp.interpreter")), true);
    assert.equal(needsRestart(changed("torch-lsp.path")), true);
    assert.equal(needsRestart(changed("torch-lsp.select", "torch-lsp.shapes.inlayHints")), false);
    assert.equal(needsRestart(changed("editor.fontSize")), false);
});
