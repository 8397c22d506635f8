import { invalid } from '../errors.js';
import { levelsOf, type Levels, type SloRow } from './levels.js';
import { breachesOf, watchesAnything, type SloTarget } from './target.js';

/** [from, to) of a calendar month `YYYY-MM` in UTC; one that has not started is refused. */
export function monthPeriod(month: string, now: number): { from: Date; to: Date } {
  const m = /^(\d{4})-(\d{2})$/.exec(month);
  const y = m ? Number(m[1]) : Number.NaN;
  const mo = m ? Number(m[2]) : Number.NaN;
  if (!m || mo < 1 || mo > 12 || y < 2000) throw invalid('month must be YYYY-MM (UTC), from 2000-01');
  const from = new Date(Date.UTC(y, mo - 1, 1));
  if (from.getTime() > now) throw invalid(`the month ${month} has not started`);
  return { from, to: new Date(Date.UTC(y, mo, 1)) };
}

export interface MonthReport {
  levels: Levels;
  met: boolean | null;
  missed: string[];
  days: Array<{ day: string; levels: Levels }>;
}

/** One Slave's month: the levels of all its rows, each UTC day's (the history), and the month against the target. */
export function monthReport(rows: readonly SloRow[], target: SloTarget | null): MonthReport {
  const byDay = new Map<string, SloRow[]>();
  for (const r of rows) {
    const day = r.createdAt.toISOString().slice(0, 10);
    let list = byDay.get(day);
    if (!list) byDay.set(day, (list = []));
    list.push(r);
  }
  const levels = levelsOf(rows);
  const judged = target && watchesAnything(target);
  const missed = judged ? breachesOf(levels, target).map((b) => b.metric) : [];
  return {
    levels,
    met: judged ? missed.length === 0 : null,
    missed,
    days: [...byDay.keys()].sort().map((day) => ({ day, levels: levelsOf(byDay.get(day)!) })),
  };
}
