// The bundle budget (issue 28), checked by `npm run build`: what a first visit loads before any lazy part, the
// entry script of dist/index.html and the chunks it preloads, gzipped, stays under BUDGET_KB. The builder and other
// parts loaded with import() are not counted: they are loaded when first opened.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

const BUDGET_KB = 250;
const dist = new URL('../dist/', import.meta.url).pathname;
const html = readFileSync(join(dist, 'index.html'), 'utf8');
const scripts = [...html.matchAll(/<(?:script[^>]*type="module"[^>]*src|link[^>]*rel="modulepreload"[^>]*href)="\/?([^"]+\.js)"/g)].map((m) => m[1]);
if (scripts.length === 0) {
  console.error('bundle budget: no entry script found in dist/index.html');
  process.exit(1);
}
let total = 0;
for (const s of new Set(scripts)) {
  const size = gzipSync(readFileSync(join(dist, s)), { level: 9 }).length;
  total += size;
  console.log(`bundle budget: ${s} ${(size / 1024).toFixed(1)} KB gzipped`);
}
const kb = total / 1024;
if (kb > BUDGET_KB) {
  console.error(`bundle budget: the main bundle is ${kb.toFixed(1)} KB gzipped, over the budget of ${BUDGET_KB} KB: load the heavy parts lazily (import())`);
  process.exit(1);
}
console.log(`bundle budget: ${kb.toFixed(1)} KB gzipped of ${BUDGET_KB} KB`);
