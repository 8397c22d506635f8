// Runs the CLI from source so its tests do not depend on a build.
import { run } from '../../src/cli/main.js';

await run(process.argv);
