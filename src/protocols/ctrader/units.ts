import { Decimal, type DecimalValue, dec } from '../../domain/decimal.js';

/**
 * Wire units of the Open API (fact sheet §6): volumes in cents of units, relative SL/TP and spot prices in
 * 1/100000 of a price unit, money as integers scaled by 10^moneyDigits. Shared by the adapter and the simulator.
 */

export const RELATIVE_PRICE_SCALE = 100_000;

/** lotSize on the wire is units per lot in cents: 100,000 units -> 10,000,000. */
export const lotSizeFromContractSize = (contractSize: Decimal): string => contractSize.mul(100).toFixed(0);

/** protocol volume = lots x lotSize; null when the result is not a whole number of cents of units. */
export function lotsToWireVolume(lots: Decimal, lotSize: DecimalValue): string | null {
  const v = lots.mul(lotSize);
  return v.isInteger() ? v.toFixed(0) : null;
}

export const wireVolumeToLots = (volume: DecimalValue, lotSize: DecimalValue): Decimal => dec(volume).div(lotSize);

/** Relative distance in 1/100000 price units, rounded to the nearest integer (the field is int64). */
export const toRelative = (distance: Decimal): string =>
  distance.abs().mul(RELATIVE_PRICE_SCALE).toDecimalPlaces(0, Decimal.ROUND_HALF_UP).toFixed(0);
export const fromRelative = (rel: DecimalValue): Decimal => dec(rel).div(RELATIVE_PRICE_SCALE);

export const toMoney = (amount: Decimal, moneyDigits: number): string =>
  amount.mul(dec(10).pow(moneyDigits)).toDecimalPlaces(0, Decimal.ROUND_HALF_UP).toFixed(0);
export const fromMoney = (scaled: DecimalValue, moneyDigits: number | undefined): Decimal =>
  dec(scaled).div(dec(10).pow(moneyDigits ?? 0));

/** Wire doubles carry real prices; round to the symbol's digits so binary noise never reaches a Decimal. */
export const priceFromDouble = (v: number, digits: number): Decimal =>
  dec(v).toDecimalPlaces(digits, Decimal.ROUND_HALF_UP);

export const msToIso = (ms: DecimalValue | undefined | null): string | null =>
  ms === undefined || ms === null || ms === '' ? null : new Date(Number(ms)).toISOString();
