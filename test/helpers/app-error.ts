import { expect } from 'vitest';
import { AppError } from '../../src/domain/errors.js';

/** The AppError a call rejects with; fails the test if it resolves or throws anything else. */
export async function appError(p: Promise<unknown>): Promise<AppError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    return err as AppError;
  }
  throw new Error('expected the call to throw an AppError');
}
