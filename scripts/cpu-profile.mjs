// A V8 CPU profile (node --cpu-prof) read for the scripts that look into one: its nodes by id, each node's
// parent, a readable name per frame, and whether a frame is our own code (dist/src or dist/bench).
import { readFileSync } from 'node:fs';

export function loadProfile(file) {
  const prof = JSON.parse(readFileSync(file, 'utf8'));
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const name = (n) => {
    const f = n.callFrame;
    const where = f.url ? `${f.url.replace(/^.*\/(dist|node_modules)\//, '$1/')}:${f.lineNumber + 1}` : '';
    return `${f.functionName || '(anonymous)'} ${where}`.trim();
  };
  const isOurs = (n) => /\/dist\/(src|bench)\//.test(n.callFrame.url);
  return { prof, byId, parent, name, isOurs };
}
