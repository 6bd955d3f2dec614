"""The VS Code extension, built the way a user or CI builds it.

A copy of editors/vscode gets `npm ci`, its own unit tests (`npm test`: type-check and
node's test runner) and `npm run package`; the .vsix that comes out is then checked:
the bundled extension is there and needs nothing but VS Code and Node's own modules,
no node_modules or sources are shipped, and package.json contributes exactly the
server's settings (torch_lsp.settings.KNOWN_KEYS). The extension's settings mapping,
compiled by `npm test`, is run on sample values and its output fed to the server's
own settings reader, which must accept it without a complaint.

The .vsix ships the server (bundled/: the wheel of this checkout and its dependencies):
the extension's own launch code, run on the unpacked .vsix, starts it with a Python that has
nothing installed, from a scratch folder, with no `torch-lsp` on PATH, and it answers LSP.

Without `npm` on PATH the test is skipped, or fails where TORCH_LSP_REQUIRE_EDITORS is set (CI).
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.editors.vscode_build import Build, build_extension, run, user_environment
from torch_lsp.diagnostics import all_rules
from torch_lsp.settings import KNOWN_KEYS, Settings, load_project_settings, merge_editor_settings

# The build (npm ci, npm test, and packaging, which builds and bundles the server) takes
# minutes on a loaded machine; it is set up inside the first test's time limit.
pytestmark = pytest.mark.timeout(1200)

SECTION = "torch-lsp"
# The extension's own settings, which are not sent to the server.
EXTENSION_ONLY = {"interpreter", "path", "trace.server"}
# The settings that name a program to run: an untrusted workspace must not set them.
LAUNCH_SETTINGS = {"torch-lsp.interpreter", "torch-lsp.path"}
# Settings that make the server run the workspace's code (the shape probe).
PROBE_SETTINGS = {"torch-lsp.probe.enabled", "torch-lsp.probe.python"}


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory) -> Build:
    return build_extension(tmp_path_factory.mktemp("vscode-extension"))


def vsix_names(build: Build) -> list[str]:
    with zipfile.ZipFile(build.vsix) as archive:
        return archive.namelist()


def vsix_manifest(build: Build) -> dict:
    with zipfile.ZipFile(build.vsix) as archive:
        return json.loads(archive.read("extension/package.json"))


def camel_case(server_key: str) -> str:
    """`extend-select` -> `extendSelect`: how VS Code spells the server's keys."""
    return re.sub(r"-([a-z])", lambda match: match[1].upper(), server_key)


def mapped_settings(build: Build, user_values: dict, *, trusted: bool = True) -> dict:
    """What the extension's compiled mapping (out/src/settings.js) sends the server for
    `torch-lsp.*` settings the user set."""
    script = (
        "const { serverSettings } = require(process.env.MAPPING);"
        "const values = JSON.parse(process.env.USER_VALUES);"
        "const mapped = serverSettings((key) => ({ defaultValue: null, globalValue: values[key] }), process.env.TRUSTED === '1');"
        "process.stdout.write(JSON.stringify(mapped));"
    )
    env = {
        "MAPPING": str(build.folder / "out" / "src" / "settings.js"),
        "USER_VALUES": json.dumps(user_values),
        "TRUSTED": "1" if trusted else "0",
    }
    return json.loads(run([build.node, "-e", script], build.folder, **env))


# -- the extension's own tests ------------------------------------------------------------
def test_the_extensions_unit_tests_pass_and_none_is_skipped(build: Build) -> None:
    # The summary lines of node's test runner: "# pass 3" (TAP) or "ℹ pass 3" (spec reporter).
    counts = dict(re.findall(r"^(?:#|ℹ) (pass|fail|skipped) (\d+)$", build.test_output, re.MULTILINE))
    assert counts.get("fail") == "0", build.test_output[-4000:]
    assert int(counts.get("pass", "0")) > 0, build.test_output[-4000:]
    assert counts.get("skipped") == "0", build.test_output[-4000:]


# -- what the .vsix holds -----------------------------------------------------------------
def test_the_vsix_holds_the_bundled_extension_and_no_node_modules_or_sources(build: Build) -> None:
    names = vsix_names(build)
    assert "extension/dist/extension.js" in names
    assert "extension/package.json" in names and "extension/README.md" in names
    shipped_by_mistake = [
        name for name in names
        if "node_modules/" in name or name.endswith((".ts", ".map", ".vsix"))
        or name.startswith(("extension/src/", "extension/test/", "extension/out/"))
    ]
    assert shipped_by_mistake == []


def test_the_bundle_needs_only_vscode_and_nodes_own_modules(build: Build) -> None:
    with zipfile.ZipFile(build.vsix) as archive:
        bundle = archive.read("extension/dist/extension.js").decode()
    builtins = set(json.loads(run([build.node, "-p", "JSON.stringify(require('module').builtinModules)"], build.folder)))
    required = set(re.findall(r"""require\(["']([^"']+)["']\)""", bundle))
    outside = {name for name in required if name != "vscode" and name.removeprefix("node:") not in builtins}
    assert "vscode" in required
    assert outside == set(), "the bundle requires modules that the .vsix does not ship"
    # vscode-languageclient is inside the bundle, not required from node_modules.
    assert "workspace/configuration" in bundle


