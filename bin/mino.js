#!/usr/bin/env node
// The published entry point: the bundled CLI, built by `npm ci` (prepare → build).
// CommonJS (bin/package.json), like dist/cli: Node then sets up no ES module loader.
/* global require */
// eslint-disable-next-line @typescript-eslint/no-require-imports
require("../dist/cli/main.js")
