#!/usr/bin/env node
// Start only, two builds alternating: time from spawn to the first 200 of GET /v1/me, each start on a fresh copy of
// one data dir (e.g. the one `BENCH_SCALE_KEEP=1 npm run bench scale-10k` keeps, with its API key). Both checkouts
// must be built (`node scripts/build.mjs`); each runs its own dist/bench/scale-child.js.
// Usage: node scripts/start-alternating.mjs DATA_DIR API_KEY ROUNDS BEFORE_CHECKOUT AFTER_CHECKOUT
import { spawn, execFileSync } from 'node:child_process';
const [seeded, apiKey, roundsArg, beforeRoot, afterRoot] = process.argv.slice(2);
if (!seeded || !apiKey || !beforeRoot || !afterRoot) {
  console.error('usage: node scripts/start-alternating.mjs DATA_DIR API_KEY ROUNDS BEFORE_CHECKOUT AFTER_CHECKOUT');
  process.exit(2);
}
const sides = { before: beforeRoot, after: afterRoot };
const rounds = Number(roundsArg ?? 3);
const load = () => execFileSync('cat', ['/proc/loadavg']).toString().split(' ').slice(0, 3).join(' ');
async function once(root) {
  const dir = `/tmp/tenk-start-${process.pid}`;
  execFileSync('rm', ['-rf', dir]);
  execFileSync('cp', ['-a', seeded, dir]);
  const port = 19300 + Math.floor(Math.random() * 400);
  const t0 = performance.now();
  const child = spawn(process.execPath, ['dist/bench/scale-child.js', dir, String(port)], {
    cwd: root,
    env: {
      ...process.env,
      LOG_LEVEL: 'warn',
      COPYTRADE_HEALTH_INTERVAL_MS: '10000',
      COPYTRADE_V1_READS_PER_WINDOW: '1000000',
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let ms = NaN;
  while (performance.now() - t0 < 60000) {
    try {
      const r = await fetch(`http://127.0.0.1:${port}/v1/me`, { headers: { authorization: `Bearer ${apiKey}` } });
      await r.arrayBuffer();
      if (r.status === 200) {
        ms = performance.now() - t0;
        break;
      }
    } catch {}
    await new Promise((r) => setTimeout(r, 25));
  }
  await new Promise((res) => {
    child.once('exit', res);
    child.send('stop');
    setTimeout(() => child.kill('SIGKILL'), 15000).unref();
  });
  execFileSync('rm', ['-rf', dir]);
  return ms;
}
const out = { before: [], after: [] };
for (let r = 0; r < rounds; r++)
  for (const side of r % 2 ? ['after', 'before'] : ['before', 'after']) {
    const l = load();
    const ms = await once(sides[side]);
    out[side].push(ms);
    console.log(`round ${r + 1} ${side}: first answer ${Math.round(ms)} ms (load ${l})`);
  }
const med = (a) => {
  const s = [...a].sort((x, y) => x - y);
  return s[Math.floor(s.length / 2)];
};
console.log('median before', Math.round(med(out.before)), 'after', Math.round(med(out.after)));
