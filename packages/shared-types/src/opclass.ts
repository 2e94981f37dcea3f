/**
 * Op-class names, as biolatency -F prints them: the operation ("Read", "Write", "Flush", ...)
 * prefixed by the request flags that matter for latency ("Sync-", "Metadata-", ...).
 * The kernel side reports the op by its kernel enumerator name (resolved from BTF by the
 * agent) and the flags as bits; this module turns those into the display names used on the
 * wire, in snapshots and in the dashboard.
 */

/** Display names of kernel `enum req_op` enumerators (REQ_OP_*). */
export const OP_DISPLAY_NAMES: Readonly<Record<string, string>> = Object.freeze({
  REQ_OP_READ: 'Read',
  REQ_OP_WRITE: 'Write',
  REQ_OP_FLUSH: 'Flush',
  REQ_OP_DISCARD: 'Discard',
  REQ_OP_SECURE_ERASE: 'SecureErase',
  REQ_OP_ZONE_APPEND: 'ZoneAppend',
  REQ_OP_WRITE_SAME: 'WriteSame',
  REQ_OP_WRITE_ZEROES: 'WriteZeroes',
  REQ_OP_ZONE_OPEN: 'ZoneOpen',
  REQ_OP_ZONE_CLOSE: 'ZoneClose',
  REQ_OP_ZONE_FINISH: 'ZoneFinish',
  REQ_OP_ZONE_RESET: 'ZoneReset',
  REQ_OP_ZONE_RESET_ALL: 'ZoneResetAll',
  REQ_OP_DRV_IN: 'DrvIn',
  REQ_OP_DRV_OUT: 'DrvOut',
});

/** Fallback display name for an op the table does not know. */
export function opDisplayName(kernelName: string | undefined, value: number): string {
  if (kernelName && OP_DISPLAY_NAMES[kernelName]) return OP_DISPLAY_NAMES[kernelName] as string;
  if (kernelName?.startsWith('REQ_OP_')) {
    return kernelName
      .slice('REQ_OP_'.length)
      .toLowerCase()
      .replace(/(^|_)([a-z])/g, (_m, _u: string, ch: string) => ch.toUpperCase());
  }
  return `Op${value}`;
}

/**
 * Request flags shown as class prefixes, outermost first (so "Metadata-Sync-Write" reads as
 * a synchronous metadata write). Their bits in the kernel's class code are the kernel object's
 * (enum bh_cls_bits, read by the agent from its BTF), never numbers written here.
 */
export const CLASS_FLAGS = Object.freeze([
  'Preflush',
  'Background',
  'ReadAhead',
  'Priority',
  'ForcedUnitAccess',
  'Metadata',
  'Sync',
] as const);

export type ClassFlag = (typeof CLASS_FLAGS)[number];

/** Builds "Metadata-Sync-Write" from an op display name and a set of flags. */
export function className(op: string, flags: Iterable<ClassFlag>): string {
  const set = new Set(flags);
  let prefix = '';
  for (const f of CLASS_FLAGS) if (set.has(f)) prefix += `${f}-`;
  return prefix + op;
}

/** Splits a class name into its op and flags; the inverse of className. */
export function parseClassName(name: string): { op: string; flags: ClassFlag[] } {
  const parts = name.split('-');
  const op = parts.pop() ?? '';
  const known = new Set<string>(CLASS_FLAGS);
  const flags = parts.filter((p): p is ClassFlag => known.has(p));
  return { op, flags };
}

/** The op of a class name ("Metadata-Sync-Write" -> "Write"). */
export function classOp(name: string): string {
  return parseClassName(name).op;
}
