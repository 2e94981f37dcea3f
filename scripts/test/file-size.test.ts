// Small files: a source file over 400 lines says why in its first comment ("Over 400 lines: ..."
// on its first line, or the first line of the comment that opens it). Reads the files git
// tracks, as they are in the working tree.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '../..');
const MAX_LINES = 400;
const SOURCE = /\.(ts|tsx|mts|cts|js|mjs|cjs|c|cc|h)$/;
const SAYS_WHY = /over 400 lines/i;

function trackedSources(): string[] {
  const out = execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return out.split('\0').filter((f) => SOURCE.test(f) && existsSync(join(root, f)));
}

/** Whether a long file gives its reason on its first line, or on the first line of the comment it opens with. */
function saysWhy(text: string): boolean {
  const [first = '', second = ''] = text.split('\n', 2);
  return SAYS_WHY.test(first) || (/^\s*\/\*\*?\s*$/.test(first) && SAYS_WHY.test(second));
}

function longWithoutReason(): Map<string, number> {
  const found = new Map<string, number>();
  for (const file of trackedSources()) {
    const text = readFileSync(join(root, file), 'utf8');
    const lines = text.endsWith('\n') ? text.split('\n').length - 1 : text.split('\n').length;
    if (lines > MAX_LINES && !saysWhy(text)) found.set(file, lines);
  }
  return found;
}

test(`source files over ${MAX_LINES} lines say why in their first comment`, () => {
  const found = longWithoutReason();
  const offenders = [...found].map(([f, n]) => `${f} (${n} lines)`);
  assert.deepEqual(offenders, [], `split these, or say why on their first line ("Over ${MAX_LINES} lines: ...")`);
});

test('the reason is found where the house style puts it', () => {
  assert.ok(saysWhy('// Over 400 lines: one drill, told in order.\n// ...'));
  assert.ok(saysWhy('/**\n * (Over 400 lines: the file format and its reader belong together.)\n */'));
  assert.ok(!saysWhy('/**\n * The collector.\n * Over 400 lines because ...\n */'), 'buried in the comment is not the first line');
  assert.ok(!saysWhy('import x from "y";\n// over 400 lines'));
});
