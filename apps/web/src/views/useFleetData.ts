/** Whether the data on screen is a fleet view's (live from `blkheat fleet`, not an imported snapshot). */
import { useData } from '../store/pipelineStore.js';
import { useUi } from '../store/uiStore.js';

export function useFleetData(): boolean {
  const fleet = useUi((s) => s.agent?.fleet !== undefined);
  const live = useData((s) => s.mode === 'live');
  return fleet && live;
}
