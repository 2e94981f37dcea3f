/**
 * Which disks to draw: every disk with I/O by default, or the user's pick. In a fleet view the
 * disks are host × disk, and a host picker before them shows or hides all of a host's disks.
 * A picker over CHIPS_FIRST chips (a fleet of a thousand hosts) draws that many, the pressed
 * ones past them, a field to find the others by name, and how many it left out
 * (model/chipCap.ts).
 */
import { useMemo, useState } from 'react';
import type { DiskInfo } from '@blkheat/shared-types';
import { CHIPS_FIRST, type ChipChoice, pickChips } from '../model/chipCap.js';
import { formatCount } from '../model/format.js';
import { autoDisks, toggleDisk, toggleHost } from '../store/actions.js';
import { useData } from '../store/pipelineStore.js';
import { useUi } from '../store/uiStore.js';

interface Host {
  readonly name: string;
  readonly disks: readonly DiskInfo[];
}

/** What a capped picker says of its chips: how many it left out, or how many the find matched. */
function pickerCount(what: string, total: number, choice: ChipChoice<unknown>, filtered: boolean): string {
  if (choice.hidden > 0) return `${formatCount(choice.hidden)} more ${what}${filtered ? ' match' : ''}, not listed: type to find`;
  if (!filtered) return `${formatCount(total)} ${what}`;
  return choice.matching === 0 ? `no ${what} match` : `${formatCount(choice.matching)} of ${formatCount(total)} ${what} match`;
}

/** The find field and the count left out, for a picker with more chips than it draws; nothing otherwise. */
function FindChips({
  what,
  total,
  choice,
  filter,
  onFilter,
}: {
  what: 'hosts' | 'disks';
  total: number;
  choice: ChipChoice<unknown>;
  filter: string;
  onFilter: (f: string) => void;
}) {
  if (total <= CHIPS_FIRST) return null;
  return (
    <>
      <input
        type="search"
        className="chip-find"
        placeholder={`find ${what}`}
        aria-label={`find ${what} by name`}
        value={filter}
        onChange={(e) => onFilter(e.target.value)}
        data-testid={`${what === 'hosts' ? 'host' : 'disk'}-find`}
      />
      <span className="muted" data-testid={`${what === 'hosts' ? 'host' : 'disk'}-more`} data-hidden={choice.hidden}>
        {pickerCount(what, total, choice, filter.trim() !== '')}
      </span>
    </>
  );
}

function HostPicker({ disks, on }: { disks: readonly DiskInfo[]; on: ReadonlySet<string> }) {
  const hosts = useMemo(() => {
    const byHost = new Map<string, DiskInfo[]>();
    for (const d of disks) {
      if (d.host === undefined) continue;
      const mine = byHost.get(d.host);
      if (mine) mine.push(d);
      else byHost.set(d.host, [d]);
    }
    return [...byHost].map(([name, mine]): Host => ({ name, disks: mine }));
  }, [disks]);
  const [filter, setFilter] = useState('');
  if (hosts.length === 0) return null;
  const allShown = (h: Host): boolean => h.disks.every((d) => on.has(d.dev));
  const choice = pickChips(hosts, (h) => h.name, allShown, filter);
  return (
    <nav className="disk-picker" aria-label="hosts" data-testid="host-picker">
      <span className="muted">hosts</span>
      {choice.shown.map((h) => (
        <button
          key={h.name}
          type="button"
          className="chip"
          aria-pressed={allShown(h)}
          onClick={() => toggleHost(h.name)}
          title={`${h.name}: ${h.disks.length} disk${h.disks.length === 1 ? '' : 's'} (${h.disks.map((d) => d.name).join(', ')})`}
          data-testid={`host-chip-${h.name}`}
        >
          {h.name}
        </button>
      ))}
      <FindChips what="hosts" total={hosts.length} choice={choice} filter={filter} onFilter={setFilter} />
    </nav>
  );
}

export function DiskPicker() {
  const disks = useData((s) => s.disks);
  const shown = useData((s) => s.shownDevs);
  const choiceOfUser = useUi((s) => s.diskChoice);
  const summary = useData((s) => s.summary);
  const [filter, setFilter] = useState('');
  const on = useMemo(() => new Set(shown), [shown]);
  if (disks.length === 0) return null;
  const choice = pickChips(
    disks,
    (d) => d.name,
    (d) => on.has(d.dev),
    filter,
  );
  return (
    <>
      <HostPicker disks={disks} on={on} />
      <nav className="disk-picker" aria-label="disks" data-testid="disk-picker">
        <span className="muted">disks</span>
        {choice.shown.map((d) => {
          const n = summary?.disks.get(d.dev)?.n ?? 0;
          return (
            <button
              key={d.dev}
              type="button"
              className={`chip${d.present ? '' : ' gone'}`}
              aria-pressed={on.has(d.dev)}
              onClick={() => toggleDisk(d.dev)}
              title={`${d.name} (${d.dev}, ${d.kind}-based${d.present ? '' : ', gone'})${d.model ? ` ${d.model}` : ''}`}
              data-testid={`disk-chip-${d.name}`}
            >
              {d.name}
              {n > 0 && <span className="chip-count">{formatCount(n, { compact: true })}</span>}
            </button>
          );
        })}
        <FindChips what="disks" total={disks.length} choice={choice} filter={filter} onFilter={setFilter} />
        <button type="button" className="link" onClick={autoDisks} disabled={choiceOfUser === undefined} title="Show every disk with I/O">
          auto
        </button>
      </nav>
    </>
  );
}
