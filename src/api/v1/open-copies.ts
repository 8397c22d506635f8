import { AppError } from '../../domain/errors.js';

/**
 * 409 open_copies: removing an account or deleting a group would leave copies open at the brokers that nothing
 * follows any more (the Master's closes would no longer reach them). The counts say which side holds them.
 */
export const openCopies = (message: string, counts: { asMaster: number; asSlave: number }) =>
  new AppError('open_copies', message, { details: { openCopies: counts } });
