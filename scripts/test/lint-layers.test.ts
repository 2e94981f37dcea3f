// The layering rules in eslint.config.js (no-restricted-imports per folder) fire: for every
// layer a deliberate violation is an error the lint reports, and an import the layer may make
// passes. Lints text as if it were a file in the folder (ESLint's lintText with filePath), so
// no file is written into the tree.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { ESLint } from 'eslint';

const root = join(import.meta.dirname, '../..');
const eslint = new ESLint({ cwd: root });

/** The no-restricted-imports findings for `import { name } from 'spec'` in a file of `dir`. */
async function layerFindings(file: string, spec: string, name = 'x'): Promise<string[]> {
  const code = `import { ${name} } from '${spec}';\nexport { ${name} };\n`;
  const [result] = await eslint.lintText(code, { filePath: join(root, file) });
  assert.ok(result, `no lint result for ${file}`);
  return result.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

// [file, import, imported name?]: each must be reported.
const violations: [string, string, string?][] = [
  // web: model/ is plain TypeScript
  ['apps/web/src/model/_probe.ts', '../store/store.js'],
  ['apps/web/src/model/_probe.ts', '../render/contract.js'],
  ['apps/web/src/model/_probe.ts', '../views/theme.js'],
  ['apps/web/src/model/_probe.ts', '../net/client.js'],
  ['apps/web/src/model/_probe.ts', 'react', 'useState'],
  ['apps/web/src/model/_probe.ts', 'react-dom/client', 'createRoot'],
  ['apps/web/src/model/_probe.ts', 'zustand', 'create'],
  ['apps/web/src/model/_probe.ts', 'd3', 'select'],
  ['apps/web/src/model/_probe.ts', 'd3-selection', 'select'],
  // web: render/ imports only model/
  ['apps/web/src/render/_probe.ts', '../store/data.js'],
  ['apps/web/src/render/_probe.ts', '../views/geometry.js'],
  ['apps/web/src/render/_probe.ts', '../net/endpoints.js'],
  ['apps/web/src/render/_probe.ts', 'react', 'useEffect'],
  // web: views/ read the store and call actions; nobody but main.tsx imports app.ts
  ['apps/web/src/views/_probe.tsx', '../net/client.js'],
  ['apps/web/src/views/_probe.tsx', '../app.js', 'startApp'],
  ['apps/web/src/views/_probe.tsx', '../workers/snapshotImport.js'],
  ['apps/web/src/views/_probe.tsx', '../store/data.js', 'DataLayer'],
  ['apps/web/src/views/_probe.tsx', '../store/windowLoader.js', 'WindowLoader'],
  ['apps/web/src/views/_probe.tsx', '../store/offsetSamples.js', 'OffsetSamples'],
  ['apps/web/src/views/_probe.tsx', '../store/comparison.js', 'Comparison'],
  ['apps/web/src/views/_probe.tsx', '../store/fetchRange.js', 'fetchRange'],
  ['apps/web/src/testhook.ts', './app.js', 'startApp'],
  // web: store/, net/, workers/
  ['apps/web/src/store/_probe.ts', '../views/theme.js'],
  ['apps/web/src/store/_probe.ts', '../render/scheduler.js'],
  ['apps/web/src/store/_probe.ts', 'react', 'useState'],
  ['apps/web/src/net/_probe.ts', '../store/store.js'],
  ['apps/web/src/net/_probe.ts', '../model/view.js'],
  ['apps/web/src/workers/_probe.ts', '../store/data.js'],
  // agent: collector → history → server, composed by service/ (serve) and fleet/, called by cli/
  ['apps/agent/src/collector/_probe.ts', '../server/context.js'],
  ['apps/agent/src/collector/_probe.ts', '../history/store.js'],
  ['apps/agent/src/collector/_probe.ts', '../service/agent.js'],
  ['apps/agent/src/collector/_probe.ts', '../fleet/service.js'],
  ['apps/agent/src/collector/_probe.ts', '../cli/main.js'],
  ['apps/agent/src/collector/_probe.ts', 'express'],
  ['apps/agent/src/history/_probe.ts', '../server/context.js'],
  ['apps/agent/src/history/_probe.ts', '../collector/types.js'],
  ['apps/agent/src/history/_probe.ts', '../fleet/fleet-frames.js'],
  ['apps/agent/src/history/_probe.ts', '@blkheat/bpf-loader', 'openObject'],
  ['apps/agent/src/server/_probe.ts', '../collector/collector.js'],
  ['apps/agent/src/server/_probe.ts', '../service/agent.js'],
  ['apps/agent/src/server/_probe.ts', '../fleet/service.js'],
  ['apps/agent/src/server/_probe.ts', '@blkheat/bpf-loader', 'openObject'],
  ['apps/agent/src/record/_probe.ts', '../collector/index.js'],
  ['apps/agent/src/service/_probe.ts', '../cli/main.js'],
  ['apps/agent/src/service/_probe.ts', '../fleet/service.js'],
  ['apps/agent/src/service/_probe.ts', '../collector/index.js', 'createCollector'],
  ['apps/agent/src/service/_probe.ts', '../collector/loader.js'],
  ['apps/agent/src/fleet/_probe.ts', '../collector/index.js', 'createCollector'],
  ['apps/agent/src/fleet/_probe.ts', '../service/agent.js', 'startAgent'],
  ['apps/agent/src/fleet/_probe.ts', '../cli/serve.js'],
  ['apps/agent/src/fleet/_probe.ts', '@blkheat/bpf-loader', 'openObject'],
  ['apps/agent/src/cli/_probe.ts', '../collector/sampling.js', 'SampleBudget'],
  ['apps/agent/src/cli/_probe.ts', '../server/http.js', 'listen'],
  ['apps/agent/src/cli/_probe.ts', '../history/store.js', 'HistoryStore'],
  // packages
  ['packages/bpf-loader/src/_probe.ts', '@blkheat/shared-types', 'BUCKET_SCHEMA'],
  ['packages/shared-types/src/_probe.ts', 'node:fs', 'readFileSync'],
  ['packages/shared-types/src/_probe.ts', 'react', 'useState'],
  // test helpers: one way only
  ['e2e/lib/_probe.ts', '../../apps/web/src/testhookApi.ts', 'BlkheatHook'],
  ['e2e/lib/_probe.ts', '../../apps/web/test/fixtures/fakeAgent.ts', 'startFakeAgent'],
  ['e2e/_probe.ts', '../apps/web/src/model/snapshot.ts'],
  ['packages/testkit/src/_probe.ts', '../../../e2e/lib/browser.ts', 'launch'],
  ['packages/testkit/src/_probe.ts', '../../../apps/agent/src/history/store.js', 'HistoryStore'],
];

// Imports each layer makes today: none may be reported.
const allowed: [string, string, string?][] = [
  ['apps/web/src/model/_probe.ts', './coords.js'],
  ['apps/web/src/model/_probe.ts', '@blkheat/shared-types', 'BUCKET_SCHEMA'],
  ['apps/web/src/model/_probe.ts', 'd3', 'ticks'],
  ['apps/web/src/render/_probe.ts', '../model/coords.js'],
  ['apps/web/src/render/_probe.ts', './contract.js'],
  ['apps/web/src/render/_probe.ts', 'd3', 'select'],
  ['apps/web/src/views/_probe.tsx', '../store/actions.js'],
  ['apps/web/src/views/_probe.tsx', '../store/dataStore.js', 'useData'],
  ['apps/web/src/views/_probe.tsx', '../store/dataWindow.js', 'windowKnown'],
  ['apps/web/src/views/_probe.tsx', '../render/scheduler.js'],
  ['apps/web/src/views/_probe.tsx', 'react', 'useEffect'],
  ['apps/web/src/store/_probe.ts', '../net/client.js'],
  ['apps/web/src/store/_probe.ts', 'zustand', 'create'],
  ['apps/web/src/net/_probe.ts', './backoff.js'],
  ['apps/web/src/net/_probe.ts', '@blkheat/shared-types', 'PROTOCOL_VERSION'],
  ['apps/web/src/workers/_probe.ts', '../model/snapshot.js'],
  ['apps/web/src/main.tsx', './app.js', 'startApp'],
  ['apps/web/src/testhook.ts', './store/store.js'],
  ['apps/agent/src/collector/_probe.ts', './layout.js'],
  ['apps/agent/src/collector/_probe.ts', '@blkheat/bpf-loader', 'openObject'],
  ['apps/agent/src/history/_probe.ts', './tier.js'],
  ['apps/agent/src/server/_probe.ts', '../collector/types.js'],
  ['apps/agent/src/server/_probe.ts', '../history/range-read.js'],
  ['apps/agent/src/server/_probe.ts', 'express'],
  ['apps/agent/src/record/_probe.ts', '@blkheat/shared-types', 'formatLatency'],
  ['apps/agent/src/service/_probe.ts', '../server/http.js'],
  ['apps/agent/src/service/_probe.ts', '../collector/types.js', 'DEFAULT_SAMPLE_BUDGET'],
  ['apps/agent/src/fleet/_probe.ts', '../service/flags.js', 'parseListenFlags'],
  ['apps/agent/src/fleet/_probe.ts', '../server/http.js', 'listen'],
  ['apps/agent/src/fleet/_probe.ts', '../history/store.js', 'HistoryStore'],
  ['apps/agent/src/cli/_probe.ts', '../service/agent.js'],
  ['apps/agent/src/cli/_probe.ts', '../fleet/service.js', 'startFleet'],
  ['apps/agent/src/cli/_probe.ts', '../collector/index.js', 'createCollector'],
  ['apps/agent/src/cli/_probe.ts', '../record/format-text.js'],
  ['packages/bpf-loader/src/_probe.ts', 'node:fs', 'readFileSync'],
  ['packages/shared-types/src/_probe.ts', 'zod', 'z'],
  ['e2e/lib/_probe.ts', '@blkheat/shared-types', 'BlkheatHook'],
  ['e2e/_probe.ts', './lib/browser.ts', 'launch'],
  ['apps/web/test/browser/_probe.ts', '../../../../e2e/lib/browser.ts', 'launch'],
  ['apps/web/test/fixtures/_probe.ts', '../../../../e2e/lib/browser.ts', 'launchFor'],
];

test('layering: a deliberate violation of each layer rule is reported by the lint', async () => {
  for (const [file, spec, name] of violations) {
    const found = await layerFindings(file, spec, name);
    assert.ok(found.length > 0, `${file}: import from '${spec}' should break a layer rule, and the lint says nothing`);
  }
});

test('layering: the imports each layer is meant to make pass', async () => {
  for (const [file, spec, name] of allowed) {
    assert.deepEqual(await layerFindings(file, spec, name), [], `${file}: import from '${spec}' is legal`);
  }
});

test('layering: the lint names the rule that was broken', async () => {
  const [message] = await layerFindings('apps/web/src/views/_probe.tsx', '../net/client.js');
  assert.match(message ?? '', /views\/ read the store and call actions/);
});
