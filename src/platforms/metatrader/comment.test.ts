import { describe, expect, it } from 'vitest';
import { correlationTag } from '../../domain/correlation.js';
import { fitComment, MT_COMMENT_LIMIT } from './comment.js';

describe('the 26-character comment rule', () => {
  it('keeps our 18-character tags whole and gives a comment only the room left', () => {
    const tag = correlationTag({ tradeId: 'trd_1', accountId: 'acc_1', action: 'open' });
    expect(tag).toHaveLength(18);
    expect(fitComment(tag, 'copytrade-service')).toEqual({ ok: true, clientId: tag, comment: 'copytrad' });
    const fit = fitComment(tag, 'copytrade-service');
    expect(fit.ok && fit.clientId.length + (fit.comment?.length ?? 0)).toBe(MT_COMMENT_LIMIT);
  });

  it('sends no comment when there is none or no room', () => {
    expect(fitComment('a'.repeat(26), 'x')).toEqual({ ok: true, clientId: 'a'.repeat(26) });
    expect(fitComment('abc')).toEqual({ ok: true, clientId: 'abc' });
  });

  it('refuses a tag that is too long, empty or not alphanumeric', () => {
    expect(fitComment('a'.repeat(27))).toMatchObject({ ok: false });
    expect(fitComment('')).toMatchObject({ ok: false });
    expect(fitComment('has space')).toMatchObject({ ok: false });
    expect(fitComment('RF_EURUSD_GjCy5lk')).toMatchObject({ ok: true });
  });
});
