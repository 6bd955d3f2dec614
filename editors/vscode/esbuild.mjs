// Bundles the extension and vscode-languageclient into dist/extension.js, so the
// .vsix carries no node_modules. `--production` minifies and drops the source map.
import * as esbuild from "esbuild";

const production = process.argv.includes("--production");

await esbuild.build({
    entryPoints: ["src/extension.ts"],
    outfile: "dist/extension.js",
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node20", // VS Code 1.90 runs extensions on Node.js 20
    external: ["vscode"], // provided by VS Code at run time
    minify: production,
    sourcemap: !production,
    logLevel: "warning",
});
