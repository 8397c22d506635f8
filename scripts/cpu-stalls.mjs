#!/usr/bin/env node
// The longest stretches without an idle sample in a V8 CPU profile (node --cpu-prof), and what ran in them: a
// stretch is when the event loop could not turn, so this names the code behind an event-loop stall.
// Usage: node scripts/cpu-stalls.mjs FILE.cpuprofile [minMs=50] [top=10] [fromSec=0] (seconds into the profile)
import { loadProfile } from './cpu-profile.mjs';

const [file, minArg, topArg, fromArg] = process.argv.slice(2);
if (!file) {
  console.error('usage: node scripts/cpu-stalls.mjs FILE.cpuprofile [minMs=50] [top=10] [fromSec=0]');
  process.exit(2);
}
const minMs = Number(minArg ?? 50);
const top = Number(topArg ?? 10);
const fromSec = Number(fromArg ?? 0);
const { prof, byId, parent, name, isOurs } = loadProfile(file);

// The innermost frame of our own code on a sample's stack says which of our calls the time belongs to.
const ours = (id) => {
  for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
    const n = byId.get(cur);
    if (isOurs(n)) return name(n);
  }
  return '(no frame of ours)';
};
const isIdle = (id) => byId.get(id).callFrame.functionName === '(idle)';

// Sample i lasts timeDeltas[i + 1] microseconds (the delta recorded with the next sample).
const { samples, timeDeltas } = prof;
const t = [];
let acc = prof.startTime;
for (const d of timeDeltas) t.push((acc += d));

const runs = [];
let start = -1;
for (let i = 0; i < samples.length; i++) {
  if (!isIdle(samples[i])) {
    if (start < 0) start = i;
    continue;
  }
  if (start >= 0) runs.push([start, i]);
  start = -1;
}
if (start >= 0) runs.push([start, samples.length]);

const long = runs
  .map(([a, b]) => ({ a, b, ms: (t[b - 1 < a ? a : b] - t[a]) / 1000 }))
  .filter((r) => r.ms >= minMs && t[r.a] - t[0] >= fromSec * 1e6)
  .sort((x, y) => y.ms - x.ms);

console.log(`${file}: ${samples.length} samples over ${((t.at(-1) - t[0]) / 1e6).toFixed(1)} s`);
console.log(`${long.length} stretches without an idle sample >= ${minMs} ms`);
for (const r of long.slice(0, top)) {
  const self = new Map();
  const mine = new Map();
  for (let i = r.a; i < r.b; i++) {
    const s = name(byId.get(samples[i]));
    self.set(s, (self.get(s) ?? 0) + 1);
    const o = ours(samples[i]);
    mine.set(o, (mine.get(o) ?? 0) + 1);
  }
  const n = r.b - r.a;
  const at = ((t[r.a] - t[0]) / 1e6).toFixed(2);
  console.log(`\n== ${r.ms.toFixed(0)} ms at +${at} s, ${n} samples`);
  const list = (m, k) =>
    [...m]
      .sort((x, y) => y[1] - x[1])
      .slice(0, k)
      .map(([s, c]) => `   ${((100 * c) / n).toFixed(0).padStart(3)}%  ${s}`)
      .join('\n');
  console.log(`  innermost frame of ours:\n${list(mine, 8)}`);
  console.log(`  self:\n${list(self, 6)}`);
}
