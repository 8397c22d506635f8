import { describe, expect, it } from 'vitest';
import { lazySerializers, type Build as SerializerBuild } from './lazy-serializers.js';
import { lazyValidators, type Build as ValidatorBuild } from './lazy-validators.js';
import { RouteWarmup, tradingRoute } from './route-warmup.js';

describe('route warm-up', () => {
  it("compiles the chosen routes' serializers and validators ahead of their first use, and only those", async () => {
    const compiled: string[] = [];
    const warmup = new RouteWarmup();
    const serializers = lazySerializers(warmup, (() => (route: { url: string }) => {
      compiled.push(`serializer ${route.url}`);
      return (data: unknown) => JSON.stringify(data);
    }) as unknown as SerializerBuild)(null, null);
    const validators = lazyValidators(warmup, (() => (route: { url: string }) => {
      compiled.push(`validator ${route.url}`);
      return Object.assign((data: unknown) => data !== null, { errors: null });
    }) as unknown as ValidatorBuild)(null, null);
    const order = { schema: {}, method: 'POST', url: '/v1/accounts/:account_id/orders', httpStatus: '201' };
    const list = { schema: {}, method: 'GET', url: '/v1/accounts', httpStatus: '200' };
    const send = serializers(order);
    const validate = validators({ ...order, httpPart: 'body' });
    const read = serializers(list);
    expect(compiled).toEqual([]);

    expect(await warmup.warm(tradingRoute)).toBe(2);
    expect(compiled).toEqual([`serializer ${order.url}`, `validator ${order.url}`]);
    // Used afterwards: the same compiled functions, nothing compiled again; the route not chosen compiles on first use.
    expect(send({ a: 1 })).toBe('{"a":1}');
    expect(validate({})).toBe(true);
    expect(compiled).toHaveLength(2);
    expect(read([1])).toBe('[1]');
    expect(compiled).toEqual([`serializer ${order.url}`, `validator ${order.url}`, `serializer ${list.url}`]);
  });

  it('a schema that does not compile is left to its first request, and the others still compile', async () => {
    const warmup = new RouteWarmup();
    let n = 0;
    const serializers = lazySerializers(warmup, (() => (route: { url: string }) => {
      if (route.url.endsWith('/orders')) throw new Error('bad schema');
      n++;
      return () => '';
    }) as unknown as SerializerBuild)(null, null);
    const bad = serializers({ schema: {}, method: 'POST', url: '/v1/accounts/:account_id/orders', httpStatus: '201' });
    serializers({ schema: {}, method: 'POST', url: '/v1/accounts/:account_id/panic-close', httpStatus: '200' });
    expect(await warmup.warm(tradingRoute)).toBe(1);
    expect(n).toBe(1);
    expect(() => bad({})).toThrow('bad schema');
  });

  it('names the trading routes', () => {
    for (const url of [
      '/v1/accounts/:account_id/orders',
      '/v1/accounts/:account_id/panic-close',
      '/v1/copier-groups/:group_id/panic-close',
      '/v1/accounts/:account_id/positions/:position_id/close',
    ])
      expect(tradingRoute('POST', url), url).toBe(true);
    expect(tradingRoute('GET', '/v1/accounts/:account_id/orders')).toBe(false);
    expect(tradingRoute('POST', '/v1/webhooks')).toBe(false);
  });
});
