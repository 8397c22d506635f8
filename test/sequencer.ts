import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Starts the slowest test files first, from the times test/budget.json records (`files`, seconds), so that with two
 * files at a time no long file starts near the end and runs alone: vitest orders by its own cache of the last run,
 * which `npm ci` deletes with node_modules, and falls back to file size, which put the 5-minute chaos test 40th.
 * Files the budget does not name keep vitest's order, after the named ones.
 */
export default class SlowestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const budget = JSON.parse(readFileSync(new URL('./budget.json', import.meta.url), 'utf8')) as {
      files?: Record<string, number>;
    };
    const known = budget.files ?? {};
    const seconds = (f: TestSpecification) => known[relative(f.project.config.root, f.moduleId)] ?? -1;
    // Array.prototype.sort is stable: among files the budget does not name, vitest's order stays.
    return sorted.sort((a, b) => seconds(b) - seconds(a));
  }
}
