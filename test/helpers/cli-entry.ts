// The CLI from source through tsx: what tests start when dist/ is not the build of the sources (cli-command.ts).
import { run } from '../../src/cli/main.js';

await run(process.argv);
