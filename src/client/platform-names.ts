/**
 * The broker platforms as a trader knows them. The API keeps the spec's codes (`platforma`, `platformb`,
 * `platformc`: the spec names the platforms by letter only, and its route segments are fixed), so every screen a
 * trader reads (the dashboard, its connection wizards, the CLI's tables) turns a code into a name here, in one
 * place. The dashboard may import nothing of the server but this file and the generated schema; the CLI and
 * `copytrade/client` users get the same names.
 */
export const PLATFORM_NAMES = {
  sim: 'Simulator',
  platforma: 'MetaTrader 4/5',
  platformb: 'TradeLocker',
  platformc: 'cTrader',
  platformd: 'DXtrade',
} as const satisfies Record<string, string>;

/** The name of a platform code; an unknown code (a platform this build does not know) is shown as it is. */
export function platformName(code: string): string {
  return Object.hasOwn(PLATFORM_NAMES, code) ? PLATFORM_NAMES[code as keyof typeof PLATFORM_NAMES] : code;
}
