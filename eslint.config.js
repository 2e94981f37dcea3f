// One lint setup for the whole workspace (flat config). Formatting is prettier's job.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import reactHooks from 'eslint-plugin-react-hooks';
import globals from 'globals';

// Layers (../shared/DESIGN.md §2, apps/web/README.md "Layers"): what each folder may import.
// One block per folder: for one file, a later block's no-restricted-imports replaces an earlier
// one's options, it does not add to them. scripts/test/lint-layers.test.ts shows every rule fires.
const layer = (files, patterns, paths = []) => ({
  files,
  rules: { 'no-restricted-imports': ['error', { paths, patterns: patterns.map(([regex, message]) => ({ regex, message })) }] },
});
// Only main.tsx imports app.ts (the composition root): testhook.ts and views get what they need
// passed in or through store actions, so there is no import cycle through the root.
const notTheRoot = [
  '^\\.\\.?/(app|main)(\\.js)?$',
  'app.ts is the composition root: only main.tsx imports it (take what you need as a parameter, or call a store action)',
];
const notDev = ['^\\.\\.?/dev/', 'src/dev/ is the benchmark page: nothing shipped imports it'];
// d3 modules that touch the DOM (selections, axes, zoom, brush, drag, transitions, timers, fetch).
const d3Dom = [
  ...['select', 'selectAll', 'create', 'creator', 'selection', 'selector', 'selectorAll', 'matcher', 'namespace', 'namespaces'],
  ...['pointer', 'pointers', 'style', 'window', 'local', 'axisTop', 'axisRight', 'axisBottom', 'axisLeft'],
  ...['zoom', 'zoomTransform', 'zoomIdentity', 'brush', 'brushX', 'brushY', 'brushSelection', 'drag', 'dragDisable', 'dragEnable'],
  ...['transition', 'active', 'interrupt', 'timer', 'timeout', 'interval', 'now', 'timerFlush'],
  ...['csv', 'tsv', 'dsv', 'json', 'text', 'xml', 'html', 'svg', 'image', 'blob', 'buffer'],
];
const noHttp = ['^(express|ws|node:https?|https?)$', 'only server/ speaks HTTP and WebSocket'];

