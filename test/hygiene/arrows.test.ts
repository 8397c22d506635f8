import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cruise, type ICruiseOptions, type ICruiseResult } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';

/**
 * The arrows of docs/architecture.md, kept by .dependency-cruiser.cjs: a new wrong import fails `npm test`.
 * The second case runs the same rules on a tiny tree with one wrong arrow per rule, so a rule that silently
 * stopped matching (a renamed folder, a broken regex) fails here too.
 */

const root = resolve(import.meta.dirname, '../..');

async function run(baseDir: string, tsConfig?: unknown): Promise<ICruiseResult> {
  const options: ICruiseOptions = await extractDepcruiseOptions(join(root, '.dependency-cruiser.cjs'));
  const { output } = await cruise(
    ['src'],
    { ...options, baseDir, validate: true, outputType: 'json' },
    undefined,
    tsConfig ? { tsConfig } : {},
  );
  return (typeof output === 'string' ? JSON.parse(output) : output) as ICruiseResult;
}

const described = (r: ICruiseResult) =>
  r.summary.violations.map(
    (v) =>
      `${v.rule.name}: ${v.from} -> ${v.to}${v.cycle ? ` (cycle ${v.cycle.map((c) => c.name).join(' -> ')})` : ''}`,
  );

describe('the import arrows', () => {
  it('src has no import that breaks a rule of docs/architecture.md', async () => {
    const result = await run(root, extractTSConfig(join(root, 'tsconfig.json')));
    expect(described(result)).toEqual([]);
    // A cruise that found nothing would pass too: make sure it saw the tree, the dashboard included.
    expect(result.summary.totalCruised).toBeGreaterThan(250);
    expect(result.modules.some((m) => m.source.startsWith('src/web/'))).toBe(true);
    expect(result.modules.some((m) => m.source === 'src/simulator/contract.ts')).toBe(true);
  }, 120_000);

  let fixture: string | null = null;
  afterAll(async () => {
    if (fixture) await rm(fixture, { recursive: true, force: true });
  });

  it('every rule fails on a tree with one wrong arrow for it', async () => {
    fixture = await mkdtemp(join(tmpdir(), 'arrows-'));
    const files: Record<string, string> = {
      'src/domain/rule.ts': "import type { Port } from '../platforms/adapter.js';\nexport type Rule = Port;\n",
      'src/platforms/adapter.ts': "import type { Row } from '../store/row.js';\nexport type Port = Row;\n",
      'src/store/row.ts': 'export type Row = { id: string };\n',
      'src/engine/uses-platform.ts':
        "import { tl } from '../platforms/tradelocker/adapter.js';\nexport const x = tl;\n",
      'src/engine/uses-simulator.ts':
        "import { SimBroker } from '../simulator/broker.js';\nexport const y = SimBroker;\n",
      'src/engine/a.ts': "import { b } from './b.js';\nexport const a = () => b;\n",
      'src/engine/b.ts': "import { a } from './a.js';\nexport const b = () => a;\n",
      'src/platforms/tradelocker/adapter.ts': "import { run } from '../../engine/a.js';\nexport const tl = run;\n",
      'src/platforms/sim/errors.ts':
        "import { SimBroker } from '../../simulator/broker.js';\nexport const e = SimBroker;\n",
      'src/platforms/sim/ok.ts':
        "import type { Contract } from '../../simulator/contract.js';\nexport type C = Contract;\n",
      'src/simulator/contract.ts': 'export type Contract = { id: string };\n',
      'src/simulator/broker.ts':
        "import { tl } from '../platforms/tradelocker/adapter.js';\nexport const SimBroker = tl;\n",
      'src/protocols/wire/codec.ts':
        "import { SimBroker } from '../../simulator/broker.js';\nexport const codec = SimBroker;\n",
      'src/web/page.tsx': "import { codec } from '../protocols/wire/codec.js';\nexport const Page = () => codec;\n",
    };
    for (const [path, text] of Object.entries(files)) {
      await mkdir(dirname(join(fixture, path)), { recursive: true });
      await writeFile(join(fixture, path), text);
    }
    const result = await run(fixture);
    const broken = new Set(result.summary.violations.map((v) => v.rule.name));
    expect([...broken].sort()).toEqual([
      'adapters-are-not-the-service',
      'adapters-use-only-the-simulator-contract',
      'domain-is-pure',
      'engine-knows-only-the-port',
      'no-cycles',
      'port-imports-only-the-domain',
      'protocols-are-neutral',
      'simulator-is-not-a-client',
      'web-is-not-the-server',
    ]);
    // The allowed arrow (an adapter to the simulator's published contract) is not reported.
    expect(described(result).filter((d) => d.includes('src/platforms/sim/ok.ts'))).toEqual([]);
    expect(described(result)).toContain(
      'engine-knows-only-the-port: src/engine/uses-simulator.ts -> src/simulator/broker.ts',
    );
  }, 120_000);
});
