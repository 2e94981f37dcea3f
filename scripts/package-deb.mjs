#!/usr/bin/env node
// Builds blkheat_<version>_<arch>.deb from a built checkout (./bootstrap package builds first):
// the compiled agent and its run-time Node modules, the dashboard bundle, the addon, the CO-RE
// BPF objects, /usr/bin/blkheat, the systemd units, examples of their settings, the docs and
// Prometheus files; nothing under /etc. The target needs no compiler, headers or npm: only the
// runtime packages in Depends.
// Layout and formats: docs/package.md.
//   node scripts/package-deb.mjs [--out DIR]     (default DIR: build/); prints the .deb's path last
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { runtimeClosure, WORKSPACE_FILES } from './package/node-closure.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const LIB = 'usr/lib/blkheat';
const DOC = 'usr/share/doc/blkheat';
/** The kernel objects the agent loads (one per bucket schema); the rest of bpf/build is tests'. */
const BPF_OBJECT = /^blkheat(_s\d+)?\.bpf\.o$/;
/** Where the build machine has metrics.proto (golang-github-prometheus-client-model-dev, a build package). */
const METRICS_PROTO = '/usr/share/gocode/src/github.com/prometheus/client_model/io/prometheus/client/metrics.proto';
/**
 * The units' settings, shipped as examples, not as /etc/default files: a conffile stays after
 * dpkg -r, and the package leaves nothing but its history (docs/package.md). The units run
 * without them; an admin copies one to /etc/default/ to change a setting, and owns that copy.
 */
const SETTINGS_EXAMPLES = ['blkheat', 'blkheat-fleet'];

function fail(message) {
  console.error(`package: ${message}`);
  process.exit(1);
}

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', ...opts });
  if (r.error) fail(`${cmd}: ${r.error.message}`);
  if (r.status !== 0) fail(`${cmd} ${args.join(' ')} failed (exit ${r.status ?? r.signal}):\n${r.stdout ?? ''}${r.stderr ?? ''}`);
  return r.stdout;
}

function need(path, hint) {
  if (!existsSync(path)) fail(`${relative(root, path) || path} is missing: ${hint}`);
  return path;
}

/**
 * Compiled JavaScript of a source that still exists (tsc leaves the output of a deleted or
 * moved source behind in dist/): no declarations, source maps, build info or stale modules.
 */
function shipsFromDist(src) {
  if (statSync(src).isDirectory()) return true;
  const m = /^(.*)\/dist\/(.*)\.js$/.exec(src);
  return m !== null && ['.ts', '.tsx', '.mts'].some((ext) => existsSync(`${m[1]}/src/${m[2]}${ext}`));
}
/**
 * TypeScript (sources some modules publish, declarations) and source maps: read by compilers
 * and debuggers, never by Node running the agent (Node 20 runs no TypeScript, and no version
 * strips types under node_modules).
 */
const NOT_RUN = /\.([cm]?ts|map)$/;
/**
 * A published package as it was installed, less what Node never loads (NOT_RUN) and the
 * node_modules it may nest (found and copied on their own).
 */
const shipsFromModule = (src) => !src.endsWith('/node_modules') && !NOT_RUN.test(src);

function copyInto(stage, rel, filter) {
  const dest = join(stage, LIB, rel);
  mkdirSync(dirname(dest), { recursive: true });
  cpSync(join(root, rel), dest, { recursive: true, verbatimSymlinks: true, filter });
}

/** The agent, its workspace packages and their run-time modules, at their paths in the checkout. */
function stageNodeTree(stage) {
  const { packages, links } = runtimeClosure(root);
  for (const [rel, { workspace }] of packages) {
    if (!workspace) {
      copyInto(stage, rel, shipsFromModule);
      continue;
    }
    for (const part of WORKSPACE_FILES[rel]) {
      need(join(root, rel, part), 'build first (./bootstrap setup)');
      copyInto(stage, join(rel, part), part === 'dist' ? shipsFromDist : undefined);
    }
  }
  for (const [link, target] of links) {
    mkdirSync(dirname(join(stage, LIB, link)), { recursive: true });
    symlinkSync(target, join(stage, LIB, link));
  }
  return packages;
}

function install(stage, src, dest, mode) {
  mkdirSync(dirname(join(stage, dest)), { recursive: true });
  copyFileSync(src, join(stage, dest));
  chmodSync(join(stage, dest), mode);
}

