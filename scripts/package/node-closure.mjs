// The agent's run-time Node modules, as the checkout holds them: which directories
// `node apps/agent/bin/blkheat.js` can load a module from, found the way Node finds them. The
// package copies these into /usr/lib/blkheat at the same paths relative to the checkout (pnpm's
// node_modules/.pnpm store and its relative symbolic links included), so every import resolves
// there exactly as it does in the checkout, and nothing else comes along: no devDependencies,
// no build tools, no other workspace package.
import { existsSync, lstatSync, readFileSync, realpathSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';

/**
 * Workspace packages the agent loads at run time, and what of each is needed to run: the
 * compiled JavaScript, the addon, and package.json (its "type" and "exports" steer the loader).
 * A workspace dependency missing here stops the build: decide what of it ships.
 */
export const WORKSPACE_FILES = Object.freeze({
  'apps/agent': ['package.json', 'bin', 'dist'],
  'packages/bpf-loader': ['package.json', 'dist', 'build/Release/bpf_loader.node'],
  'packages/shared-types': ['package.json', 'dist'],
});

/**
 * Dependencies needed only to build: node-addon-api is the C++ headers bpf_loader.node was
 * compiled with (the package ships the compiled addon; nothing requires the module at run time),
 * and @types/* hold only declarations (protobufjs lists @types/node among its dependencies).
 */
export const buildOnly = (name) => name === 'node-addon-api' || name.startsWith('@types/');

/**
 * Node's lookup of a bare specifier: <dir>/node_modules/<name> in the importing package's
 * directory and each of its ancestors, up to the checkout's root.
 */
function lookup(root, fromDir, name) {
  for (let dir = fromDir; ; dir = dirname(dir)) {
    if (basename(dir) !== 'node_modules') {
      const candidate = join(dir, 'node_modules', name);
      if (existsSync(candidate)) return candidate;
    }
    if (dir === root || dir === dirname(dir)) return undefined;
  }
}

function readManifest(dir) {
  return JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
}

/** A path inside the checkout, relative to it; throws for one outside (it could not be mirrored). */
function inside(root, path, what) {
  const rel = relative(root, path);
  if (rel.startsWith('..') || rel === '') throw new Error(`${what}: ${path} is outside the checkout ${root}`);
  return rel;
}

/**
 * The closure of the agent's run-time dependencies.
 * Returns { packages: Map<relative real directory, { workspace: boolean, name: string }>,
 *           links: Map<relative link path, relative link target> } (pnpm's symbolic links, as
 * they must be recreated: each target relative to its link's directory).
 */
export function runtimeClosure(root, start = 'apps/agent') {
  const packages = new Map([[start, { workspace: true, name: readManifest(join(root, start)).name }]]);
  const links = new Map();
  const queue = [start];
  while (queue.length > 0) {
    const rel = queue.shift();
    const dir = join(root, rel);
    const manifest = readManifest(dir);
    const workspace = packages.get(rel).workspace;
    // A workspace package's devDependencies are the checkout's tools; a published package's are
    // never installed. Optional and peer dependencies count when they are there.
    const required = Object.keys(manifest.dependencies ?? {});
    const optional = workspace
      ? []
      : [...Object.keys(manifest.optionalDependencies ?? {}), ...Object.keys(manifest.peerDependencies ?? {})];
    for (const name of [...required, ...optional]) {
      if (buildOnly(name)) continue;
      const found = lookup(root, dir, name);
      if (found === undefined) {
        if (required.includes(name)) throw new Error(`${manifest.name} needs ${name}, which is not installed (run pnpm install)`);
        continue;
      }
      const real = realpathSync(found);
      const realRel = inside(root, real, `${manifest.name} -> ${name}`);
      if (lstatSync(found).isSymbolicLink()) {
        const linkDir = realpathSync(dirname(found));
        links.set(join(inside(root, linkDir, name), basename(found)), relative(linkDir, real));
      }
      if (packages.has(realRel)) continue;
      const isWorkspace = !realRel.split('/').includes('node_modules');
      if (isWorkspace && !(realRel in WORKSPACE_FILES)) {
        throw new Error(`${manifest.name} depends on the workspace package ${realRel}: add what of it ships to WORKSPACE_FILES`);
      }
      packages.set(realRel, { workspace: isWorkspace, name });
      queue.push(realRel);
    }
  }
  return { packages, links };
}
