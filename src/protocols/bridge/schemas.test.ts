import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EA_MESSAGES, SERVICE_MESSAGES } from './schemas.js';
import { parseEaMessage, parseServiceMessage } from './validate.js';

const dir = join(import.meta.dirname, '../../../docs/bridge-protocol/schemas');
const all = { ...EA_MESSAGES, ...SERVICE_MESSAGES };
const fileText = (type: string, schema: unknown) =>
  `${JSON.stringify({ $schema: 'https://json-schema.org/draft/2020-12/schema', title: type, ...(schema as object) }, null, 2)}\n`;

describe('bridge protocol schemas', () => {
  it('docs/bridge-protocol/schemas holds every message schema as generated from schemas.ts', () => {
    for (const [type, schema] of Object.entries(all)) {
      const path = join(dir, `${type}.json`);
      // BRIDGE_SCHEMAS_WRITE=1 regenerates the files after a change to schemas.ts.
      if (process.env.BRIDGE_SCHEMAS_WRITE === '1') writeFileSync(path, fileText(type, schema));
      // Compared as JSON, so the formatter may lay the files out its way.
      expect(JSON.parse(readFileSync(path, 'utf8')), `${type}.json is stale: run with BRIDGE_SCHEMAS_WRITE=1`).toEqual(
        JSON.parse(fileText(type, schema)),
      );
    }
  });

  it('refuses what is not a valid message, naming why', () => {
    expect(parseEaMessage('{nope')).toMatchObject({ ok: false, code: 'malformed_json' });
    expect(parseEaMessage('[]')).toMatchObject({ ok: false, code: 'unknown_type' });
    expect(parseEaMessage('{"type":"order"}')).toMatchObject({ ok: false, code: 'unknown_type' });
    // A service message is not an EA message.
    expect(parseEaMessage('{"type":"received","seq":1}')).toMatchObject({ ok: false, code: 'unknown_type' });
    const hb = { type: 'heartbeat', balance: '10.5', equity: '11', tradeAllowed: true, time: 1 };
    expect(parseEaMessage(JSON.stringify(hb))).toMatchObject({ ok: true });
    // No coercion: a number where a decimal string belongs fails, as does an extra field.
    expect(parseEaMessage(JSON.stringify({ ...hb, balance: 10.5 }))).toMatchObject({
      ok: false,
      code: 'schema_violation',
      message: expect.stringContaining('/balance'),
    });
    expect(parseEaMessage(JSON.stringify({ ...hb, extra: 1 }))).toMatchObject({ ok: false, code: 'schema_violation' });
    expect(parseEaMessage(JSON.stringify({ ...hb, balance: '1e5' }))).toMatchObject({ ok: false });
    expect(parseServiceMessage('{"type":"received","seq":3}')).toMatchObject({ ok: true });
    expect(parseServiceMessage('{"type":"received","seq":-1}')).toMatchObject({ ok: false, code: 'schema_violation' });
  });
});
