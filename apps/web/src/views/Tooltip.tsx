/**
 * Hover tooltip: the cell under the pointer (or the keyboard cursor); over seconds the agent
 * did not record, says so instead of showing zeros that would read as an idle disk.
 */
import { Fragment } from 'react';
import { cumulativeShare, queueChangedText, tagsFullText, wbtWindowsText } from '@blkheat/shared-types';
import { cgroupInForce } from '../model/cgroups.js';
import { formatClock, formatCount, formatShare } from '../model/format.js';
import { columnRecording } from '../model/gaps.js';
import { bucketBoundsSeconds, formatLatency } from '../model/latency.js';
import { faultsAt, statusText } from '../model/faults.js';
import { PHASE_WORDS } from '../model/phase.js';
import { cgroupPressureSource, PRESSURE_SOURCE, pressureAt, pressureSeries, pressureText } from '../model/pressure.js';
import { formatThroughput, THROUGHPUT_KEYS, THROUGHPUT_LABELS, throughputAt, throughputSeries, waitingAt } from '../model/throughput.js';
import { useData } from '../store/pipelineStore.js';
import { windowKnown } from '../store/shownWindow.js';
import { useHover, useUi } from '../store/uiStore.js';
import { incidentMarks } from './incidents.js';

export function Tooltip() {
  const h = useHover();
  useData((s) => s.dataVersion);
  const disks = useData((s) => s.disks);
  const kind = useUi((s) => s.kind);
  const cgroupPhases = useData((s) => s.cgroupPhases);
  const cgroup = useUi((s) => cgroupInForce(s.cgroup, s.kind, cgroupPhases));
  const filtered = useUi((s) => s.cgroup);
  const historyFrom = useUi((s) => s.agent?.historyFrom);
  const cur = useData((s) => s.window);
  if (h.dev === undefined || h.col === undefined || h.bucket === undefined || h.drag || !cur) return null;
  const m = cur.matrices.get(h.dev);
  if (!m) return null;
  const count = m.count(h.col, h.bucket);
  const total = m.total(h.col);
  const rank = m.has(h.col) && total > 0 ? cumulativeShare(m.column(h.col), h.bucket) : undefined;
  if (h.bucket >= m.rows) return null; // a hover left from a heat map of another schema
  const [lo, hi] = bucketBoundsSeconds(h.bucket, cur.schema);
  const from = h.col * cur.step;
  const name = disks.find((d) => d.dev === h.dev)?.name ?? h.dev;
  // Keep the box on screen: flip to the left/top near the right/bottom edges.
  const left = h.clientX + 260 > window.innerWidth ? h.clientX - 256 : h.clientX + 14;
  const top = h.clientY + 150 > window.innerHeight ? h.clientY - 146 : h.clientY + 14;
  const rec = columnRecording(m, h.col, windowKnown(cur, historyFrom));
  const recorded = rec.state !== 'unrecorded';
  const col = h.col;
  const tput = throughputSeries(cur.frames, h.dev, cur.step, col, col + 1);
  const faults = faultsAt(cur.frames, h.dev, cur.step, col);
  // Bios waiting for a request beside the requests in flight (protocol 4): not in "in flight".
  const waiting = waitingAt(tput, col);
  // Stuck I/O in flight during this column: a hang completes nothing, so the counts alone read as idle.
  const hanging = (incidentMarks(h.dev)?.stuck ?? []).filter((x) => x.start < from + cur.step && x.end > from);
  // The host's I/O pressure in this column (protocol 4): for every disk alike.
  const pressure = pressureAt(pressureSeries(cur.frames, cur.step, col, col + 1), col);
  // The filtered cgroup's (its io.pressure), whichever phase is drawn.
  const cgPressure = filtered !== undefined ? pressureAt(pressureSeries(cur.frames, cur.step, col, col + 1, filtered), col) : undefined;
  return (
    <div className="tooltip" role="tooltip" data-testid="tooltip" data-recorded={String(recorded)} style={{ left, top }}>
      <div className="tooltip-title">
        {name} · {PHASE_WORDS[kind]}
        {cgroup !== undefined ? ` · cgroup ${cgroup}` : ''}
      </div>
      <dl>
        <dt>time</dt>
        <dd data-testid="tooltip-time" data-ts={from}>
          {formatClock(from)}
          {cur.step > 1 ? ` – ${formatClock(from + cur.step)}` : ''}
        </dd>
        {recorded && (
          <>
            <dt>latency</dt>
            <dd>
              {formatLatency(lo)} – {formatLatency(hi)}
            </dd>
            <dt>I/Os</dt>
            <dd data-testid="tooltip-count">{formatCount(count)}</dd>
            <dt>share</dt>
            <dd>
              {total > 0 ? formatShare(count / total) : '–'} of {formatCount(total)} in{' '}
              {cur.step === 1 ? 'that second' : `those ${cur.step} s`}
            </dd>
            <dt>rank</dt>
            <dd>{rank !== undefined ? `${formatShare(rank)} at or below` : '–'}</dd>
            {THROUGHPUT_KEYS.map((k) => (
              <Fragment key={k}>
                <dt>{THROUGHPUT_LABELS[k]}</dt>
                <dd data-testid={`tooltip-${k}`}>{formatThroughput(k, throughputAt(tput, k, col))}</dd>
              </Fragment>
            ))}
            {waiting && (
              <>
                <dt>waiting</dt>
                <dd data-testid="tooltip-waiting" data-count={waiting.count} data-frozen={String(waiting.frozen)}>
                  {waiting.count > 0
                    ? `${formatCount(waiting.count)} bio${waiting.count === 1 ? '' : 's'} for a request, oldest ${formatLatency(waiting.oldestS)}`
                    : 'none'}
                  {waiting.frozen ? ' · queue frozen' : ''}
                </dd>
              </>
            )}
            {pressure && (
              <>
                <dt>I/O pressure</dt>
                <dd data-testid="tooltip-pressure" data-some={pressure.some} data-full={pressure.full}>
                  {pressureText(pressure)} ({PRESSURE_SOURCE})
                </dd>
              </>
            )}
            {cgPressure && filtered !== undefined && (
              <>
                <dt>cgroup pressure</dt>
                <dd data-testid="tooltip-cgroup-pressure" data-some={cgPressure.some} data-full={cgPressure.full}>
                  {pressureText(cgPressure)} ({cgroupPressureSource(filtered)})
                </dd>
              </>
            )}
            <dt>failed</dt>
            <dd data-testid="tooltip-failed" data-count={faults.failed} className={faults.failed > 0 ? 'class-errors' : undefined}>
              {formatCount(faults.failed)}
              {faults.failed > 0 ? ` (${statusText(faults.byStatus)})` : ''}
            </dd>
            <dt>requeues</dt>
            <dd data-testid="tooltip-requeues" data-count={faults.requeues}>
              {formatCount(faults.requeues)}
            </dd>
            {faults.frozen > 0 && (
              <>
                <dt>frozen</dt>
                <dd data-testid="tooltip-frozen" data-count={faults.frozen}>
                  {formatCount(faults.frozen)} I/O{faults.frozen === 1 ? '' : 's'} found the queue frozen
                </dd>
              </>
            )}
            {faults.refused > 0 && (
              <>
                <dt>tags</dt>
                <dd data-testid="tooltip-refused" data-count={faults.refused}>
                  {formatCount(faults.refused)} I/O{faults.refused === 1 ? ' was' : 's were'} turned away with every tag in use
                </dd>
              </>
            )}
            {faults.tagsFull > 0 && (
              <>
                <dt>tags</dt>
                <dd data-testid="tooltip-tags-full" data-count={faults.tagsFull}>
                  {tagsFullText(faults.tagsFull, formatCount)}
                </dd>
              </>
            )}
            {faults.wbt > 0 && (
              <>
                <dt>wbt</dt>
                <dd data-testid="tooltip-wbt" data-count={faults.wbt}>
                  {wbtWindowsText(faults.wbt, formatCount)}
                </dd>
              </>
            )}
            {faults.queueChanged.length > 0 && (
              <>
                <dt>queue</dt>
                <dd data-testid="tooltip-queue-changed">{queueChangedText(faults.queueChanged)} (the switch freezes the queue)</dd>
              </>
            )}
            {hanging.length > 0 && (
              <>
                <dt>stuck</dt>
                <dd data-testid="tooltip-stuck" data-count={hanging.length} className="class-errors">
                  {hanging
                    .map((x) =>
                      x.waiting
                        ? `bios waiting for a request since ${formatClock(Math.floor(x.start))}`
                        : `${x.comm || 'I/O'}${x.pid ? ` (${x.pid})` : ''} in flight since ${formatClock(Math.floor(x.start))}`,
                    )
                    .join('; ')}
                </dd>
              </>
            )}
          </>
        )}
        {rec.state === 'partial' && (
          <>
            <dt>no data</dt>
            <dd data-testid="tooltip-gap">
              {rec.missing} of {cur.step} s not recorded
            </dd>
          </>
        )}
      </dl>
      {!recorded && (
        <div className="tooltip-gap" data-testid="tooltip-gap">
          no data: agent not recording
        </div>
      )}
    </div>
  );
}
