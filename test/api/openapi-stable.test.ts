import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../scripts/openapi-document.js';

/**
 * The document does not depend on what the process built before it. Test files share a process on Node 20, and a
 * route that handed Fastify a module-level response schema lost part of it on the second server (the OAuth
 * callback's 400): CI's served document then differed from `npm run gen:api`'s.
 */
describe('the OpenAPI document', () => {
  it('is the same when built twice in one process', async () => {
    const first = JSON.stringify(await buildOpenApiDocument());
    const second = JSON.stringify(await buildOpenApiDocument());
    expect(second.length).toBe(first.length);
    expect(second === first).toBe(true);
  }, 60_000);
});
