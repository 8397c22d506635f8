/** Hands a front end its kept state at start and takes every change of it (durably, before the front end answers). */
export interface Keeper<T> {
  initial: T | null;
  save(state: T): void;
}
