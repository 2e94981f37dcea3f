/** Which disks to draw: every disk with I/O by default, or the user's pick. */
import { formatCompact } from '../model/format.js';
import { autoDisks, toggleDisk } from '../store/actions.js';
import { useData } from '../store/dataStore.js';
import { useUi } from '../store/store.js';

export function DiskPicker() {
  const disks = useData((s) => s.disks);
  const shown = useData((s) => s.shownDevs);
  const choice = useUi((s) => s.diskChoice);
  const summary = useData((s) => s.summary);
  if (disks.length === 0) return null;
  return (
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
            {n > 0 && <span className="chip-count">{formatCompact(n)}</span>}
          </button>
        );
      })}
      <button type="button" className="link" onClick={autoDisks} disabled={choice === undefined} title="Show every disk with I/O">
        auto
      </button>
    </nav>
  );
}
