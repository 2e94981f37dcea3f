/**
 * The test hook's reads of the fleet page's "Stuck now" list (views/FleetStuck.tsx), as drawn:
 * what a user sees in it, read from the rows' data attributes and texts.
 */
import type { BlkheatHook } from './testhookApi.js';

export function fleetReads(): Pick<BlkheatHook, 'fleetStuck'> {
  return {
    fleetStuck() {
      const list = document.querySelector<HTMLElement>('[data-testid="fleet-stuck"]');
      if (!list) return undefined;
      const at = list.dataset.at;
      const rows = [...list.querySelectorAll<HTMLElement>('tr[data-testid^="stuck-row-"]')].map((tr) => ({
        instance: tr.dataset.instance ?? '',
        disk: tr.dataset.disk ?? '',
        kind: tr.dataset.kind ?? '',
        ageS: Number(tr.dataset.age),
        ageText: tr.querySelector('[data-testid^="stuck-age-"]')?.textContent ?? '',
        kindText: tr.querySelector('[data-testid^="stuck-kind-"]')?.textContent ?? '',
      }));
      return {
        status: list.dataset.status ?? '',
        at: at === undefined ? undefined : Number(at),
        rows,
        empty: list.querySelector('[data-testid="stuck-empty"]')?.textContent ?? undefined,
      };
    },
  };
}
