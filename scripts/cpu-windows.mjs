#!/usr/bin/env node
// Where a V8 CPU profile's time went in two windows of one run (ms per minute of wall time), to compare a service
// early and late in a soak: self time per function, inclusive time, or the innermost frame of our own code.
// Usage: node scripts/cpu-windows.mjs FILE.cpuprofile fromA toA fromB toB [top=30] [self|total|ours]
// (seconds into the profile; a worker thread writes its own file with --cpu-prof)
import { loadProfile } from './cpu-profile.mjs';
const [file, a0, a1, b0, b1, topArg, mode = 'self'] = process.argv.slice(2);
const { prof, byId, parent, name, isOurs } = loadProfile(file);
const { samples, timeDeltas } = prof;
const t = [];
let acc = 0;
for (const d of timeDeltas) t.push((acc += d));
const dur = (i) => (i + 1 < timeDeltas.length ? timeDeltas[i + 1] : 0) / 1000; // ms
function window(s0, s1) {
  const m = new Map();
  let busy = 0;
  const seen = new Set();
  for (let i = 0; i < samples.length; i++) {
    if (t[i] < s0 * 1e6 || t[i] >= s1 * 1e6) continue;
    const n = byId.get(samples[i]);
    const ms = dur(i);
    const fn = n.callFrame.functionName;
    if (fn === '(idle)') continue;
    busy += ms;
    if (mode === 'self') {
      const k = name(n);
      m.set(k, (m.get(k) ?? 0) + ms);
    } else if (mode === 'ours') {
      let k = '(none of ours)';
      for (let c = samples[i]; c !== undefined; c = parent.get(c)) {
        const x = byId.get(c);
        if (isOurs(x)) {
          k = name(x);
          break;
        }
      }
      m.set(k, (m.get(k) ?? 0) + ms);
    } else {
      seen.clear();
      for (let c = samples[i]; c !== undefined; c = parent.get(c)) {
        const k = name(byId.get(c));
        if (seen.has(k)) continue;
        seen.add(k);
        m.set(k, (m.get(k) ?? 0) + ms);
      }
    }
  }
  return { m, busy, mins: (s1 - s0) / 60 };
}
const A = window(+a0, +a1),
  B = window(+b0, +b1);
const top = Number(topArg ?? 30);
console.log(`${file}: ${(t.at(-1) / 1e6).toFixed(0)} s; mode ${mode}`);
console.log(`busy ms/min: A ${(A.busy / A.mins).toFixed(0)}  B ${(B.busy / B.mins).toFixed(0)}`);
const keys = new Set([...A.m.keys(), ...B.m.keys()]);
const rows = [...keys].map((k) => ({ k, a: (A.m.get(k) ?? 0) / A.mins, b: (B.m.get(k) ?? 0) / B.mins }));
console.log('-- by late ms/min');
for (const r of rows.sort((x, y) => y.b - x.b).slice(0, top))
  console.log(
    `${r.a.toFixed(0).padStart(7)} ${r.b.toFixed(0).padStart(7)} ${(r.b - r.a).toFixed(0).padStart(7)}  ${r.k}`,
  );
console.log('-- by growth ms/min');
for (const r of rows.sort((x, y) => y.b - y.a - (x.b - x.a)).slice(0, top))
  console.log(
    `${r.a.toFixed(0).padStart(7)} ${r.b.toFixed(0).padStart(7)} ${(r.b - r.a).toFixed(0).padStart(7)}  ${r.k}`,
  );