function stageFiles(stage) {
  const pkg = (p) => join(root, 'packaging', p);
  for (const f of readdirSync(need(join(root, 'bpf/build'), 'build first (make -C bpf)')).filter((f) => BPF_OBJECT.test(f))) {
    install(stage, join(root, 'bpf/build', f), `${LIB}/bpf/build/${f}`, 0o644);
  }
  need(join(root, 'apps/web/dist/index.html'), 'build the dashboard first (./bootstrap setup)');
  cpSync(join(root, 'apps/web/dist'), join(stage, LIB, 'apps/web/dist'), { recursive: true, filter: (src) => !NOT_RUN.test(src) });
  install(stage, need(METRICS_PROTO, 'install golang-github-prometheus-client-model-dev'), `${LIB}/metrics.proto`, 0o644);
  install(stage, pkg('blkheat.sh'), 'usr/bin/blkheat', 0o755);
  install(stage, pkg('blkheat-service.sh'), `${LIB}/blkheat-service`, 0o755);
  for (const unit of ['blkheat.service', 'blkheat-fleet.service'])
    install(stage, pkg(`systemd/${unit}`), `usr/lib/systemd/system/${unit}`, 0o644);
  for (const name of SETTINGS_EXAMPLES) install(stage, pkg(`default/${name}`), `${DOC}/examples/default/${name}`, 0o644);
  install(stage, join(root, 'README.md'), `${DOC}/README.md`, 0o644);
  for (const doc of readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')))
    install(stage, join(root, 'docs', doc), `${DOC}/docs/${doc}`, 0o644);
  install(stage, pkg('prometheus/prometheus.yml'), `${DOC}/prometheus/prometheus.yml`, 0o644);
  for (const rules of readdirSync(join(root, 'deploy/prometheus')).filter((f) => f.endsWith('.yml'))) {
    install(stage, join(root, 'deploy/prometheus', rules), `${DOC}/prometheus/${rules}`, 0o644);
  }
}

/** Debian's copyright file: blkheat's licence, and each bundled module's as its package.json states it. */
function copyright(stage, packages) {
  const license = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).license;
  const lines = [
    'Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/',
    'Upstream-Name: blkheat',
    '',
    'Files: *',
    `License: ${license}`,
    '',
    'Files: usr/lib/blkheat/metrics.proto',
    'Copyright: The Prometheus Authors (prometheus/client_model)',
    'License: Apache-2.0',
  ];
  for (const [rel, { workspace }] of [...packages].sort()) {
    if (workspace) continue;
    const m = JSON.parse(readFileSync(join(root, rel, 'package.json'), 'utf8'));
    lines.push('', `Files: usr/lib/blkheat/${rel}/*`, `Comment: ${m.name} ${m.version} (npm)`, `License: ${m.license ?? 'see the files'}`);
  }
  install(stage, '/dev/null', `${DOC}/copyright`, 0o644);
  writeFileSync(join(stage, DOC, 'copyright'), lines.join('\n') + '\n');
}

/** Every directory 0755; files 0755 if their source was executable, else 0644 (root's, by dpkg-deb --root-owner-group). */
function normalizeModes(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isSymbolicLink()) continue;
    if (entry.isDirectory()) {
      chmodSync(p, 0o755);
      normalizeModes(p);
    } else chmodSync(p, statSync(p).mode & 0o111 ? 0o755 : 0o644);
  }
}

function filesUnder(dir, base = dir, out = []) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) filesUnder(p, base, out);
    else if (entry.isFile()) out.push(relative(base, p));
  }
  return out;
}