def test_the_vsix_manifest_targets_the_vscode_api_it_was_compiled_against(build: Build) -> None:
    manifest = vsix_manifest(build)
    installed = json.loads((build.folder / "node_modules" / "@types" / "vscode" / "package.json").read_text())
    engine = re.fullmatch(r"\^(\d+)\.(\d+)\.\d+", manifest["engines"]["vscode"])
    assert engine, manifest["engines"]
    assert installed["version"].split(".")[:2] == [engine[1], engine[2]]
    assert manifest["main"] == "./dist/extension.js"
    assert "onLanguage:python" in manifest["activationEvents"]


# -- the settings contract with the server --------------------------------------------------
def test_the_vsix_contributes_every_server_setting_and_no_other(build: Build) -> None:
    properties = vsix_manifest(build)["contributes"]["configuration"]["properties"]
    contributed = {key.removeprefix(f"{SECTION}.") for key in properties}
    assert contributed - EXTENSION_ONLY == {camel_case(key) for key in KNOWN_KEYS}
    assert EXTENSION_ONLY <= contributed
    for key, property in properties.items():
        assert property.get("markdownDescription") or property.get("description"), f"{key} has no description"
        assert "default" in property, f"{key} has no default"


def test_the_probe_is_off_by_default(build: Build) -> None:
    properties = vsix_manifest(build)["contributes"]["configuration"]["properties"]
    assert properties["torch-lsp.probe.enabled"]["default"] is False


def test_untrusted_workspaces_cannot_choose_the_program_that_runs_nor_turn_the_probe_on(build: Build) -> None:
    trust = vsix_manifest(build)["capabilities"]["untrustedWorkspaces"]
    assert trust["supported"] == "limited"
    assert set(trust["restrictedConfigurations"]) == LAUNCH_SETTINGS | PROBE_SETTINGS
    # Even the user's own setting cannot turn the probe on in an untrusted workspace.
    untrusted = mapped_settings(build, {"probe.enabled": True, "probe.python": "/tmp/evil"}, trusted=False)
    settings, errors = merge_editor_settings(Settings(), untrusted, root="/work/project")
    assert errors == [] and settings.probe_enabled is False and settings.probe.python is None


def test_the_server_accepts_every_mapped_setting_and_applies_it(build: Build) -> None:
    user_values = {
        "select": ["TL1", "TL3"],
        "extendSelect": ["TL409"],
        "ignore": ["TL101"],
        "perFileIgnores": {"tests/**": ["TL3"]},
        "severity": {"TL301": "error", "TL1": "hint"},
        "shapes.inlayHints": False,
        "targetVersion": "2.4",
        "probe.enabled": True,
        "probe.python": "/usr/bin/python3",
        "probe.device": "cpu",
        "probe.timeout": 5,
        "probe.memory": 2048,
        # The extension's own settings must never reach the server.
        "interpreter": ["/usr/bin/python3"],
        "path": "/usr/local/bin/torch-lsp",
    }
    mapped = mapped_settings(build, user_values)
    assert set(mapped) == set(KNOWN_KEYS) and None not in mapped.values(), mapped
    settings, errors = merge_editor_settings(Settings(), mapped, root="/work/project")
    assert errors == []
    assert settings.is_selected("TL102") and settings.is_selected("TL301") and settings.is_selected("TL409")
    assert not settings.is_selected("TL101") and not settings.is_selected("TL401")
    assert not settings.is_selected("TL301", "/work/project/tests/test_model.py")
    assert settings.severity_of("TL301") == "error" and settings.severity_of("TL102") == "hint"
    assert settings.inlay_hints is False
    assert settings.torch_version == "2.4"
    assert settings.probe_enabled is True
    assert (settings.probe.python, settings.probe.device, settings.probe.timeout, settings.probe.memory) == (
        "/usr/bin/python3", "cpu", 5, 2048)


def test_contributed_defaults_are_the_servers_defaults(build: Build) -> None:
    # A user who writes every default into settings.json gets what the server does by default.
    properties = vsix_manifest(build)["contributes"]["configuration"]["properties"]
    defaults = {
        key.removeprefix(f"{SECTION}."): property["default"]
        for key, property in properties.items()
        if key.removeprefix(f"{SECTION}.") not in EXTENSION_ONLY
    }
    settings, errors = merge_editor_settings(Settings(), mapped_settings(build, defaults), root="/work/project")
    assert errors == []
    default = Settings()
    assert settings.inlay_hints == default.inlay_hints
    assert settings.severity == default.severity
    assert (settings.probe_enabled, settings.probe) == (default.probe_enabled, default.probe)
    for code in all_rules():
        assert settings.is_selected(code) == default.is_selected(code), code


