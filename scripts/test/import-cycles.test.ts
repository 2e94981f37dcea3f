// No import cycles: in every package's source (apps/*/src, packages/*/src) no file imports
// itself back through others, type-only imports included. A cycle found is named file by file;
// break it by moving what both sides need to the file that owns it. The graph and the cycle
// search are in import-graph.ts; lint-layers.test.ts proves they find a cycle.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join, relative } from 'node:path';
import { importCycles, readSources, sourceRoots } from './import-graph.ts';

const root = join(import.meta.dirname, '../..');

test('no package has an import cycle', () => {
  const roots = sourceRoots(root);
  assert.ok(roots.length >= 5, `found only ${roots.length} packages' src/ under apps/ and packages/`);
  const found: string[] = [];
  for (const src of roots) {
    for (const cycle of importCycles(readSources(src))) found.push(cycle.map((f) => relative(root, f)).join(' → '));
  }
  assert.deepEqual(found, [], 'import cycles (move what the files share to the one that owns it)');
});
