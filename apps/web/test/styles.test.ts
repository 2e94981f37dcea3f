// The dashboard's CSS files are plain, flat CSS: every brace closes, no style rule sits inside
// another, and styles/index.css imports every file once. Browsers accept nested rules now, so a
// lost "}" does not fail the build or prettier: it silently nests every rule after it (which then
// match nothing) and the layout breaks without an error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const stylesDir = join(import.meta.dirname, '../src/styles');
const cssFiles = readdirSync(stylesDir)
  .filter((f) => f.endsWith('.css'))
  .sort();

/** Problems in one file's braces: unbalanced, or a block opened inside a style rule. */
function braceProblems(css: string): string[] {
  const text = css.replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, ' ')).replace(/'[^'\n]*'|"[^"\n]*"/g, "''");
  const problems: string[] = [];
  const open: { atRule: boolean; line: number }[] = [];
  let prelude = '';
  let line = 1;
  for (const ch of text) {
    if (ch === '\n') line++;
    if (ch === '{') {
      const parent = open.at(-1);
      if (parent && !parent.atRule) problems.push(`line ${line}: a block inside a style rule (a lost "}" above?)`);
      open.push({ atRule: prelude.trim().startsWith('@'), line });
      prelude = '';
    } else if (ch === '}') {
      if (open.pop() === undefined) problems.push(`line ${line}: "}" closes nothing`);
      prelude = '';
    } else if (ch === ';') prelude = '';
    else prelude += ch;
  }
  for (const b of open) problems.push(`line ${b.line}: "{" never closed`);
  if (text.includes('/*')) problems.push('a comment never closed');
  return problems;
}

test('styles: every file closes its braces and nests no rule in a rule', () => {
  assert.ok(cssFiles.length > 1);
  for (const f of cssFiles) assert.deepEqual(braceProblems(readFileSync(join(stylesDir, f), 'utf8')), [], f);
  // The checker itself: a lost brace and a stray one are found.
  assert.equal(braceProblems('.a {\n  color: red;\n\n.b {\n  color: blue;\n}\n').length, 2);
  assert.equal(braceProblems('.a {\n}\n}\n').length, 1);
  assert.deepEqual(braceProblems('@media (x) {\n  .a {\n    b: c;\n  }\n}\n@keyframes k {\n  from {\n    o: 1;\n  }\n}\n'), []);
});

test('styles: index.css imports every other file, each once', () => {
  const index = readFileSync(join(stylesDir, 'index.css'), 'utf8');
  const imported = [...index.matchAll(/@import '\.\/([^']+)';/g)].map((m) => m[1]);
  assert.deepEqual(
    [...imported].sort(),
    cssFiles.filter((f) => f !== 'index.css'),
  );
});
