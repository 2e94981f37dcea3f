// The layering rules in eslint.config.js (no-restricted-imports per folder) fire: for every
// layer a deliberate violation is an error the lint reports, and an import the layer may make
// passes. Lints text as if it were a file in the folder (ESLint's lintText with filePath), so
// no file is written into the tree. The import-cycle check (import-cycles.test.ts) is proved the
// same way, on files given as text.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { ESLint } from 'eslint';
import { importCycles } from './import-graph.ts';

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
  ['apps/web/src/model/_probe.ts', '../store/uiStore.js'],
  ['apps/web/src/model/_probe.ts', '../pipeline/source.js', 'DataSource'],
  ['apps/web/src/model/_probe.ts', '../render/contract.js'],
  ['apps/web/src/model/_probe.ts', '../views/theme.js'],
  ['apps/web/src/model/_probe.ts', '../net/client.js'],
  ['apps/web/src/model/_probe.ts', 'react', 'useState'],
  ['apps/web/src/model/_probe.ts', 'react-dom/client', 'createRoot'],
  ['apps/web/src/model/_probe.ts', 'zustand', 'create'],
  ['apps/web/src/model/_probe.ts', 'd3', 'select'],
  ['apps/web/src/model/_probe.ts', 'd3-selection', 'select'],
  // web: render/ imports only model/
  ['apps/web/src/render/_probe.ts', '../pipeline/dataLayer.js'],
  ['apps/web/src/render/_probe.ts', '../views/geometry.js'],
  ['apps/web/src/render/_probe.ts', '../net/endpoints.js'],
  ['apps/web/src/render/_probe.ts', 'react', 'useEffect'],
  // web: views/ read the store and call actions (an allow-list: what it does not name is refused,
  // a new store file or pipeline part too); nobody but main.tsx imports app.ts
  ['apps/web/src/views/_probe.tsx', '../net/client.js'],
  ['apps/web/src/views/_probe.tsx', '../app.js', 'startApp'],
  ['apps/web/src/views/_probe.tsx', '../dev/benchPage.js'],
  ['apps/web/src/views/_probe.tsx', '../workers/snapshotImport.js'],
  ['apps/web/src/views/_probe.tsx', '../pipeline/dataLayer.js', 'DataLayer'],
  ['apps/web/src/views/_probe.tsx', '../pipeline/windowLoader.js', 'WindowLoader'],
  ['apps/web/src/views/_probe.tsx', '../pipeline/offsetSamples.js', 'OffsetSamples'],
  ['apps/web/src/views/_probe.tsx', '../pipeline/comparison.js', 'Comparison'],
  ['apps/web/src/views/_probe.tsx', '../pipeline/fetchRange.js', 'fetchRange'],
  ['apps/web/src/views/_probe.tsx', '../pipeline/bufferedWindow.js', 'DataWindow'],
  ['apps/web/src/views/_probe.tsx', '../pipeline/newPart.js', 'NewPart'],
  ['apps/web/src/views/_probe.tsx', '../store/newStore.js', 'useNew'],
  ['apps/web/src/views/_probe.tsx', '../newFolder/thing.js', 'thing'],
  ['apps/web/src/views/_probe.tsx', '../testhook.js', 'installTestHook'],
  ['apps/web/src/views/_probe.tsx', 'zustand', 'create'],
  ['apps/web/src/views/_probe.tsx', 'd3', 'select'],
  ['apps/web/src/testhook.ts', './app.js', 'startApp'],
  // web: pipeline/ reads model/, net/ and the stores it publishes into; the actions call it, never the other way
  ['apps/web/src/pipeline/_probe.ts', '../store/actions.js', 'bindActions'],
  ['apps/web/src/pipeline/_probe.ts', '../store/compareActions.js', 'setBaseline'],
  ['apps/web/src/pipeline/_probe.ts', '../views/App.js', 'App'],
  ['apps/web/src/pipeline/_probe.ts', '../render/scheduler.js'],
  ['apps/web/src/pipeline/_probe.ts', '../workers/snapshotImport.js'],
  ['apps/web/src/pipeline/_probe.ts', '../app.js', 'startApp'],
  ['apps/web/src/pipeline/_probe.ts', 'react', 'useState'],
  ['apps/web/src/pipeline/_probe.ts', 'zustand', 'create'],
  ['apps/web/src/dev/_probe.ts', '../pipeline/heatMaps.js', 'HeatMaps'],
  // web: store/, net/, workers/
  ['apps/web/src/store/_probe.ts', '../views/theme.js'],
  ['apps/web/src/store/_probe.ts', '../render/scheduler.js'],
  ['apps/web/src/store/_probe.ts', 'react', 'useState'],
  ['apps/web/src/net/_probe.ts', '../store/uiStore.js'],
  ['apps/web/src/net/_probe.ts', '../model/view.js'],
  ['apps/web/src/workers/_probe.ts', '../pipeline/dataLayer.js'],
  // agent: collector → history → server, composed by service/ (serve) and fleet/, called by cli/
  ['apps/agent/src/collector/_probe.ts', '../server/context.js'],
  ['apps/agent/src/collector/_probe.ts', '../history/store.js'],
  ['apps/agent/src/collector/_probe.ts', '../service/agent.js'],
  ['apps/agent/src/collector/_probe.ts', '../fleet/service.js'],
  ['apps/agent/src/collector/_probe.ts', '../cli/main.js'],
  ['apps/agent/src/collector/_probe.ts', 'express'],
  // agent: collector/'s sub-folders keep its rules; its parts (abi/, decode/, host/) never import its lifecycle, and abi/ and
  // host/ never import decode/
  ['apps/agent/src/collector/decode/_probe.ts', '../../server/context.js'],
  ['apps/agent/src/collector/host/_probe.ts', '../../history/store.js'],
  ['apps/agent/src/collector/abi/_probe.ts', 'express'],
  ['apps/agent/src/collector/decode/_probe.ts', '../collector.js', 'createCollector'],
  ['apps/agent/src/collector/host/_probe.ts', '../loader.js', 'loadObject'],
  ['apps/agent/src/collector/abi/_probe.ts', '../index.js', 'createCollector'],
  ['apps/agent/src/collector/abi/_probe.ts', '../decode/harvest.js', 'HistogramHarvester'],
  ['apps/agent/src/collector/host/_probe.ts', '../decode/classes.js', 'ClassNamer'],
  ['apps/agent/src/history/_probe.ts', '../server/context.js'],
  ['apps/agent/src/history/_probe.ts', '../collector/types.js'],
  ['apps/agent/src/history/_probe.ts', '../fleet/fleet-frames.js'],
  ['apps/agent/src/history/_probe.ts', '@blkheat/bpf-loader', 'openObject'],
  ['apps/agent/src/server/_probe.ts', '../collector/collector.js'],
  ['apps/agent/src/server/_probe.ts', '../collector/abi/layout.js'],
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
  ['apps/agent/src/cli/_probe.ts', '../collector/decode/sampling.js', 'SampleBudget'],
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
  // e2e/ by package name too: of the agent only the machine's facts, from its public collector entry
  ['e2e/_probe.ts', '@blkheat/agent/collector', 'createCollector'],
  ['e2e/_probe.ts', '@blkheat/agent/server/native-histograms', 'DEFAULT_METRICS_PROTO'],
  ['e2e/_probe.ts', '@blkheat/agent', 'x'],
  ['e2e/lib/_probe.ts', '@blkheat/web', 'x'],
  ['e2e/_probe.ts', '@blkheat/bpf-loader', 'openObject'],
  ['packages/testkit/src/_probe.ts', '../../../e2e/lib/dashboard.ts', 'openDashboard'],
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
  ['apps/web/src/views/_probe.tsx', '../store/compareActions.js', 'setBaseline'],
  ['apps/web/src/views/_probe.tsx', '../store/pipelineStore.js', 'useData'],
  ['apps/web/src/views/_probe.tsx', '../store/shownWindow.js', 'windowKnown'],
  ['apps/web/src/views/_probe.tsx', '../store/uiStore.js', 'useUi'],
  ['apps/web/src/views/_probe.tsx', '../store/notices.js', 'notify'],
  ['apps/web/src/views/_probe.tsx', '../render/scheduler.js'],
  ['apps/web/src/views/_probe.tsx', '../model/format.js', 'formatCount'],
  ['apps/web/src/views/_probe.tsx', './theme.js'],
  ['apps/web/src/views/_probe.tsx', 'react', 'useEffect'],
  ['apps/web/src/views/_probe.tsx', '@blkheat/shared-types', 'bucketCount'],
  ['apps/web/src/pipeline/_probe.ts', './source.js', 'DataSource'],
  ['apps/web/src/pipeline/_probe.ts', '../model/view.js', 'liveView'],
  ['apps/web/src/pipeline/_probe.ts', '../net/client.js', 'AgentClient'],
  ['apps/web/src/pipeline/_probe.ts', '../store/pipelineStore.js', 'NO_SAMPLES'],
  ['apps/web/src/pipeline/_probe.ts', '../store/uiStore.js', 'UiReader'],
  ['apps/web/src/pipeline/_probe.ts', '../store/shownWindow.js', 'windowKnown'],
  ['apps/web/src/pipeline/_probe.ts', '../store/notices.js', 'Notify'],
  ['apps/web/src/pipeline/_probe.ts', '@blkheat/shared-types', 'sameSchema'],
  ['apps/web/src/store/_probe.ts', '../pipeline/dataLayer.js', 'DataLayer'],
  ['apps/web/src/store/_probe.ts', '../net/client.js'],
  ['apps/web/src/store/_probe.ts', 'zustand', 'create'],
  ['apps/web/src/net/_probe.ts', './backoff.js'],
  ['apps/web/src/net/_probe.ts', '@blkheat/shared-types', 'PROTOCOL_VERSION'],
  ['apps/web/src/workers/_probe.ts', '../model/snapshot.js'],
  ['apps/web/src/main.tsx', './app.js', 'startApp'],
  ['apps/web/src/testhook.ts', './store/uiStore.js'],
  ['apps/web/src/testhook.ts', './pipeline/dataLayer.js', 'DataLayer'],
  ['apps/agent/src/collector/_probe.ts', './abi/layout.js'],
  ['apps/agent/src/collector/_probe.ts', './decode/harvest.js', 'HistogramHarvester'],
  ['apps/agent/src/collector/_probe.ts', '@blkheat/bpf-loader', 'openObject'],
  ['apps/agent/src/collector/abi/_probe.ts', './layout.js'],
  ['apps/agent/src/collector/abi/_probe.ts', '../errors.js', 'CollectorError'],
  ['apps/agent/src/collector/decode/_probe.ts', '../abi/layout.js'],
  ['apps/agent/src/collector/decode/_probe.ts', '../host/devices.js', 'DeviceRegistry'],
  ['apps/agent/src/collector/decode/_probe.ts', '@blkheat/bpf-loader', 'BpfMap'],
  ['apps/agent/src/collector/host/_probe.ts', '../abi/layout.js', 'parseDevString'],
  ['apps/agent/src/collector/host/_probe.ts', 'node:fs', 'readFileSync'],
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
  ['e2e/_probe.ts', '@blkheat/testkit', 'runFio'],
  ['e2e/_probe.ts', '@blkheat/agent/collector', 'kernelFactsOf'],
  ['e2e/_probe.ts', '@blkheat/agent/collector', 'findIoHierarchy'],
  ['e2e/_probe.ts', './lib/dashboard.ts', 'openDashboard'],
  ['e2e/_probe.ts', '@blkheat/testkit', 'launch'],
  ['apps/web/test/browser/_probe.ts', '@blkheat/testkit', 'launch'],
  ['apps/web/test/fixtures/_probe.ts', '@blkheat/testkit', 'launchFor'],
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

