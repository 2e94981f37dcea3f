#!/usr/bin/env node
// Builds the native addon (build/Release/bpf_loader.node) with the package's own node-gyp.
//
// Incremental: when the .node is newer than binding.gyp, every file in src/native and the
// system libbpf.a, it does nothing and writes nothing. Configures only when build/ has no
// Makefile (or binding.gyp changed since). Uses the Node headers in /usr/include/node when they
// exist (no network needed for headers).
//
// libbpf is linked statically from Debian's libbpf.a (libbpf-dev) so the addon runs exactly that
// libbpf. Debian compiles libbpf.a as PIE, not PIC: one reference (to libc's `stderr`) cannot go
// into a shared object, so the archive is copied to build/libbpf-static/ with that symbol renamed
// to a hidden variable the addon defines (src/native/libbpf_static.cc).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, renameSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const pkg = join(dirname(fileURLToPath(import.meta.url)), '..');
const target = join(pkg, 'build', 'Release', 'bpf_loader.node');
const gypFile = join(pkg, 'binding.gyp');
const makefile = join(pkg, 'build', 'Makefile');
const nativeDir = join(pkg, 'src', 'native');
const staticDir = join(pkg, 'build', 'libbpf-static');
const staticLib = join(staticDir, 'libbpf.a');

function fail(message) {
  console.error(`build-addon: ${message}`);
  process.exit(1);
}

function run(cmd, args) {
  const r = spawnSync(cmd, args, { cwd: pkg, stdio: 'inherit' });
  if (r.error) fail(`${cmd}: ${r.error.message}`);
  if (r.status !== 0) fail(`${cmd} ${args[0] ?? ''} failed (exit ${r.status ?? r.signal})`);
}

function systemLibbpf() {
  const r = spawnSync('cc', ['-print-file-name=libbpf.a'], { encoding: 'utf8' });
  const path = r.status === 0 ? r.stdout.trim() : '';
  if (!path.startsWith('/') || !existsSync(path)) fail('libbpf.a not found: install libbpf-dev (and a C compiler)');
  return path;
}

const mtime = (p) => statSync(p).mtimeMs;
const libbpf = systemLibbpf();
const sources = [gypFile, libbpf, ...readdirSync(nativeDir).map((f) => join(nativeDir, f))];
const newestSource = Math.max(...sources.map(mtime));
if (existsSync(target) && mtime(target) > newestSource) process.exit(0);

const nodeGyp = join(pkg, 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
if (!existsSync(nodeGyp)) fail(`${nodeGyp} is missing; run pnpm install first`);
const headerArgs = existsSync('/usr/include/node/node_api.h') ? ['--nodedir=/usr'] : [];
const gyp = (command, ...args) => run(process.execPath, [nodeGyp, command, ...args, ...headerArgs, '--loglevel=warn']);

if (!existsSync(makefile) || mtime(gypFile) > mtime(makefile)) gyp('configure');
if (!existsSync(staticLib) || mtime(staticLib) < mtime(libbpf)) {
  mkdirSync(staticDir, { recursive: true });
  run('objcopy', ['--redefine-sym', 'stderr=blkheat_libbpf_stderr', libbpf, `${staticLib}.tmp`]);
  renameSync(`${staticLib}.tmp`, staticLib);
}
gyp('build', '--jobs=max');
