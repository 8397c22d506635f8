import { describe, expect, it } from 'vitest';
import { Value } from 'typebox/value';
import { catalogue, envelopeSchema, EVENT_TYPES, isEventType } from './catalogue.js';

const envelope = (type: string, data: Record<string, unknown>) => ({
  id: 'evt_1',
  type,
  timestamp: new Date().toISOString(),
  accountId: 'acc_1',
  sequence: 1,
  schemaVersion: 1,
  data,
});

describe('event catalogue', () => {
  it('has exactly the types the engine and the deliverer emit, each with a versioned schema', () => {
    expect(EVENT_TYPES).toHaveLength(27);
    for (const item of catalogue()) {
      expect(item.schemaVersion).toBeGreaterThanOrEqual(1);
      expect((item.schema as { $id: string }).$id).toBe(`Event.${item.type}`);
      expect((item.schema as Record<string, unknown>)['x-open-point']).toBe(true);
    }
    expect(isEventType('order.accepted')).toBe(true);
    expect(isEventType('toString')).toBe(false);
  });

  it('accepts the payloads the engine writes today (shapes copied from order-service, panic-close and the health monitor)', () => {
    const samples: Array<[string, Record<string, unknown>]> = [
      [
        'order.accepted',
        { tradeId: 't', symbol: 'EURUSD', side: 'buy', volume: '0.1', copiedTo: 2, positionId: 'p', fillPrice: '1.1' },
      ],
      [
        'order.rejected',
        { tradeId: 't', requestId: null, symbol: 'EURUSD', side: 'buy', volume: '0.1', code: 'c', message: 'm' },
      ],
      [
        'copy.confirmed',
        {
          tradeId: 't',
          intentId: 'i',
          symbol: 'EURUSD',
          side: 'buy',
          volume: '0.1',
          positionId: 'p',
          orderId: null,
          fillPrice: '1.1',
          filledVolume: '0.1',
          slippage: null,
        },
      ],
      [
        'copy.unresolved',
        { tradeId: 't', intentId: 'i', symbol: 'EURUSD', side: 'buy', volume: '0.1', code: 'timeout', message: 'm' },
      ],
      ['copy.skipped', { tradeId: 't', intentId: 'i', reason: 'symbol_excluded', detail: 'd', symbol: 'EURUSD' }],
      [
        'position.opened',
        {
          role: 'slave',
          intentId: 'i',
          positionId: 'p',
          symbol: 'EURUSD',
          side: 'buy',
          volume: '0.1',
          price: null,
          masterPositionId: 'mp',
        },
      ],
      [
        'position.closed',
        {
          role: 'master',
          positionId: 'p',
          symbol: 'EURUSD',
          side: 'buy',
          volume: '0.1',
          price: '1.2',
          reason: 'panic_close',
        },
      ],
      ['panic_close.started', { scope: 'group', targetId: 'grp_1' }],
      ['panic_close.finished', { scope: 'account', targetId: 'acc_1', closed: 2, failed: 0, remaining: 0 }],
      [
        'account.health_changed',
        {
          before: {
            state: 'ok',
            connected: true,
            tradingAllowed: true,
            inSync: true,
            dataStale: false,
            reconnectRequired: false,
          },
          after: {
            state: 'down',
            connected: false,
            tradingAllowed: false,
            inSync: true,
            dataStale: true,
            reconnectRequired: false,
          },
          lastError: 'timeout',
        },
      ],
      ['account.status_changed', { before: 'connected', after: 'disconnected', reason: 'timeout' }],
      [
        'copy.loop_ignored',
        { kind: 'position', itemId: 'p', tag: 'ctabc', intentId: 'i', tradeId: 't', groupId: 'grp_1' },
      ],
      ['account.circuit_breaker_tripped', { actions: 61, windowMs: 60000, ceiling: 60, reason: 'r' }],
      ['webhook_endpoint.disabled', { endpointId: 'whe_1', url: 'https://x.test/h', reason: 'r', failingSince: null }],
      ['user.sign_in_failed', { attempt: 'sign_in', clientAddress: '127.0.0.1', failures: 6, retryAfterSec: 1 }],
      ['user.password_changed', { by: 'operator', tokensRevoked: 2 }],
      [
        'slo.breached',
        { groupId: 'grp_1', metric: 'latency_p99', value: 2300, target: 2000, detail: 'd', windowMinutes: 60 },
      ],
      [
        'slo.recovered',
        {
          groupId: 'grp_1',
          metric: 'drift',
          value: 'ok',
          target: 'minor',
          detail: 'd',
          windowMinutes: 60,
          breachedAt: '2026-01-01T00:00:00.000Z',
        },
      ],
    ];
    for (const [type, data] of samples)
      expect(Value.Check(envelopeSchema(type as never), envelope(type, data)), type).toBe(true);
    expect(Value.Check(envelopeSchema('order.accepted'), envelope('order.accepted', { tradeId: 't' }))).toBe(false);
    expect(
      Value.Check(
        envelopeSchema('order.accepted'),
        envelope('copy.confirmed', {
          tradeId: 't',
          symbol: 'x',
          side: 'buy',
          volume: '1',
          copiedTo: 0,
          positionId: null,
          fillPrice: null,
        }),
      ),
    ).toBe(false);
  });
});
