#!/usr/bin/env node
// The published entry point: the bundled CLI, built by `npm ci` (prepare → build).
import "../dist/cli/main.js"