// The import-cycle check: a cycle is found and named (here one model/ could make: the heat matrix
// reads a cgroup's latency from cgroups.ts, which sums percentiles, whose track reads the heat
// matrix), type-only imports included; the same files with the shared piece moved pass.
test('import cycles: a cycle among the files is found and named, and none when it is broken', () => {
  const dir = join(root, 'apps/web/src/model');
  const files = (texts: Record<string, string>) => new Map(Object.entries(texts).map(([f, t]) => [join(dir, f), t]));
  // cgroups.ts sums percentiles; the percentile track reads the heat matrix (a type-only import).
  const others = {
    'cgroups.ts': "import { quantilesOf } from './percentiles.js';\nimport { forEachDiskInRange } from './diskFrames.js';\n",
    'percentiles.ts': "import type { HeatMatrix } from './heatmatrix.js';\n",
    'diskFrames.ts': "import type { Frame } from '@blkheat/shared-types';\n",
  };
  const cyclic = files({ ...others, 'heatmatrix.ts': "import { cgroupHistogram } from './cgroups.js';\n" });
  assert.deepEqual(
    importCycles(cyclic).map((c) => c.map((f) => f.slice(dir.length + 1))),
    [['cgroups.ts', 'percentiles.ts', 'heatmatrix.ts', 'cgroups.ts']],
  );
  const broken = files({ ...others, 'heatmatrix.ts': "import { cgroupLatency } from './diskFrames.js';\n" });
  assert.deepEqual(importCycles(broken), []);
  assert.equal(importCycles(files({ 'self.ts': "export * from './self.js';\n" })).length, 1, 'a file importing itself');
});
