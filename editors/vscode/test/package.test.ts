// package.json against the code: the contributed settings are exactly the mapped ones,
// the restricted ones are exactly those the mapping treats as restricted, and
// engines.vscode matches the VS Code API the extension is compiled against.
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { test } from "node:test";

import { EXTENSION_SETTINGS, restrictedSettings, SECTION, SERVER_SETTINGS } from "../src/settings";

const ROOT = path.resolve(__dirname, "..", "..");
const readJson = (...parts: string[]) => JSON.parse(fs.readFileSync(path.join(ROOT, ...parts), "utf8"));
const manifest = readJson("package.json");
const properties: Record<string, Record<string, unknown>> = manifest.contributes.configuration.properties;

test("package.json contributes every mapped server setting and the extension's own, nothing else", () => {
    const expected = [...SERVER_SETTINGS.map((setting) => setting.vscodeKey), ...EXTENSION_SETTINGS].map((key) => `${SECTION}.${key}`);
    assert.deepEqual(Object.keys(properties).sort(), expected.sort());
});

test("every contributed setting has a description, a default and a type", () => {
    for (const [key, property] of Object.entries(properties)) {
        assert.ok(property.markdownDescription ?? property.description, `${key} has no description`);
        assert.ok("default" in property, `${key} has no default`);
        assert.ok(property.type, `${key} has no type`);
    }
});

test("restrictedConfigurations are exactly the settings the mapping restricts", () => {
    const trust = manifest.capabilities.untrustedWorkspaces;
    assert.equal(trust.supported, "limited");
    assert.deepEqual([...trust.restrictedConfigurations].sort(), restrictedSettings().sort());
});

test("engines.vscode is the minor version of @types/vscode the extension compiles against", () => {
    const engine = /^\^(\d+)\.(\d+)\.\d+$/.exec(manifest.engines.vscode);
    assert.ok(engine, `engines.vscode ${manifest.engines.vscode} is not ^MAJOR.MINOR.PATCH`);
    const types = /^~?(\d+)\.(\d+)\.\d+$/.exec(manifest.devDependencies["@types/vscode"]);
    assert.ok(types, "@types/vscode must be pinned to one minor version (~MAJOR.MINOR.PATCH)");
    const installed: string = readJson("node_modules", "@types", "vscode", "package.json").version;
    for (const version of [types.slice(1, 3), installed.split(".").slice(0, 2)]) {
        assert.deepEqual(version, engine.slice(1, 3), `@types/vscode ${version.join(".")} != engines.vscode ${manifest.engines.vscode}`);
    }
});

test("the commands are contributed with their titles, and the extension starts on Python files", () => {
    const commands = Object.fromEntries(
        manifest.contributes.commands.map((command: { command: string; category: string; title: string }) => [
            command.command,
            `${command.category}: ${command.title}`,
        ]),
    );
    assert.deepEqual(commands, {
        "torch-lsp.restart": "torch-lsp: Restart Server",
        "torch-lsp.showOutput": "torch-lsp: Show Output",
    });
    assert.ok(manifest.activationEvents.includes("onLanguage:python"));
    assert.equal(manifest.main, "./dist/extension.js");
});

test("the commands the extension registers are the ones contributed", () => {
    const source = fs.readFileSync(path.join(ROOT, "src", "extension.ts"), "utf8");
    const registered = [...source.matchAll(/export const \w+_COMMAND = "([^"]+)"/g)].map((match) => match[1]);
    assert.deepEqual(registered.sort(), manifest.contributes.commands.map((command: { command: string }) => command.command).sort());
});
