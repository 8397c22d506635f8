import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { experimental_getRunnerTask as runnerTask } from 'vitest/node';
import type { Reporter, TestModule, TestRunEndReason, TestSpecification, TestSuite, Vitest } from 'vitest/node';

/**
 * Where a run's time goes, printed at the end of `npm test`: the run's wall time, then the slowest test files, each
 * with what the file's own process spent on importing it, in its tests (beforeEach/afterEach included, as vitest
 * counts them) and in its beforeAll/afterAll hooks (the file's time less its tests': services, stores, processes and
 * browsers shared by a file's tests start there). `COPYTRADE_TEST_TIMES=FILE` writes every file's figures as JSON.
 *
 * It also holds the suite to its budget (test/budget.json): a run of the whole suite that takes longer than
 * `wallSeconds` fails, with the slowest files printed above the reason. A run of some files only is not checked.
 */
interface Budget {
  /** One `npm test` of the whole suite, on each Node version CI runs. */
  wallSeconds: number;
}

interface FileTime {
  file: string;
  /** The file's time in its process: vitest's preparing it, importing it, and running its tests and hooks. */
  wallMs: number;
  importMs: number;
  testsMs: number;
  /** The file's time in its process less its tests': its beforeAll/afterAll hooks (and the gaps between tests). */
  hooksMs: number;
  tests: number;
  /** Its suites whose beforeAll/afterAll took longest (their time less their tests'), slowest first. */
  suites: { name: string; hooksMs: number }[];
  state: string;
}

const budgetFile = fileURLToPath(new URL('../budget.json', import.meta.url));
const SHOWN = 15;

const s = (ms: number) => `${(ms / 1000).toFixed(1)}s`;

function suiteHooks(suite: TestSuite | TestModule): number {
  let own = 0;
  for (const child of suite.children) {
    if (child.type === 'test') own += child.diagnostic()?.duration ?? 0;
    else own += suiteDuration(child);
  }
  return Math.max(0, suiteDuration(suite) - own);
}

function suiteDuration(suite: TestSuite | TestModule): number {
  // A suite's own duration (its runner task's) includes its beforeAll/afterAll, which its tests' durations do not.
  return runnerTask(suite as TestSuite).result?.duration ?? 0;
}

export default class FileTimes implements Reporter {
  private vitest: Vitest | undefined;
  private runStart = 0;
  private wholeSuite = false;

  onInit(vitest: Vitest): void {
    this.vitest = vitest;
  }

  async onTestRunStart(specifications: ReadonlyArray<TestSpecification>): Promise<void> {
    this.runStart = Date.now();
    const all = await this.vitest?.globTestSpecifications().catch(() => undefined);
    const ran = new Set(specifications.map((sp) => sp.moduleId));
    this.wholeSuite =
      all !== undefined &&
      all.length > 0 &&
      all.every((sp) => ran.has(sp.moduleId)) &&
      !this.vitest?.config.testNamePattern;
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>, _errors: unknown, reason: TestRunEndReason): void {
    const wallMs = Date.now() - this.runStart;
    const times: FileTime[] = modules.map((m) => {
      const d = m.diagnostic();
      const tests = [...m.children.allTests()];
      const testsMs = tests.reduce((sum, t) => sum + (t.diagnostic()?.duration ?? 0), 0);
      const suites = [m, ...m.children.allSuites()]
        .map((x) => ({ name: x.type === 'module' ? '(file)' : x.fullName, hooksMs: suiteHooks(x) }))
        .filter((x) => x.hooksMs >= 500)
        .sort((a, b) => b.hooksMs - a.hooksMs)
        .slice(0, 3);
      return {
        file: m.relativeModuleId,
        wallMs: Math.round(
          d.environmentSetupDuration + d.prepareDuration + d.setupDuration + d.collectDuration + d.duration,
        ),
        importMs: Math.round(d.collectDuration),
        testsMs: Math.round(testsMs),
        hooksMs: Math.round(Math.max(0, d.duration - testsMs)),
        tests: tests.length,
        suites: suites.map((x) => ({ name: x.name, hooksMs: Math.round(x.hooksMs) })),
        state: m.state(),
      };
    });
    times.sort((a, b) => b.wallMs - a.wallMs);
    const out = process.env.COPYTRADE_TEST_TIMES;
    if (out) writeFileSync(out, `${JSON.stringify({ wallMs, wholeSuite: this.wholeSuite, files: times }, null, 2)}\n`);

    const lines = ['', `slowest test files (of ${times.length}; wall: import + tests + beforeAll/afterAll):`];
    for (const t of times.slice(0, SHOWN)) {
      const hooks = t.suites.map((x) => `${x.name} ${s(x.hooksMs)}`).join('; ');
      lines.push(
        `  ${s(t.wallMs).padStart(7)}  ${t.file}  (import ${s(t.importMs)}, ${t.tests} tests ${s(t.testsMs)}, ` +
          `hooks ${s(t.hooksMs)}${hooks ? `: ${hooks}` : ''})`,
      );
    }
    const sum = times.reduce((a, t) => a + t.wallMs, 0);
    lines.push(`test run wall time ${s(wallMs)} (files' wall times add up to ${s(sum)})`);

    if (this.wholeSuite && reason !== 'interrupted') {
      const budget = JSON.parse(readFileSync(budgetFile, 'utf8')) as Budget;
      if (wallMs > budget.wallSeconds * 1000) {
        lines.push(
          `over budget: the whole suite took ${s(wallMs)}, test/budget.json allows ${budget.wallSeconds}s ` +
            '(find the file that grew above; raise the budget only with a reason in the commit)',
        );
        process.exitCode = 1;
      } else lines.push(`within budget: ${s(wallMs)} of ${budget.wallSeconds}s (test/budget.json)`);
    }
    process.stdout.write(`${lines.join('\n')}\n`);
  }
}
