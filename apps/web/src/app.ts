/**
 * The composition root, outside React: URL → UI store at start, UI store → URL as it changes;
 * the agent client, the data pipeline (pipeline/dataLayer.ts) and the actions bound to them. The one
 * place that wires subscriptions, in one direction: the agent client's events and the UI
 * store's changes go to the data layer, which publishes into the pipeline store; changes of either
 * store invalidate the renderers. Views only read the stores and call actions.
 */
import type { DiskInfo, FleetRanking, FleetStuck } from '@blkheat/shared-types';
import { resolvePhase } from './model/phase.js';
import { decodeUrlState, encodeUrlState } from './model/urlstate.js';
import { fixedView, liveView } from './model/view.js';
import { AgentClient } from './net/client.js';
import { apiFetch, HttpError, streamUrl } from './net/endpoints.js';
import { captureToken } from './net/token.js';
import { scheduler } from './render/scheduler.js';
import { bindActions } from './store/actions.js';
import { DataLayer } from './pipeline/dataLayer.js';
import { helloClock } from './pipeline/source.js';
import { type DataState, useData } from './store/pipelineStore.js';
import { notify } from './store/notices.js';
import { type ThemeChoice, useUi, type UiState } from './store/uiStore.js';
import { installTestHook } from './testhook.js';
import { warmSnapshotReaderWhenIdle } from './workers/snapshotImport.js';

function applyUrl(): void {
  const u = decodeUrlState(window.location.search);
  const now = Math.floor(Date.now() / 1000);
  let theme: ThemeChoice = 'system';
  try {
    const t = localStorage.getItem('blkheat.theme');
    if (t === 'light' || t === 'dark') theme = t;
  } catch {
    // storage disabled
  }
  useUi.setState({
    view: u.live || u.from === undefined || u.to === undefined ? liveView(now, u.span) : fixedView(u.from, u.to),
    liveSpan: u.live ? u.span : 300,
    diskChoice: u.disks,
    classes: u.classes,
    cgroup: u.cgroup,
    kindChoice: u.kind,
    kind: resolvePhase(u.kind, useData.getState().submitTiming),
    colour: u.colour,
    norm: u.norm,
    percentiles: u.percentiles,
    compare: u.compare,
    stuck: u.stuck,
    rankFilter: u.rankFilter ?? {},
    theme,
  });
  // A link that asked for something this page cannot show says so (and the rest of it works).
  for (const p of u.problems) notify('error', `Link: ${p}.`);
}

function urlOf(s: UiState): string {
  return encodeUrlState({
    live: s.view.following,
    span: s.view.following ? s.view.span : s.view.to - s.view.from,
    from: s.view.following ? undefined : s.view.from,
    to: s.view.following ? undefined : s.view.to,
    disks: s.diskChoice,
    classes: s.classes,
    cgroup: s.cgroup,
    kind: s.kindChoice,
    colour: s.colour,
    norm: s.norm,
    percentiles: s.percentiles,
    compare: s.compare,
    stuck: s.stuck,
    rankFilter: s.rankFilter,
  });
}

let urlTimer: ReturnType<typeof setTimeout> | undefined;
function syncUrl(s: UiState): void {
  clearTimeout(urlTimer);
  urlTimer = setTimeout(() => {
    const q = urlOf(s);
    const want = q ? `?${q}` : '';
    if (want !== window.location.search) {
      window.history.replaceState(window.history.state, '', window.location.pathname + want + window.location.hash);
    }
  }, 250);
}

async function probeAuth(): Promise<string | undefined> {
  try {
    await apiFetch('api/v1/disks');
    return undefined;
  } catch (e) {
    if (e instanceof HttpError && (e.status === 401 || e.status === 403)) {
      return 'the agent refused this page’s token: open the link the agent printed (…/#token=…)';
    }
    return undefined;
  }
}

/**
 * A disk in the frames that no hello/disks message described (hot-plugged between them): asks
 * for the list, at most every few seconds.
 */
function diskListFetcher(onDisks: (disks: DiskInfo[]) => void): () => void {
  let last = 0;
  return () => {
    if (Date.now() - last < 5000) return;
    last = Date.now();
    void apiFetch('api/v1/disks')
      .then((r) => r.json() as Promise<{ disks?: unknown }>)
      .then((body) => {
        if (Array.isArray(body.disks)) onDisks(body.disks as DiskInfo[]);
      })
      .catch(() => undefined);
  };
}

