// The kernel's rule in the tests: on these machines no BPF program runs for a block
// I/O completion that runs on top of a thread of pid 1 (bpf_prog_aux.init_owned,
// docs/accounting.md), so a test that compares a count made with BPF (blkheat's, or a loader
// test program's) with an outside count must hold the two to that rule through ftrace's
// completion witness (testkit's completionWitness), or say why it needs none.
//
// What this finds, by text, per file: a *.test.ts under apps/, e2e/ or packages/ (not
// node_modules, not dist) that reads counts from /proc/diskstats (a call or import of
// diskstatsDelta, readDiskstats or completedRequests, or the path as a whole string literal)
// and neither uses the witness (completionWitness, or the loader tests' witnessed…() helpers in
// packages/bpf-loader/test/witness.ts) nor carries a comment starting "No witness:".
// What it cannot find: comparisons with fio's, dd's or cat's own counts (fio's `ios` and dd's
// `count` are too common to spot by text: those were reviewed by hand); a file with the witness
// or a "No witness:" comment at one comparison and another comparison without either; a witness
// used wrongly.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = join(import.meta.dirname, '../..');

/** Reads an outside count: /proc/diskstats through testkit's (or the agent's) readers, or the file itself. */
const OUTSIDE = /\b(?:diskstatsDelta|readDiskstats|completedRequests)\b|(['"`])\/proc\/diskstats\1/;
/** Uses the witness. */
const WITNESS = /\bcompletionWitness\b|\bwitnessed\w*\s*\(/;
/** Says why no witness is needed, in a line comment or a block comment's line. */
const SAYS_WHY = /(?:\/\/|\/\*|^\s*\*)[^\n]*\bNo witness:/m;

/**
 * Files that read an outside count and cannot carry their comment yet, with the reason. Each
 * must still be flagged without its entry (a test below): remove it once the file says why.
 */
const EXEMPT: ReadonlyMap<string, string> = new Map([
  [
    'apps/agent/test/collector-untimed.test.ts',
    "unit tests of the untimed books on scripted readings; its one real read of /proc/diskstats (the agent's readDiskstats) checks the parse, not a count against BPF (the file is being edited elsewhere: move this reason into it as a No witness: comment)",
  ],
]);

/** Whether a test file compares against an outside count with neither the witness nor a reason. */
function needsWitness(text: string): boolean {
  return OUTSIDE.test(text) && !WITNESS.test(text) && !SAYS_WHY.test(text);
}

function testFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'dist') continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...testFiles(path));
    else if (entry.isFile() && entry.name.endsWith('.test.ts')) out.push(path);
  }
  return out;
}

function scanned(): Map<string, string> {
  const files = new Map<string, string>();
  for (const top of ['apps', 'e2e', 'packages'])
    for (const file of testFiles(join(root, top))) files.set(relative(root, file), readFileSync(file, 'utf8'));
  return files;
}

test('every test file that reads /proc/diskstats holds its counts to the kernel rule through the witness, or says why not', () => {
  const files = scanned();
  const outside = [...files].filter(([, text]) => OUTSIDE.test(text)).map(([file]) => file);
  assert.ok(
    outside.includes('packages/bpf-loader/test/io.test.ts'),
    `the scan found no outside count where one is (files reading one: ${outside.join(', ')})`,
  );
  const offenders = [...files].filter(([file, text]) => !EXEMPT.has(file) && needsWitness(text)).map(([file]) => file);
  assert.deepEqual(
    offenders,
    [],
    'these compare counts with /proc/diskstats without the completion witness (testkit completionWitness) and without a "No witness: <why>" comment',
  );
});

test('each exemption is still needed', () => {
  const files = scanned();
  for (const [file, why] of EXEMPT) {
    const text = files.get(file);
    assert.ok(text !== undefined, `${file} is exempt but was not found (${why})`);
    assert.ok(needsWitness(text), `${file} no longer needs its exemption: remove it from EXEMPT`);
  }
});

test('the check flags a diskstats comparison without the witness, and passes one with it or with a reason', () => {
  const unwitnessed = [
    "import { diskstatsDelta, readDiskstats } from '@blkheat/testkit';",
    'const before = readDiskstats();',
    'await directReads(loop.path, 300);',
    "assert.equal(counter(counts, key), diskstatsDelta(before, readDiskstats()).get(loop.name)?.reads, 'missing from /proc/diskstats');",
  ].join('\n');
  assert.equal(needsWitness(unwitnessed), true, 'a BPF count against a diskstats delta, no witness');
  assert.equal(
    needsWitness("const text = readFileSync('/proc/diskstats', 'utf8');\nassert.equal(ours, parse(text));"),
    true,
    'the file read directly',
  );

  const witnessed = unwitnessed.replace(
    'await directReads(loop.path, 300);',
    'const seen = await witnessed(t, loop, () => directReads(loop.path, 300));',
  );
  assert.equal(needsWitness(witnessed), false, "the loader tests' helper");
  const kit = `const witness = completionWitness(t, loop);\n${unwitnessed}`;
  assert.equal(needsWitness(kit), false, "testkit's witness");
  const reason = `${unwitnessed}\n  // No witness: counted + untimed, untimed measured from /proc/diskstats.`;
  assert.equal(needsWitness(reason), false, 'a reason in a line comment');
  assert.equal(needsWitness(`/**\n * No witness: diskstats against dd.\n */\n${unwitnessed}`), false, 'a reason in a block comment');

  assert.equal(needsWitness(`${unwitnessed}\nconst why = 'No witness: not a comment';`), true, 'the words in a string are no reason');
  assert.equal(
    needsWitness('assert.ok(d, `${name} missing from /proc/diskstats`);'),
    false,
    'the path named in a message is no outside count',
  );
});