const layers = [
  // ---- apps/web ----
  layer(
    ['apps/web/src/model/**/*.{ts,tsx}'],
    [
      ['^\\.\\./', 'model/ imports nothing outside model/: no store/, render/, views/, net/ (plain TypeScript, see apps/web/README.md)'],
      [
        '^(?!\\./|@blkheat/shared-types$|d3$)',
        'model/ imports only model/, @blkheat/shared-types and d3 math: no React, react-dom, zustand or DOM-bound modules',
      ],
    ],
    [
      {
        name: 'd3',
        importNames: d3Dom,
        message:
          "model/ uses d3's math only: selections, axes, zoom, brush, drag, transitions, timers and fetch touch the DOM (render/ or views/)",
      },
    ],
  ),
  layer(
    ['apps/web/src/render/**/*.{ts,tsx}'],
    [
      ['^\\.\\./(?!model/)', 'render/ imports only model/ (draws what a RenderContext describes): no store/, views/, net/'],
      [
        '^(?!\\.\\.?/|@blkheat/shared-types$|d3$)',
        'render/ imports only model/, @blkheat/shared-types and d3: no React, react-dom or zustand',
      ],
    ],
  ),
  layer(
    ['apps/web/src/views/**/*.{ts,tsx}'],
    [
      [
        '^\\.\\./net/',
        'views/ read the store and call actions (store/actions.ts); they never reach the agent client or REST (net/) directly',
      ],
      ['^\\.\\./workers/', 'views/ reach the snapshot worker through store actions'],
      [
        '^\\.\\./store/(data|source|windowLoader|heatMaps|visibleSummary|selectedSamples|offsetSamples|comparison|fetchRange|frameLog|busy)(\\.js)?$',
        'views/ read the data layer through its store (store/dataStore.ts, useData) and change it through actions; its parts belong to app.ts',
      ],
      notTheRoot,
      notDev,
    ],
  ),
  layer(
    ['apps/web/src/store/**/*.{ts,tsx}'],
    [
      ['^\\.\\./(views|render)/', 'store/ owns state and actions: it never imports views/ or render/ (they read the store)'],
      ['^(react|react-dom)(/|$)', 'store/ is not React: zustand only'],
      notTheRoot,
      notDev,
    ],
  ),
  layer(
    ['apps/web/src/net/**/*.{ts,tsx}'],
    [
      ['^\\.\\./', 'net/ (the agent client and REST) imports nothing else of the dashboard: callers hand it callbacks'],
      ['^(?!\\./|@blkheat/shared-types$)', 'net/ imports only net/ and @blkheat/shared-types'],
    ],
  ),
  layer(
    ['apps/web/src/workers/**/*.{ts,tsx}'],
    [
      ['^\\.\\./(?!model/)', 'workers/ import only model/ (no store/, render/, views/, net/)'],
      ['^(?!\\.\\.?/|@blkheat/shared-types$)', 'workers/ import only model/ and @blkheat/shared-types'],
    ],
  ),
  layer(
    ['apps/web/src/dev/**/*.{ts,tsx}'],
    [['^\\.\\./(store|views|net)/', 'the bench page drives render/ and model/ directly'], notTheRoot],
  ),
  layer(['apps/web/src/*.{ts,tsx}'], [notTheRoot, notDev]),
  // app.ts and main.tsx are the roots: they wire everything.
  { files: ['apps/web/src/{app.ts,main.tsx}'], rules: { 'no-restricted-imports': 'off' } },
  // ---- apps/agent (data flows kernel → collector → history → server; service/ composes serve,
  // fleet/ composes the fleet view from Prometheus, cli/ parses commands and calls them) ----
  layer(
    ['apps/agent/src/collector/**/*.ts'],
    [
      [
        '^\\.\\./(history|server|service|fleet|cli|record)(/|\\.js$)',
        'collector/ decodes kernel maps into frames: it imports nothing from history/, server/, service/, fleet/, cli/ or record/',
      ],
      noHttp,
    ],
  ),
  // history/ stores frames in the shared-types shape: it needs nothing of the collector (not even
  // its types) and nothing of the server, and it never touches BPF.
  layer(
    ['apps/agent/src/history/**/*.ts'],
    [
      [
        '^\\.\\./(collector|server|service|fleet|cli|record)(/|\\.js$)',
        'history/ imports nothing from collector/, server/, service/, fleet/, cli/ or record/ (frames come in the shared-types shape)',
      ],
      ['^@blkheat/bpf-loader$', 'history/ never touches BPF'],
      noHttp,
    ],
  ),
  // server/ reads history/ and the collector's public types (collector/types.ts), nothing else of it.
  layer(
    ['apps/agent/src/server/**/*.ts'],
    [
      ['^\\.\\./collector/(?!types(\\.js)?$)', 'server/ sees the collector only through collector/types.ts (service/agent.ts wires them)'],
      ['^\\.\\./(service|fleet|cli|record)(/|\\.js$)', 'server/ imports nothing from service/, fleet/, cli/ or record/ (they compose it)'],
      ['^@blkheat/bpf-loader$', 'server/ never touches BPF'],
    ],
  ),
  layer(
    ['apps/agent/src/record/**/*.ts'],
    [
      [
        '^\\.\\./(collector|history|server|service|fleet|cli)(/|\\.js$)',
        "record/ formats frames for 'blkheat record': it imports only shared-types",
      ],
      noHttp,
    ],
  ),
  // service/ is handed its collector (cli/serve.ts creates it): it sees only collector/types.ts.
  layer(
    ['apps/agent/src/service/**/*.ts'],
    [
      ['^\\.\\./(cli|fleet|record)(/|\\.js$)', 'service/ composes serve: cli/ calls it, and fleet/ and record/ are other commands'],
      [
        '^\\.\\./collector/(?!types(\\.js)?$)',
        'service/ is handed its collector: it sees only collector/types.ts (cli/serve.ts creates it)',
      ],
    ],
  ),
  // fleet/ draws from Prometheus: no probes, no root. It shares serve's flag rules (service/flags.ts)
  // and composes server/ and history/ as service/agent.ts does.
  layer(
    ['apps/agent/src/fleet/**/*.ts'],
    [
      ['^\\.\\./(collector|cli|record)(/|\\.js$)', 'fleet/ loads no probes: it imports nothing from collector/, cli/ or record/'],
      ['^\\.\\./service/(?!flags(\\.js)?$)', 'fleet/ takes only the shared flag rules (service/flags.ts) from service/'],
      ['^@blkheat/bpf-loader$', 'fleet/ never touches BPF (no probes, no root)'],
    ],
  ),
  // cli/ parses a command and calls service/, fleet/ or the collector's public face.
  layer(
    ['apps/agent/src/cli/**/*.ts'],
    [
      ['^\\.\\./collector/(?!index(\\.js)?$)', 'cli/ reaches the collector through collector/index.ts'],
      ['^\\.\\./(server|history)(/|\\.js$)', 'cli/ calls service/ or fleet/, which compose server/ and history/'],
    ],
  ),
  // ---- packages ----
  layer(
    ['packages/bpf-loader/src/**/*.ts'],
    [['^@blkheat/', 'the loader is generic libbpf: it knows nothing of blkheat, block I/O or the schema']],
  ),
  // ---- test helpers: imported one way (apps/web/test and e2e/ take e2e/lib and testkit; never back) ----
  layer(
    ['e2e/**/*.ts'],
    [['^(\\.\\./)+apps/', 'e2e/ drives the built agent and dashboard: it imports no apps/ source (types come from @blkheat/shared-types)']],
  ),
  layer(
    ['packages/testkit/src/**/*.ts'],
    [['^(\\.\\./)+(apps|e2e)/', 'testkit is imported by the tests: it imports nothing of apps/ or e2e/']],
  ),
  layer(
    ['packages/shared-types/src/**/*.ts'],
    [
      [
        '^(?!\\./|zod$)',
        'shared-types runs in the browser and the agent: it imports only shared-types and zod (no node:, React, d3 or other packages)',
      ],
    ],
  ),
];

export default tseslint.config(
  {
    ignores: ['**/node_modules/**', '**/dist/**', '**/build/**', '.tools/**', 'artifacts/**', 'bpf/**', '**/*.d.ts'],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      'no-console': 'off',
    },
  },
  {
    files: ['apps/web/src/**/*.{ts,tsx}'],
    languageOptions: { globals: { ...globals.browser } },
    plugins: { 'react-hooks': reactHooks },
    rules: reactHooks.configs.recommended.rules,
  },
  ...layers,
);
