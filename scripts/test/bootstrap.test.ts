// The setup command is idempotent: run again on a set-up checkout it installs nothing,
// rebuilds nothing and changes no file; and without root it says what needs root and why.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { tmpdir } from 'node:os';

const root = join(import.meta.dirname, '../..');
// Written by the test run itself, not by setup.
const IGNORED = new Set(['artifacts', '.git']);

function newestFiles(dir: string, since: number, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (IGNORED.has(relative(root, path))) continue;
    if (entry.isSymbolicLink()) continue;
    if (entry.isDirectory()) newestFiles(path, since, out);
    else if (statSync(path).mtimeMs > since) out.push(relative(root, path));
  }
  return out;
}

test('a second ./bootstrap setup installs nothing, builds nothing and modifies no file', { timeout: 300_000 }, () => {
  const before = Date.now();
  const r = spawnSync(join(root, 'bootstrap'), ['setup'], { cwd: root, encoding: 'utf8' });
  assert.equal(r.status, 0, `bootstrap setup failed:\n${r.stdout}\n${r.stderr}`);
  assert.match(r.stdout, /Debian packages: all present/);
  assert.doesNotMatch(r.stdout, /installing/);
  const changed = newestFiles(root, before - 1);
  assert.deepEqual(changed, [], `setup modified files on its second run: ${changed.slice(0, 20).join(', ')}`);
});

test('without root, bootstrap says what needs root and why, and stops', { timeout: 60_000 }, () => {
  const home = mkdtempSync(join(tmpdir(), 'blkheat-nobody-'));
  try {
    const r = spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', join(root, 'bootstrap'), 'serve'], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, HOME: home },
    });
    assert.equal(r.status, 1, r.stdout + r.stderr);
    assert.match(r.stderr, /root is needed to: .*eBPF programs.*CAP_BPF.*Run: sudo \.\/bootstrap serve/s);
    assert.equal(r.stderr.trim().split('\n').length, 1, `one message: ${r.stderr}`);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});
