#!/usr/bin/env node
// Builds everything in dependency order, incrementally: a second run with nothing changed
// rebuilds nothing and rewrites no file.
//   1. bpf/        kernel objects (make)
//   2. bpf-loader  native addon (node-gyp, incremental)
//   3. TypeScript  every node package (tsc -b, incremental)
//   4. apps/web    dashboard bundle (vite), only when its inputs changed
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const quiet = process.argv.includes('--quiet');

function run(label, cmd, args, opts = {}) {
  if (!quiet) console.log(`build: ${label}`);
  const r = spawnSync(cmd, args, { cwd: root, stdio: quiet ? ['ignore', 'pipe', 'inherit'] : 'inherit', ...opts });
  if (r.status !== 0) {
    if (quiet && r.stdout) process.stdout.write(r.stdout);
    console.error(`build: ${label} failed (exit ${r.status ?? r.signal})`);
    process.exit(1);
  }
}

function newestMtime(path) {
  if (!existsSync(path)) return 0;
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  let newest = st.mtimeMs;
  for (const entry of readdirSync(path)) {
    if (entry === 'node_modules' || entry === 'dist') continue;
    newest = Math.max(newest, newestMtime(join(path, entry)));
  }
  return newest;
}

run('bpf objects', 'make', ['-s', '-C', 'bpf']);
run('bpf-loader addon', process.execPath, ['packages/bpf-loader/scripts/build-addon.mjs']);
run('typescript', process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-b']);

const web = join(root, 'apps/web');
const webOut = join(web, 'dist/index.html');
const webInputs = ['src', 'index.html', 'vite.config.ts', 'package.json', 'public'].map((p) => join(web, p));
webInputs.push(join(root, 'packages/shared-types/dist'));
const inputsNewest = Math.max(...webInputs.map(newestMtime));
if (!existsSync(join(web, 'index.html'))) {
  if (!quiet) console.log('build: dashboard (apps/web) has no sources yet, skipped');
} else if (!existsSync(webOut) || statSync(webOut).mtimeMs < inputsNewest) {
  run('dashboard (vite)', process.execPath, [join(web, 'node_modules/vite/bin/vite.js'), 'build', '--logLevel', 'warn'], { cwd: web });
} else if (!quiet) {
  console.log('build: dashboard up to date');
}