export function startApp(): void {
  captureToken();
  applyUrl();
  const dprQuery = (): void => {
    const dpr = window.devicePixelRatio || 1;
    useUi.setState({ dpr });
    // Re-arm: the media query only fires once per change.
    window.matchMedia(`(resolution: ${dpr}dppx)`).addEventListener('change', dprQuery, { once: true });
  };
  dprQuery();

  // The client's events reach the data layer made just below (none arrives before start()).
  const client = new AgentClient({
    url: streamUrl,
    probe: probeAuth,
    initialBackfill: () => {
      const s = useUi.getState();
      // Enough for the live window plus the pan-back margin, capped at what the page keeps.
      return Math.min(3600, Math.max(600, s.view.following ? 2 * s.view.span : 600));
    },
    events: {
      onState(state, detail) {
        useUi.setState({ connection: state, connectionDetail: detail });
      },
      onHello(hello) {
        // The heat maps follow the schema the agent names (scale 2 or 3) and its live step (over 1 s
        // from a fleet server scraped at over 1 s, protocol 6); a new one rebuilds them.
        const refusal = data.setLiveSchema(hello.schema, hello.step);
        if (refusal !== undefined) {
          notify('error', `The agent's bucket schema ${JSON.stringify(hello.schema)} cannot be drawn (${refusal}); its data is not shown.`);
        }
        useUi.setState({
          agent: {
            version: hello.agent,
            protocol: hello.protocol,
            host: hello.host,
            tiers: hello.tiers,
            historyFrom: hello.historyFrom,
            fleet: hello.fleet,
          },
        });
        // A live view stands at the agent's now, or where the fleet server's data ends (not where
        // the backfill has got to): pipeline/source.ts helloClock.
        data.setAgentClock(helloClock(hello, Date.now()));
        data.setAgentDisks(hello.disks);
      },
      onFrames(frames) {
        data.onFrames(frames);
      },
      onCovered(from, to) {
        data.onCovered(from, to);
      },
      onDisks(disks, ofHello) {
        // The hello's own list (it follows a big fleet's hello): nothing appeared or went away.
        if (ofHello) {
          data.setAgentDisks(disks);
          return;
        }
        const before = new Map(data.agentDisks.map((d) => [d.dev, d]));
        for (const d of disks) {
          const old = before.get(d.dev);
          if (!old && d.present) notify('info', `Disk ${d.name} appeared.`);
          else if (old?.present && !d.present) notify('info', `Disk ${d.name} went away (its history stays).`);
        }
        data.setAgentDisks(disks);
      },
      onStatus(status) {
        useUi.setState({ agentStatus: status });
      },
      onNotice(message) {
        notify('info', message);
      },
    },
  });
  const data = new DataLayer({
    ui: useUi,
    store: useData,
    client,
    notify,
    onUnknownDisk: diskListFetcher((disks) => data.setAgentDisks(disks)),
    fetchRanking: async (params, signal) => (await apiFetch('api/v1/fleet/ranking', { ...params }, signal)).json() as Promise<FleetRanking>,
    fetchStuck: async (params, signal) => (await apiFetch('api/v1/fleet/stuck', { ...params }, signal)).json() as Promise<FleetStuck>,
  });
  bindActions(data, client);
  client.start();

  // What the user asked for → the data layer and the renderers (and the URL).
  useUi.subscribe((s, prev) => {
    const changed = (...keys: (keyof UiState)[]): boolean => keys.some((k) => s[k] !== prev[k]);
    if (changed('view', 'kind', 'classes', 'cgroup', 'diskChoice', 'plotWidth', 'dpr', 'compare')) data.refresh();
    if (changed('colour')) data.recolour();
    if (changed('view', 'percentiles', 'theme', 'norm', 'dpr', 'stuck')) scheduler.invalidateMatching();
    if (changed('agent', 'rankFilter', 'view')) data.refreshRanking();
    if (changed('agent')) data.refreshStuck();
    if (changed('view', 'diskChoice', 'classes', 'cgroup', 'kindChoice', 'colour', 'norm', 'percentiles', 'compare', 'stuck', 'rankFilter'))
      syncUrl(s);
  });
  // What the data layer derived → the renderers.
  useData.subscribe((s, prev) => {
    const changed = (...keys: (keyof DataState)[]): boolean => keys.some((k) => s[k] !== prev[k]);
    if (changed('dataVersion', 'visible', 'lastFrame')) scheduler.invalidateMatching();
    if (changed('visible', 'mode')) data.refreshRanking();
    if (changed('mode')) data.refreshStuck();
    // A comparison following the view is summed in the new window's columns; a new disk joins it.
    if (changed('window', 'shownDevs')) data.refreshCompare();
    if (changed('compare')) scheduler.invalidateMatching('compare:');
    // The source's timing decides which phases exist: the default (or a choice it lacks) follows it.
    if (changed('submitTiming')) {
      const ui = useUi.getState();
      const kind = resolvePhase(ui.kindChoice, s.submitTiming);
      if (kind !== ui.kind) {
        data.clearSelection(); // picked in another phase's buckets
        useUi.setState({ kind });
      }
    }
    // The first frame whose `cg` splits every phase: a cgroup filter on a phase besides device
    // latency now applies (model/cgroups.ts), so the heat maps are built again with it.
    if (changed('cgroupPhases')) {
      const ui = useUi.getState();
      if (ui.cgroup !== undefined && ui.kind !== 'device') data.refresh();
    }
  });

  // A paused view whose data the agent has not got yet: the first hello sets historyFrom.
  data.refresh();
  installTestHook({ connection: client, data });
  window.addEventListener('pagehide', () => client.stop());
  // A snapshot picked later is read by a worker that has already loaded.
  warmSnapshotReaderWhenIdle();
}
