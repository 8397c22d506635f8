import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// The package's own export, as a user of `copytrade/client` imports it (the README's example).
import { createCopytradeClient, CopytradeApiError, type Account } from 'copytrade/client';
import { startTestService, type TestService } from './helpers/service.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
}, 120_000);
afterAll(async () => {
  await svc?.close();
});

describe('copytrade/client, the typed client generated from the OpenAPI document', () => {
  it('reads typed answers with an API key and turns error answers into CopytradeApiError with the code', async () => {
    const ct = createCopytradeClient({ baseUrl: svc.v1BaseUrl, apiKey: svc.demo!.apiKey });
    const { accounts } = await ct.call(ct.api.GET('/v1/accounts'));
    const master: Account | undefined = accounts.find((a) => a.role === 'master' && a.name === 'Demo Master');
    expect(master).toMatchObject({ platform: 'sim', status: 'connected' });

    const err = await ct
      .call(ct.api.GET('/v1/trades/{trade_id}', { params: { path: { trade_id: 'trd_unknown' } } }))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CopytradeApiError);
    expect(err).toMatchObject({ status: 404, code: 'not_found', requestId: expect.stringMatching(/^req_/) });
  }, 60_000);
});
