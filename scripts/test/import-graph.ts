// The import graph of a package's source and the cycles in it, for import-cycles.test.ts (every
// package's src/) and lint-layers.test.ts (which proves the check finds a cycle). No lint plugin
// in the workspace checks cycles, so the graph is built here with the TypeScript compiler's
// parser: every relative import, export … from and import() counts, type-only ones too (a cycle
// of types still ties the modules together: neither can be read, moved or changed without the
// other). Package imports are not followed: a package's src/ is its own graph, and packages
// depend on each other in one direction (pnpm).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import ts from 'typescript';

const SOURCE = /\.(ts|tsx|mts|cts)$/;

/** Every package's source folder: apps/<name>/src and packages/<name>/src. */
export function sourceRoots(root: string): string[] {
  const out: string[] = [];
  for (const group of ['apps', 'packages']) {
    for (const name of readdirSync(join(root, group)).sort()) {
      const src = join(root, group, name, 'src');
      if (existsSync(src) && statSync(src).isDirectory()) out.push(src);
    }
  }
  return out;
}

/** The TypeScript files below `dir` (declarations, node_modules and dist left out), with their text. */
export function readSources(dir: string, out = new Map<string, string>()): Map<string, string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules' && entry.name !== 'dist') readSources(p, out);
    } else if (entry.isFile() && SOURCE.test(entry.name) && !entry.name.endsWith('.d.ts')) {
      out.set(p, readFileSync(p, 'utf8'));
    }
  }
  return out;
}

/**
 * The relative module specifiers a file imports: import and import type, export … from,
 * import() and import('…') types, parsed (text that only looks like an import, in a string or
 * JSX, is not one).
 */
export function relativeImports(text: string, fileName = 'file.tsx'): string[] {
  const out: string[] = [];
  const note = (spec: ts.Node | undefined): void => {
    if (spec && ts.isStringLiteralLike(spec) && (spec.text.startsWith('./') || spec.text.startsWith('../'))) out.push(spec.text);
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) note(node.moduleSpecifier);
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference))
      note(node.moduleReference.expression);
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) note(node.arguments[0]);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) note(node.argument.literal);
    ts.forEachChild(node, visit);
  };
  visit(ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false, fileName.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS));
  return out;
}

/** The file `spec` names from `from`, if it is one of `files` (`.js` written for a `.ts`, as ESM wants). */
function resolveImport(files: ReadonlyMap<string, string>, from: string, spec: string): string | undefined {
  const base = resolve(dirname(from), spec);
  const stem = base.replace(/\.(js|jsx|mjs|cjs|ts|tsx|mts|cts)$/, '');
  const candidates = [base, `${stem}.ts`, `${stem}.tsx`, `${stem}.mts`, `${stem}.cts`, join(base, 'index.ts'), join(base, 'index.tsx')];
  return candidates.find((c) => files.has(c));
}

/** Each file's imports among `files` (paths as the map's keys). */
export function importGraph(files: ReadonlyMap<string, string>): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const [file, text] of files) {
    const to = relativeImports(text, file).flatMap((spec) => resolveImport(files, file, spec) ?? []);
    graph.set(file, [...new Set(to)].sort());
  }
  return graph;
}

/** The strongly connected components of `graph` (Tarjan), iteratively: a deep chain must not overflow the stack. */
function components(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  let next = 0;
  for (const start of graph.keys()) {
    if (index.has(start)) continue;
    const work: { node: string; edge: number }[] = [{ node: start, edge: 0 }];
    index.set(start, next);
    low.set(start, next++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const top = work[work.length - 1] as { node: string; edge: number };
      const edges = graph.get(top.node) ?? [];
      if (top.edge < edges.length) {
        const to = edges[top.edge++] as string;
        if (!index.has(to)) {
          index.set(to, next);
          low.set(to, next++);
          stack.push(to);
          onStack.add(to);
          work.push({ node: to, edge: 0 });
        } else if (onStack.has(to)) {
          low.set(top.node, Math.min(low.get(top.node) as number, index.get(to) as number));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node) as number, low.get(top.node) as number));
      if (low.get(top.node) === index.get(top.node)) {
        const scc: string[] = [];
        let n: string;
        do {
          n = stack.pop() as string;
          onStack.delete(n);
          scc.push(n);
        } while (n !== top.node);
        out.push(scc);
      }
    }
  }
  return out;
}

/** A shortest path from `from` back to itself inside `within` (breadth first), as [from, …, from]. */
function loopThrough(graph: ReadonlyMap<string, readonly string[]>, from: string, within: ReadonlySet<string>): string[] {
  const cameFrom = new Map<string, string>();
  const queue = [from];
  for (let i = 0; i < queue.length; i++) {
    const node = queue[i] as string;
    for (const to of graph.get(node) ?? []) {
      if (!within.has(to)) continue;
      if (to === from) {
        const back: string[] = [];
        for (let n = node; n !== from; n = cameFrom.get(n) as string) back.push(n);
        return [from, ...back.reverse(), from];
      }
      if (!cameFrom.has(to)) {
        cameFrom.set(to, node);
        queue.push(to);
      }
    }
  }
  return [from];
}

/**
 * The import cycles among `files`: one per group of files that import each other round (a
 * strongly connected component, or a file importing itself), named as the shortest loop from
 * its first file in sort order, e.g. [a, b, c, a].
 */
export function importCycles(files: ReadonlyMap<string, string>): string[][] {
  const graph = importGraph(files);
  const cycles: string[][] = [];
  for (const scc of components(graph)) {
    const first = [...scc].sort()[0] as string;
    if (scc.length > 1 || (graph.get(first) ?? []).includes(first)) cycles.push(loopThrough(graph, first, new Set(scc)));
  }
  return cycles.sort((a, b) => ((a[0] as string) < (b[0] as string) ? -1 : 1));
}
