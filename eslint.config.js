// One lint setup for the whole workspace (flat config). Formatting is prettier's job.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import reactHooks from 'eslint-plugin-react-hooks';
import globals from 'globals';

// Layers (docs/architecture.md, "Rules the checks enforce" > "Layers"; apps/web/README.md "Layers"): what each folder may import.
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
// The collector, from its top level and its sub-folders (hence the ../ repeated).
const collectorRules = [
  [
    '^(\\.\\./)+(history|server|service|fleet|cli|record)(/|\\.js$)',
    'collector/ decodes kernel maps into frames: it imports nothing from history/, server/, service/, fleet/, cli/ or record/',
  ],
  noHttp,
];
const notTheLifecycle = [
  '^\\.\\./(collector|loader|index)(\\.js)?$',
  "the collector's lifecycle (collector.ts, loader.ts) composes abi/, decode/ and host/: they never import it, nor index.ts (the public face)",
];
const notDecode = (message) => ['^\\.\\./decode/', message];

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
  // views/ by an allow-list: a folder or file no rule names (a new store, a pipeline part) is
  // refused until one does. They may import other views; model/ (pure layout, formats, scales,
  // coordinates); render/ (what draws their canvases, the scheduler); the stores they read
  // (store/uiStore.ts, store/pipelineStore.ts and the window it publishes, store/shownWindow.ts,
  // store/notices.ts) and the actions that change them (store/actions.ts, store/compareActions.ts);
  // React and the wire's types. Not net/ (the agent client), workers/ or pipeline/: app.ts wires
  // them and actions call them. Not d3 (drawing is render/'s) nor zustand (they read through the
  // stores' hooks).
  layer(
    ['apps/web/src/views/**/*.{ts,tsx}'],
    [
      [
        '^\\.\\./(?!model/|render/|store/(uiStore|pipelineStore|shownWindow|notices|actions|compareActions)(\\.js)?$)',
        'views/ read the store and call actions: they import only model/, render/, the stores (store/uiStore, pipelineStore, shownWindow, notices) and actions (store/actions, compareActions); never net/, workers/ or pipeline/ (app.ts wires the data pipeline, actions call it)',
      ],
      [
        '^(?!\\.\\.?/|react$|react-dom$|@blkheat/shared-types$)',
        'views/ import only react, react-dom and @blkheat/shared-types of the packages: d3 drawing is render/, zustand is read through the stores',
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
  // pipeline/ is the data path (source → window → heat maps → summary; samples, compare): it
  // reads model/, the agent client (net/) and the stores it reads or publishes into. app.ts wires
  // it and actions call it, so it never imports store/actions.ts (nor views/ or render/, which
  // read the store it publishes into). Plain TypeScript: the stores are zustand, not it.
  layer(
    ['apps/web/src/pipeline/**/*.{ts,tsx}'],
    [
      [
        '^\\.\\./(?!model/|net/|store/(uiStore|pipelineStore|shownWindow|notices)(\\.js)?$)',
        'pipeline/ imports only model/, net/ and the stores it reads or publishes into (store/uiStore, pipelineStore, shownWindow, notices): never views/, render/, workers/ or store/actions (the actions call the pipeline, not the other way)',
      ],
      ['^(?!\\.\\.?/|@blkheat/shared-types$)', 'pipeline/ imports only @blkheat/shared-types of the packages: no React, zustand or d3'],
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
    [['^\\.\\./(store|pipeline|views|net)/', 'the bench page drives render/ and model/ directly'], notTheRoot],
  ),
  layer(['apps/web/src/*.{ts,tsx}'], [notTheRoot, notDev]),
  // app.ts and main.tsx are the roots: they wire everything.
  { files: ['apps/web/src/{app.ts,main.tsx}'], rules: { 'no-restricted-imports': 'off' } },
  // ---- apps/agent (data flows kernel → collector → history → server; service/ composes serve,
  // fleet/ composes the fleet view from Prometheus, cli/ parses commands and calls them) ----
  layer(['apps/agent/src/collector/**/*.ts'], collectorRules),
  // Its parts by job (collector/index.ts): abi/ (the kernel ABI), decode/ (kernel maps and ring
  // buffer into frames, samples, in-flight, untimed) and host/ (devices, disks, cgroups, kernel
  // facts, clock). The lifecycle (collector.ts, loader.ts) composes them; they never import it.
  layer(
    ['apps/agent/src/collector/abi/**/*.ts'],
    [...collectorRules, notTheLifecycle, notDecode('abi/ is the kernel ABI: decode/ reads records through it, never the other way')],
  ),
  layer(['apps/agent/src/collector/decode/**/*.ts'], [...collectorRules, notTheLifecycle]),
  layer(
    ['apps/agent/src/collector/host/**/*.ts'],
    [...collectorRules, notTheLifecycle, notDecode('host/ discovers the machine: it decodes no kernel record, decode/ reads host/')],
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
  // ---- test helpers: imported one way (e2e/ takes e2e/lib and testkit, apps/*/test take testkit; never back) ----
  // e2e/ drives the built agent and dashboard as a user would: apps/ source is not its to import,
  // by a path or by a package name. Of the workspace it takes @blkheat/shared-types (the wire's
  // types) and @blkheat/testkit. One exception, named: from the agent's public collector entry,
  // the two facts of the machine under test that a test must read as the agent does (whether the
  // kernel hides pid 1's context from BPF, kernelFactsOf; where the io cgroup hierarchy is,
  // findIoHierarchy), so its expected counts match what the agent can see.
  layer(
    ['e2e/**/*.ts'],
    [
      ['^(\\.\\./)+apps/', 'e2e/ drives the built agent and dashboard: it imports no apps/ source (types come from @blkheat/shared-types)'],
      [
        '^@blkheat/(?!shared-types$|testkit$|agent/collector$)',
        'e2e/ takes only @blkheat/shared-types and @blkheat/testkit of the workspace: the agent and the dashboard are driven as built, not imported',
      ],
    ],
    [
      {
        name: '@blkheat/agent/collector',
        allowImportNames: ['kernelFactsOf', 'findIoHierarchy'],
        message:
          "e2e/ takes only the machine's facts from the agent's collector (kernelFactsOf, findIoHierarchy): it never runs a collector in-process",
      },
    ],
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
