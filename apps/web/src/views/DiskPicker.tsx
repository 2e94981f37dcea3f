/**
 * Which disks to draw: every disk with I/O by default, or the user's pick. In a fleet view the
 * disks are host × disk, and a host picker before them shows or hides all of a host's disks.
 */
import type { DiskInfo } from '@blkheat/shared-types';
import { formatCount } from '../model/format.js';
import { autoDisks, toggleDisk, toggleHost } from '../store/actions.js';
import { useData } from '../store/pipelineStore.js';
import { useUi } from '../store/uiStore.js';

function HostPicker({ disks, shown }: { disks: readonly DiskInfo[]; shown: readonly string[] }) {
  const hosts = [...new Set(disks.flatMap((d) => (d.host === undefined ? [] : [d.host])))];
  if (hosts.length === 0) return null;
  return (
    <nav className="disk-picker" aria-label="hosts" data-testid="host-picker">
      <span className="muted">hosts</span>
      {hosts.map((h) => {
        const mine = disks.filter((d) => d.host === h);
        const on = mine.every((d) => shown.includes(d.dev));
        return (
          <button
            key={h}
            type="button"
            className="chip"
            aria-pressed={on}
            onClick={() => toggleHost(h)}
            title={`${h}: ${mine.length} disk${mine.length === 1 ? '' : 's'} (${mine.map((d) => d.name).join(', ')})`}
            data-testid={`host-chip-${h}`}
          >
            {h}
          </button>
        );
      })}
    </nav>
  );
}

export function DiskPicker() {
  const disks = useData((s) => s.disks);
  const shown = useData((s) => s.shownDevs);
  const choice = useUi((s) => s.diskChoice);
  const summary = useData((s) => s.summary);
  if (disks.length === 0) return null;
  return (
    <>
      <HostPicker disks={disks} shown={shown} />
      <nav className="disk-picker" aria-label="disks" data-testid="disk-picker">
        <span className="muted">disks</span>
        {disks.map((d) => {
          const n = summary?.disks.get(d.dev)?.n ?? 0;
          const on = shown.includes(d.dev);
          return (
            <button
              key={d.dev}
              type="button"
              className={`chip${d.present ? '' : ' gone'}`}
              aria-pressed={on}
              onClick={() => toggleDisk(d.dev)}
              title={`${d.name} (${d.dev}, ${d.kind}-based${d.present ? '' : ', gone'})${d.model ? ` ${d.model}` : ''}`}
              data-testid={`disk-chip-${d.name}`}
            >
              {d.name}
              {n > 0 && <span className="chip-count">{formatCount(n, { compact: true })}</span>}
            </button>
          );
        })}
        <button type="button" className="link" onClick={autoDisks} disabled={choice === undefined} title="Show every disk with I/O">
          auto
        </button>
      </nav>
    </>
  );
}
