import { describe, expect, it } from 'vitest';
import { exitOnFatalErrors } from './fatal-errors.js';

describe('exitOnFatalErrors', () => {
  const setup = () => {
    const handlers = new Map<string, (err: unknown) => void>();
    const logged: { fields: { err?: unknown; kind?: string }; msg: string }[] = [];
    const exits: number[] = [];
    exitOnFatalErrors({
      log: (fields, msg) => logged.push({ fields, msg }),
      exit: (code) => exits.push(code),
      on: (event, fn) => handlers.set(event, fn),
    });
    return { handlers, logged, exits };
  };

  it('logs an unhandled rejection at fatal with its error, then exits 1', () => {
    const { handlers, logged, exits } = setup();
    const err = new Error('boom');
    handlers.get('unhandledRejection')!(err);
    expect(logged).toEqual([
      { fields: { err, kind: 'unhandledRejection' }, msg: 'unhandled error: the process exits' },
    ]);
    expect(exits).toEqual([1]);
  });

  it('logs an uncaught exception once, and exits even when logging it throws', () => {
    const handlers = new Map<string, (err: unknown) => void>();
    const exits: number[] = [];
    exitOnFatalErrors({
      log: () => {
        throw new Error('log closed');
      },
      exit: (code) => exits.push(code),
      on: (event, fn) => handlers.set(event, fn),
    });
    expect(() => handlers.get('uncaughtException')!(new Error('first'))).toThrow('log closed');
    handlers.get('uncaughtException')!(new Error('second'));
    expect(exits).toEqual([1]);
  });
});