def test_settings_left_unset_leave_the_pyproject_in_force(build: Build, tmp_path: Path) -> None:
    # Unset settings go to the server as null ("not set"), which must not override the project.
    (tmp_path / "pyproject.toml").write_text('[tool.torch-lsp]\nignore = ["TL101"]\nshapes.inlayHints = false\n')
    project, errors, _ = load_project_settings(tmp_path / "train.py")
    assert errors == []
    unset = mapped_settings(build, {})
    assert unset == dict.fromkeys(KNOWN_KEYS)
    settings, errors = merge_editor_settings(project, unset, root=tmp_path)
    assert errors == []
    assert not settings.is_selected("TL101") and settings.inlay_hints is False


# -- the server the .vsix ships --------------------------------------------------------------
SUPPORTED_PYTHONS = ["310", "311", "312", "313"]
BUGGY = "import torch.nn.functional as F\n\n\ndef probabilities(logits):\n    return F.softmax(logits)\n"


def test_the_vsix_ships_the_server_its_dependencies_and_the_wheel_to_install(build: Build) -> None:
    names = set(vsix_names(build))
    libs = "extension/bundled/libs/"
    for package in ("torch_lsp", "pygls", "lsprotocol", "libcst", "attrs", "cattrs"):
        assert f"{libs}{package}/__init__.py" in names, package
    for python in SUPPORTED_PYTHONS:  # libcst's parser is compiled per CPython version
        assert any(re.fullmatch(rf"{libs}libcst/native\.cpython-{python}-.+\.(so|pyd)", name) for name in names), python
    version = vsix_manifest(build)["version"]
    assert f"extension/bundled/wheels/torch_lsp-{version}-py3-none-any.whl" in names
    assert not [name for name in names if "/__pycache__/" in name or name.startswith(f"{libs}bin/")]


@pytest.fixture(scope="module")
def unpacked(build: Build, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("unpacked-vsix")
    with zipfile.ZipFile(build.vsix) as archive:
        archive.extractall(folder)
    return folder / "extension"


def bare_python(folder: Path) -> Path:
    """A Python with nothing installed: a venv of this interpreter, without even pip."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True, timeout=120)
    python = folder / "bin" / "python"
    assert subprocess.run([str(python), "-c", "import torch_lsp"], capture_output=True,
                          env=user_environment()).returncode != 0
    return python


def lsp_message(payload: dict) -> bytes:
    body = json.dumps(payload).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def read_lsp_message(stream) -> dict:
    length = None
    while (line := stream.readline().strip()):
        name, _, value = line.partition(b":")
        if name.lower() == b"content-length":
            length = int(value)
    assert length is not None, "the server closed its output"
    return json.loads(stream.read(length))


def test_the_extension_starts_the_shipped_server_with_a_bare_python_and_no_torch_lsp_on_path(
        build: Build, unpacked: Path, tmp_path: Path) -> None:
    python = bare_python(tmp_path / "venv")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    # The extension's own code (compiled by `npm test`) picks the launch and checks it, as it does in VS Code.
    script = (
        "const { findBundledServer, launchCandidates } = require(process.env.OUT + '/bundled.js');"
        "const { checkInstallation } = require(process.env.OUT + '/installCheck.js');"
        "const { serveCommand } = require(process.env.OUT + '/launch.js');"
        "const [first] = launchCandidates({ kind: 'interpreter', python: process.env.BARE_PYTHON, pythonArgs: [] },"
        "  findBundledServer(process.env.EXTENSION));"
        "checkInstallation(first.launch, process.env.SCRATCH).then((check) =>"
        "  process.stdout.write(JSON.stringify({ what: first.what, check, serve: serveCommand(first.launch) })));"
    )
    env = {**user_environment(), "OUT": str(build.folder / "out" / "src"), "BARE_PYTHON": str(python),
           "EXTENSION": str(unpacked), "SCRATCH": str(scratch)}
    chosen = json.loads(subprocess.run([build.node, "-e", script], cwd=scratch, env=env, capture_output=True,
                                       text=True, timeout=120, check=True).stdout)
    assert chosen["what"] == "the server shipped with the extension"
    assert chosen["check"] == {"installed": True, "version": vsix_manifest(build)["version"]}, chosen
    serve = chosen["serve"]
    assert serve["env"]["PYTHONPATH"] == str(unpacked / "bundled" / "libs")

    document = scratch / "model.py"
    server = subprocess.Popen([serve["command"], *serve["args"]], cwd=scratch, env={**user_environment(), **serve["env"]},
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        server.stdin.write(lsp_message({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "processId": None, "rootUri": scratch.as_uri(), "capabilities": {}}}))
        server.stdin.flush()
        while "id" not in (answer := read_lsp_message(server.stdout)):
            pass
        assert answer["result"]["serverInfo"]["name"] == "torch-lsp", answer
        for payload in ({"jsonrpc": "2.0", "method": "initialized", "params": {}},
                        {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
                            "uri": document.as_uri(), "languageId": "python", "version": 1, "text": BUGGY}}}):
            server.stdin.write(lsp_message(payload))
        server.stdin.flush()
        while True:
            message = read_lsp_message(server.stdout)
            if message.get("method") == "textDocument/publishDiagnostics" and message["params"]["diagnostics"]:
                break
        assert [d["code"] for d in message["params"]["diagnostics"]] == ["TL201"]
    finally:
        server.kill()
        server.wait()
