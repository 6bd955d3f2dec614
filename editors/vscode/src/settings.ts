/**
 * How VS Code's `torch-lsp.*` settings become the settings object the server reads
 * (server/settings.py: the keys of `[tool.torch-lsp]`, sent as initializationOptions
 * and as the answer to `workspace/configuration` for the section "torch-lsp").
 *
 * Pure: no `vscode` import, so node's test runner loads it as it is. The caller hands
 * in what `WorkspaceConfiguration.inspect` says about each setting.
 */

/** The configuration section: VS Code settings are `torch-lsp.<key>`. */
export const SECTION = "torch-lsp";

export interface ServerSetting {
    /** The key under `torch-lsp.` in VS Code (camelCase, like every VS Code setting). */
    readonly vscodeKey: string;
    /** The key the server reads: one of `KNOWN_KEYS` in server/settings.py. */
    readonly serverKey: string;
    /**
     * For a setting that lets the server run the user's code (the shape probe): the
     * value it always has in an untrusted workspace, whatever the settings say. Such a
     * setting is also a restricted configuration (see `restrictedSettings`).
     */
    readonly untrustedValue?: unknown;
}

/**
 * Every server setting the extension contributes. package.json must contribute
 * exactly these (test/package.test.ts checks it), plus `EXTENSION_SETTINGS`.
 *
 * A setting that lets the server run the workspace's code (the shape probe's
 * `probe.enabled`, `probe.python`) has an `untrustedValue` and is listed in package.json
 * under `capabilities.untrustedWorkspaces.restrictedConfigurations` (the test checks that
 * the list equals `restrictedSettings()`): the probe stays off in an untrusted workspace,
 * even when a user setting turns it on.
 */
export const SERVER_SETTINGS: readonly ServerSetting[] = [
    { vscodeKey: "select", serverKey: "select" },
    { vscodeKey: "extendSelect", serverKey: "extend-select" },
    { vscodeKey: "ignore", serverKey: "ignore" },
    { vscodeKey: "perFileIgnores", serverKey: "per-file-ignores" },
    { vscodeKey: "severity", serverKey: "severity" },
    { vscodeKey: "targetVersion", serverKey: "target-version" },
    { vscodeKey: "shapes.inlayHints", serverKey: "shapes.inlayHints" },
    // The shape probe runs the workspace's code: never in an untrusted workspace.
    { vscodeKey: "probe.enabled", serverKey: "probe.enabled", untrustedValue: false },
    { vscodeKey: "probe.python", serverKey: "probe.python", untrustedValue: null },
    { vscodeKey: "probe.device", serverKey: "probe.device" },
    { vscodeKey: "probe.timeout", serverKey: "probe.timeout" },
    { vscodeKey: "probe.memory", serverKey: "probe.memory" },
];

/** Settings that name a program to run: a workspace must not choose them unless trusted. */
export const LAUNCH_SETTINGS: readonly string[] = ["interpreter", "path"];

/** The extension's own settings, which are not sent to the server. */
export const EXTENSION_SETTINGS: readonly string[] = [...LAUNCH_SETTINGS, "trace.server"];

/** The fully qualified settings VS Code must ignore in an untrusted workspace's settings. */
export function restrictedSettings(table: readonly ServerSetting[] = SERVER_SETTINGS): string[] {
    const probeLike = table.filter((setting) => "untrustedValue" in setting).map((setting) => setting.vscodeKey);
    return [...LAUNCH_SETTINGS, ...probeLike].map((key) => `${SECTION}.${key}`);
}

/** The parts of `vscode.WorkspaceConfiguration.inspect()` this module reads. */
export interface SettingInspection {
    readonly defaultValue?: unknown;
    readonly globalValue?: unknown;
    readonly workspaceValue?: unknown;
    readonly workspaceFolderValue?: unknown;
}

export interface Trust {
    /** Whether the workspace is trusted (`vscode.workspace.isTrusted`). */
    readonly trusted: boolean;
    /** Whether this setting is a restricted configuration. */
    readonly restricted: boolean;
}

/**
 * The value the user set, or undefined when only the default applies.
 *
 * Only settings the user set count: the server's own layering is defaults <
 * pyproject `[tool.torch-lsp]` < editor, so sending a default would silently override
 * what the project's pyproject.toml says. In an untrusted workspace a restricted
 * setting takes only the user's own (global) value; VS Code filters `get()` that way,
 * and this applies the same rule to `inspect()`, which reports the raw values.
 */
export function explicitValue(inspection: SettingInspection | undefined, trust: Trust): unknown {
    if (inspection === undefined) {
        return undefined;
    }
    if (trust.restricted && !trust.trusted) {
        return inspection.globalValue;
    }
    return inspection.workspaceFolderValue ?? inspection.workspaceValue ?? inspection.globalValue;
}

/** Reads one `torch-lsp.<vscodeKey>` setting's inspection (an adapter over VS Code). */
export type Inspect = (vscodeKey: string) => SettingInspection | undefined;

/**
 * The settings object for the server: every server key, with the value the user set
 * or `null` for "not set" (the server then keeps the pyproject's value or its default),
 * and the forced values of probe-like settings in an untrusted workspace.
 *
 * The unset keys are sent as `null`, not left out: the server layers the answer to
 * `workspace/configuration` over the initializationOptions key by key, so a setting
 * the user removes must be overridden explicitly or its first value would stay.
 */
export function serverSettings(
    inspect: Inspect,
    trusted: boolean,
    table: readonly ServerSetting[] = SERVER_SETTINGS,
): Record<string, unknown> {
    const restricted = new Set(restrictedSettings(table));
    const settings: Record<string, unknown> = {};
    for (const setting of table) {
        if (!trusted && "untrustedValue" in setting) {
            settings[setting.serverKey] = setting.untrustedValue;
            continue;
        }
        const value = explicitValue(inspect(setting.vscodeKey), {
            trusted,
            restricted: restricted.has(`${SECTION}.${setting.vscodeKey}`),
        });
        settings[setting.serverKey] = value ?? null;
    }
    return settings;
}

/** Whether a change to `torch-lsp.<vscodeKey>` means the server process must be restarted. */
export function needsRestart(affects: (qualifiedKey: string) => boolean): boolean {
    // Server settings need no restart: the server registers for configuration changes
    // and pulls `workspace/configuration` again, which the extension answers.
    return LAUNCH_SETTINGS.some((key) => affects(`${SECTION}.${key}`));
}
