/** Which disk the cgroup and size panels show: the user's pick among the shown disks, else the first. */
import { setPanelDisk } from '../store/actions.js';
import { useData } from '../store/pipelineStore.js';
import { useUi } from '../store/uiStore.js';

/** The panel disk ("MAJ:MIN"): the one picked if it is still shown, else the first shown one. */
export function usePanelDisk(): string | undefined {
  const picked = useUi((s) => s.panelDisk);
  const shown = useData((s) => s.shownDevs);
  return picked !== undefined && shown.includes(picked) ? picked : shown[0];
}

export function PanelDiskSelect({ testId }: { testId: string }) {
  const dev = usePanelDisk();
  const shown = useData((s) => s.shownDevs);
  const disks = useData((s) => s.disks);
  const name = (d: string): string => disks.find((x) => x.dev === d)?.name ?? d;
  if (shown.length <= 1) return dev ? <span className="muted">{name(dev)}</span> : null;
  return (
    <select aria-label="disk" value={dev} onChange={(e) => setPanelDisk(e.target.value)} data-testid={testId}>
      {shown.map((d) => (
        <option key={d} value={d}>
          {name(d)}
        </option>
      ))}
    </select>
  );
}
