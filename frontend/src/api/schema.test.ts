import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

// The committed API types must be what `npm run gen:api` makes of the committed OpenAPI 3 spec.
describe('src/api/schema.d.ts', () => {
  it('is generated from docs/openapi3.json (run `npm run gen:api` when this fails)', () => {
    const root = join(__dirname, '..', '..');
    const out = join(mkdtempSync(join(tmpdir(), 'eb-schema-')), 'schema.d.ts');
    execFileSync(process.execPath, [join(root, 'node_modules/openapi-typescript/bin/cli.js'), join(root, '../docs/openapi3.json'), '-o', out], {
      stdio: 'pipe',
    });
    expect(readFileSync(join(root, 'src/api/schema.d.ts'), 'utf8')).toBe(readFileSync(out, 'utf8'));
  }, 60_000);
});
