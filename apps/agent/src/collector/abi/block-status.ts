/**
 * The kernel's block status values (blk_status_t) the agent names or hands the programs: the
 * values themselves are kernel ABI, kept here beside the other kernel values (request-bits.ts).
 */

/**
 * blk_status_t names. The kernel defines them as macros (not in BTF), and values above 10 were
 * renumbered across versions (6.9 dropped DM_REQUEUE), so only the stable ones are named; others
 * are reported as "STATUS<n>".
 */
const STATUS_NAMES = [
  'OK',
  'NOTSUPP',
  'TIMEOUT',
  'NOSPC',
  'TRANSPORT',
  'TARGET',
  'RESV_CONFLICT',
  'MEDIUM',
  'PROTECTION',
  'RESOURCE',
  'IOERR',
];

/** BLK_STS_AGAIN: a REQ_NOWAIT bio that would have waited. 12 before and after 6.9's renumbering (it kept its value). */
export const BLK_STS_AGAIN = 12;

export function statusName(status: number): string {
  return STATUS_NAMES[status] ?? `STATUS${status}`;
}
