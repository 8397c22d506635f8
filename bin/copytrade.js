#!/usr/bin/env node
// Thin launcher: the compiled CLI lives in dist/ (built by `npm ci` through the prepare script).
import module from 'node:module';

// Node 22.1 and later keep V8's compiled code of every module on disk (a cache in the temp dir, checked against
// each file's content), so a start after the first does not compile the service and its dependencies again.
// Node 20 has no such cache: nothing changes there.
module.enableCompileCache?.();

import('../dist/src/cli/main.js')
  .then((m) => m.run(process.argv))
  .catch((err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
