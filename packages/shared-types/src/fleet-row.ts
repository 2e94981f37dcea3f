/**
 * A big fleet's fleet row (docs/fleet.md, "A big fleet"; added after 0.4.0): every host's disks
 * summed by Prometheus, listed first by `/api/v1/disks` of a fleet over OVERVIEW_ABOVE_DISKS
 * disks. The fleet server makes it and the page draws it by default: one owner for its id and
 * how it is listed.
 */
import type { DiskInfo } from './frame-model.js';

/** The fleet row's id (host 0 is no host: a fleet's hosts number from 1). */
export const FLEET_ROW_ID = '0:0';

/** The fleet row as `/api/v1/disks` lists it. */
export const FLEET_ROW: DiskInfo = Object.freeze({
  dev: FLEET_ROW_ID,
  name: 'fleet/all disks',
  kind: 'request',
  present: true,
  host: 'fleet',
});
