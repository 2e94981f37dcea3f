/**
 * bench/web's command line: which of its sections run (`--sections`). Every one by default; a
 * subset measures, say, the dashboard without the live section's BPF programs and loop devices
 * (another process may own the kernel), and says which budgets it left unmeasured and why.
 */
import { benchArgs, usageError } from '../cli.js';

/** The sections, in the order they run. */
export const SECTIONS = Object.freeze({
  renderer: 'the heat map renderer on a bare page (full redraw, live column append)',
  dashboard: 'the built dashboard importing a one-hour snapshot (time, long tasks), then drag-zooming it',
  live: 'the real agent and fio on loop devices, the page live (needs root and fio)',
});

export type Section = keyof typeof SECTIONS;

const NAMES = Object.keys(SECTIONS) as Section[];

const USAGE = `usage: node --import tsx bench/web.ts [--sections LIST]

  --sections LIST  comma-separated subset of the sections to run (default: all of them):
${NAMES.map((n) => `                     ${n.padEnd(10)} ${SECTIONS[n]}`).join('\n')}
                   The budgets of the sections left out are printed as not measured.
  -h, --help       show this help`;

/** The sections asked for on the command line (all by default); prints the usage and exits on --help or a bad flag. */
export function sectionsFromArgs(args: readonly string[] = process.argv.slice(2)): ReadonlySet<Section> {
  const values = benchArgs('bench/web', USAGE, { sections: { type: 'string' } }, { args });
  if (values.sections === undefined) return new Set(NAMES);
  const asked = values.sections
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const unknown = asked.filter((s) => !NAMES.includes(s as Section));
  if (asked.length === 0 || unknown.length > 0)
    usageError('bench/web', USAGE, `--sections takes ${NAMES.join(', ')}${unknown.length > 0 ? `, not '${unknown.join("', '")}'` : ''}`);
  return new Set(NAMES.filter((n) => asked.includes(n)));
}

/** Why a section left out did not run, for the verdict. */
export const NOT_ASKED = 'not in --sections';

/** Says which sections run and which do not (and why), before anything starts. */
export function describeSections(run: ReadonlySet<Section>): string {
  const skipped = NAMES.filter((n) => !run.has(n));
  if (skipped.length === 0) return `bench/web: sections ${NAMES.join(', ')}`;
  return `bench/web: sections ${NAMES.filter((n) => run.has(n)).join(', ')}; skipped (${NOT_ASKED}): ${skipped.join(', ')}, so ${
    skipped.length === 1 ? 'its budgets are' : 'their budgets are'
  } not measured`;
}