/** Depends: Node.js as the agent's engines field asks, and the shared libraries the addon links (dpkg-shlibdeps). */
function depends(stage) {
  const engines = JSON.parse(readFileSync(join(root, 'apps/agent/package.json'), 'utf8')).engines?.node ?? '';
  const m = /^>=\s*(\d+)\.(\d+)/.exec(engines);
  if (!m) fail(`apps/agent/package.json: engines.node "${engines}" is not ">=MAJOR.MINOR..."`);
  const work = mkdtempSync(join(tmpdir(), 'blkheat-shlibdeps-'));
  try {
    // dpkg-shlibdeps reads the package's name and architecture from a debian/control.
    mkdirSync(join(work, 'debian'));
    writeFileSync(join(work, 'debian/control'), 'Source: blkheat\n\nPackage: blkheat\nArchitecture: any\n');
    const addons = filesUnder(join(stage, LIB)).filter((f) => f.endsWith('.node'));
    if (addons.length === 0) fail('no .node addon staged');
    // --warnings=0: the N-API symbols come from node itself, which links no library to name.
    const out = run('dpkg-shlibdeps', ['-O', '--warnings=0', ...addons.map((f) => `-e${join(stage, LIB, f)}`)], { cwd: work });
    const shlibs = /^shlibs:Depends=(.*)$/m.exec(out)?.[1];
    if (!shlibs) fail(`dpkg-shlibdeps printed no dependencies: ${out}`);
    return `nodejs (>= ${m[1]}.${m[2]}), ${shlibs}`;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

function control(stage, version, arch) {
  const installedKb = Math.ceil(filesUnder(stage).reduce((n, f) => n + statSync(join(stage, f)).size, 0) / 1024);
  const fields = [
    ['Package', 'blkheat'],
    ['Version', version],
    ['Architecture', arch],
    ['Maintainer', process.env.BLKHEAT_MAINTAINER ?? 'blkheat developers <blkheat@localhost>'],
    ['Installed-Size', String(installedKb)],
    ['Depends', depends(stage)],
    ['Suggests', 'prometheus'],
    ['Section', 'admin'],
    ['Priority', 'optional'],
    [
      'Description',
      'live block I/O latency heat map for Linux (eBPF)\n' +
        ' A privileged agent times every block I/O in the kernel with CO-RE eBPF programs\n' +
        ' (tracepoints only) and serves a dashboard of per-second latency heat maps, per-disk\n' +
        ' histograms, op classes and sampled I/Os, with history and Prometheus /metrics.\n' +
        ' Commands: blkheat record, blkheat serve (blkheat.service), blkheat fleet\n' +
        ' (blkheat-fleet.service). The BPF objects are built once and run on any kernel with\n' +
        ' BTF (/sys/kernel/btf/vmlinux): no compiler is needed on the host.',
    ],
  ];
  return fields.map(([k, v]) => `${k}: ${v}`).join('\n') + '\n';
}

function main() {
  const { values } = parseArgs({ options: { out: { type: 'string' } }, strict: true });
  const outDir = resolve(values.out ?? join(root, 'build'));
  const version = JSON.parse(readFileSync(join(root, 'apps/agent/package.json'), 'utf8')).version;
  const arch = run('dpkg', ['--print-architecture']).trim();
  const stage = mkdtempSync(join(tmpdir(), 'blkheat-deb-'));
  try {
    // The package's root directory becomes the target's /: mkdtemp made it 0700.
    chmodSync(stage, 0o755);
    const packages = stageNodeTree(stage);
    stageFiles(stage);
    copyright(stage, packages);
    normalizeModes(stage);
    // The staged agent must start: every module it imports at start-up is there.
    const v = run(process.execPath, [join(stage, LIB, 'apps/agent/bin/blkheat.js'), '--version']).trim();
    if (v !== version) fail(`the staged agent says version "${v}", expected ${version}`);

    const debian = join(stage, 'DEBIAN');
    mkdirSync(debian, { mode: 0o755 });
    const md5 = filesUnder(stage)
      .filter((f) => !f.startsWith('DEBIAN/'))
      .sort()
      .map(
        (f) =>
          `${createHash('md5')
            .update(readFileSync(join(stage, f)))
            .digest('hex')}  ${f}`,
      );
    writeFileSync(join(debian, 'md5sums'), md5.join('\n') + '\n');
    writeFileSync(join(debian, 'control'), control(stage, version, arch));
    for (const script of ['postinst', 'prerm', 'postrm']) install(stage, join(root, 'packaging/debian', script), `DEBIAN/${script}`, 0o755);
    for (const f of ['md5sums', 'control']) chmodSync(join(debian, f), 0o644);

    mkdirSync(outDir, { recursive: true });
    const deb = join(outDir, `blkheat_${version}_${arch}.deb`);
    run('dpkg-deb', ['--root-owner-group', '-Zxz', '--build', stage, deb]);
    console.log(`package: ${md5.length} files, ${Math.round(statSync(deb).size / 1024)} KiB`);
    console.log(deb);
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

main();
