/** Controls: live span, latency phase, colour scale, percentiles, stuck threshold, tool, theme, files. */
import { useRef } from 'react';
import { formatLatency } from '../model/latency.js';
import { PHASE_LABELS, PHASE_TITLES, PHASES, phaseUnavailable } from '../model/phase.js';
import { STUCK_PRESETS } from '../model/stuck.js';
import { LIVE_SPANS } from '../model/view.js';
import {
  exportSnapshot,
  goLive,
  importFile,
  setColour,
  setKind,
  setNorm,
  setPercentiles,
  setStuckThreshold,
  setTheme,
  showHelp,
  setTool,
} from '../store/actions.js';
import { setBaselineFromView } from '../store/compareActions.js';
import { useData } from '../store/pipelineStore.js';
import { useUi } from '../store/uiStore.js';
import { exportPng } from './exportPng.js';

function Segmented<T extends string>({
  label,
  value,
  options,
  onChange,
  testid,
}: {
  label: string;
  value: T;
  /** `disabled`: why the option cannot be chosen now (its title says so). */
  options: readonly { value: T; label: string; title?: string; disabled?: string | undefined }[];
  onChange: (v: T) => void;
  testid: string;
}) {
  return (
    <div className="segmented" role="group" aria-label={label} data-testid={testid}>
      {options.map((o) => (
        <button
          key={o.value}
          type="button"
          aria-pressed={value === o.value}
          title={o.disabled ?? o.title}
          disabled={o.disabled !== undefined}
          onClick={() => onChange(o.value)}
          data-testid={`${testid}-${o.value}`}
        >
          {o.label}
        </button>
      ))}
    </div>
  );
}

/**
 * The latency phase: Total (what the application sees), Submit wait, Queue, Device. Total and
 * Submit wait are disabled, saying why, for data without submit-wait timing (before protocol 4),
 * which shows device latency.
 */
function PhaseChoice() {
  const kind = useUi((s) => s.kind);
  const mode = useData((s) => s.mode);
  const submitTiming = useData((s) => s.submitTiming);
  const snapshotVersion = useData((s) => s.snapshot?.version);
  const agentProtocol = useUi((s) => s.agent?.protocol);
  const src = { submitTiming, version: mode === 'snapshot' ? snapshotVersion : agentProtocol, snapshot: mode === 'snapshot' };
  return (
    <Segmented
      label="latency phase"
      testid="kind"
      value={kind}
      onChange={setKind}
      options={PHASES.map((p) => ({ value: p, label: PHASE_LABELS[p], title: PHASE_TITLES[p], disabled: phaseUnavailable(p, src) }))}
    />
  );
}

/** The stuck I/O threshold: the presets, plus a value a link set that is not one of them. */
function StuckThreshold() {
  const stuck = useUi((s) => s.stuck);
  const options = STUCK_PRESETS.includes(stuck) ? STUCK_PRESETS : [...STUCK_PRESETS, stuck].sort((a, b) => a - b);
  return (
    <label className="check" title="An I/O in flight longer than this is stuck: its disk's row head turns red and lists it">
      stuck after
      <select value={String(stuck)} onChange={(e) => setStuckThreshold(Number(e.target.value))} data-testid="stuck-threshold">
        {options.map((v) => (
          <option key={v} value={String(v)}>
            {formatLatency(v)}
          </option>
        ))}
      </select>
    </label>
  );
}

export function Toolbar() {
  const view = useUi((s) => s.view);
  const mode = useData((s) => s.mode);
  const colour = useUi((s) => s.colour);
  const norm = useUi((s) => s.norm);
  const percentiles = useUi((s) => s.percentiles);
  const theme = useUi((s) => s.theme);
  const tool = useUi((s) => s.tool);
  const comparing = useUi((s) => s.compare !== undefined);
  const file = useRef<HTMLInputElement>(null);
  return (
    <div className="toolbar" role="toolbar" aria-label="view controls">
      {mode === 'live' && (
        <div className="segmented" role="group" aria-label="live window" data-testid="span">
          {LIVE_SPANS.map((s) => (
            <button
              key={s.span}
              type="button"
              aria-pressed={view.following && view.span === s.span}
              onClick={() => goLive(s.span)}
              title={`Follow the last ${s.label} live`}
              data-testid={`span-${s.label}`}
            >
              {s.label}
            </button>
          ))}
        </div>
      )}
      <PhaseChoice />
      <Segmented
        label="colour scale"
        testid="colour"
        value={colour}
        onChange={setColour}
        options={[
          { value: 'log', label: 'Log', title: 'logarithmic colour scale' },
          { value: 'linear', label: 'Linear', title: 'linear colour scale' },
        ]}
      />
      <Segmented
        label="colour scale per disk or shared"
        testid="norm"
        value={norm}
        onChange={setNorm}
        options={[
          {
            value: 'disk',
            label: 'Per disk',
            title:
              "each disk's heat map on its own colour scale (its busiest visible cell gets the top colour): anomalies on quiet disks show",
          },
          { value: 'shared', label: 'Shared', title: 'one colour scale for every disk: brightness compares across disks' },
        ]}
      />
      <label className="check" title="percentile lines over the heat maps">
        <input type="checkbox" checked={percentiles} onChange={(e) => setPercentiles(e.target.checked)} data-testid="percentiles" />
        <span className="pl pl-p50">p50</span>
        <span className="pl pl-p99">p99</span>
        <span className="pl pl-p999">p99.9</span>
      </label>
      <StuckThreshold />
      <Segmented
        label="drag tool"
        testid="tool"
        value={tool}
        onChange={setTool}
        options={[
          { value: 'zoom', label: 'Zoom', title: 'drag selects a time range to zoom into' },
          { value: 'select', label: 'Select', title: 'drag a box to list the sampled I/Os inside it (or Alt-drag)' },
        ]}
      />
      <button
        type="button"
        onClick={setBaselineFromView}
        data-testid="set-baseline"
        aria-pressed={comparing}
        title="Compare (A/B): the visible range becomes the baseline (or Ctrl/⌘-drag a time range); the view, or a range you pin, is compared with it"
      >
        A/B: view as baseline
      </button>
      <span className="spacer" />
      <input
        ref={file}
        type="file"
        accept=".json,application/json"
        className="visually-hidden"
        data-testid="import-input"
        aria-label="import snapshot file"
        onChange={(e) => {
          const f = e.target.files?.[0];
          e.target.value = '';
          if (f) void importFile(f);
        }}
      />
      <button
        type="button"
        onClick={() => file.current?.click()}
        data-testid="import"
        title="Import a snapshot (or drop a file on the page)"
      >
        Import…
      </button>
      <button
        type="button"
        onClick={() => void exportSnapshot()}
        data-testid="export-json"
        title="Save the visible range as a snapshot file"
      >
        Export JSON
      </button>
      <button type="button" onClick={() => void exportPng()} data-testid="export-png" title="Save the heat maps as an image">
        Export PNG
      </button>
      <button type="button" onClick={() => showHelp(true)} data-testid="help" title="Keys and gestures (?)" aria-label="keys and gestures">
        ?
      </button>
      <Segmented
        label="theme"
        testid="theme"
        value={theme}
        onChange={setTheme}
        options={[
          { value: 'system', label: 'Auto', title: 'follow the system' },
          { value: 'light', label: '☀', title: 'light theme' },
          { value: 'dark', label: '☾', title: 'dark theme' },
        ]}
      />
    </div>
  );
}
