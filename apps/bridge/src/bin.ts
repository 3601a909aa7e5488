#!/usr/bin/env node
// Checked before anything is imported: on an older Node the bridge fails on imports (node:sqlite)
// and on loading bridge.config.ts, with errors that do not say why.
const major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  process.stderr.write(`[eve-flue] eve-flue-bridge needs Node 24 or later; this is Node ${process.version}\n`);
  process.exit(1);
}
await import('./cli.ts');
