import type { Reporter, TestModule } from 'vitest/node';

/**
 * When a test file's process dies (a signal, a crash of the runtime), vitest reports only "Worker exited
 * unexpectedly", without the file: its count says "210 passed (211)" and nothing more. This names every file that
 * neither passed nor failed, and the test that was running in it, in the last lines of the output (where a CI log's
 * tail shows them).
 */
export default class UnfinishedFiles implements Reporter {
  private started = new Map<string, number>();

  onTestModuleStart(module: TestModule): void {
    this.started.set(module.moduleId, Date.now());
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const unfinished = modules.filter((m) => !['passed', 'failed', 'skipped'].includes(m.state()));
    if (unfinished.length === 0) return;
    const lines = ['', `test files that did not finish (their process died?): ${unfinished.length}`];
    for (const m of unfinished) {
      const since = this.started.get(m.moduleId);
      const ran = since === undefined ? 'never started' : `started ${new Date(since).toISOString()}`;
      lines.push(`  ${m.relativeModuleId} (${m.state()}, ${ran})`);
      for (const t of m.children.allTests()) {
        const state = t.result().state;
        if (state !== 'passed') lines.push(`    ${state}: ${t.fullName}`);
      }
    }
    process.stderr.write(`${lines.join('\n')}\n`);
  }
}
