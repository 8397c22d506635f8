/**
 * Trading sessions of the simulated market. The simulator never closes, so there is one session, open around
 * the clock every day with no holidays, and one session status that allows everything. /trade/instruments/{id}
 * names both ids (tradeSessionId, tradeSessionStatusId).
 */

export const SESSION_ID = 1;
export const SESSION_STATUS_ID = 1;

const DAYS = ['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY', 'SUNDAY'];

export function sessionDetails() {
  return {
    id: SESSION_ID,
    name: 'SIM 24/7',
    timeZone: 'UTC',
    holidays: [],
    schedule: DAYS.map((dayOfWeek) => ({ dayOfWeek, open: '00:00', close: '24:00' })),
  };
}

/** Flags as 0/1: allowedOperations [open, close, modify] (3), allowedOrderTypes (6), per fact sheet §8. */
export function sessionStatus() {
  return { allowedOperations: [1, 1, 1], allowedOrderTypes: [1, 1, 1, 1, 1, 1] };
}
