import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../scripts/openapi-document.js';
import { root, runTool } from './run-tool.js';

const dir = mkdtempSync(join(tmpdir(), 'copytrade-openapi-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Problem {
  ruleId: string;
  severity: 'error' | 'warn';
  message: string;
  location: Array<{ pointer: string }>;
}

describe('the OpenAPI document (GET /openapi.json)', () => {
  it("passes Redocly's recommended rules with no error", async () => {
    const file = join(dir, 'openapi.json');
    writeFileSync(file, JSON.stringify(await buildOpenApiDocument(), null, 2));
    const run = await runTool('redocly', ['lint', file, '--config', join(root, 'redocly.yaml'), '--format=json']);
    const report = JSON.parse(run.stdout) as { totals: { errors: number }; problems: Problem[] };
    const errors = report.problems
      .filter((p) => p.severity === 'error')
      .map((p) => `${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`);
    expect(errors).toEqual([]);
    expect(report.totals.errors).toBe(0);
    expect(run.code).toBe(0);
  }, 120_000);

  it('names each event envelope and references it from the webhooks', async () => {
    const doc = (await buildOpenApiDocument()) as {
      components: { schemas: Record<string, unknown> };
      webhooks: Record<string, { post: { requestBody: { content: Record<string, { schema: { $ref: string } }> } } }>;
    };
    const names = Object.keys(doc.components.schemas);
    expect(names.filter((n) => n.startsWith('def-'))).toEqual([]);
    expect(names).toContain('AccountStatusChangedEvent');
    expect(doc.webhooks['account.status_changed']!.post.requestBody.content['application/json']!.schema.$ref).toBe(
      '#/components/schemas/AccountStatusChangedEvent',
    );
    const referenced = new Set(
      Object.values(doc.webhooks).map((w) =>
        w.post.requestBody.content['application/json']!.schema.$ref.split('/').pop(),
      ),
    );
    for (const n of names.filter((x) => x.endsWith('Event'))) expect(referenced).toContain(n);
  });
});
