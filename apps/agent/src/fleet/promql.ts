/**
 * User text into PromQL, safely: label matchers built from values a page or a URL gave, never
 * by pasting them into a query. A value is quoted as a PromQL string (what the route accepts
 * is checked before: labelTextProblem); a glob becomes an RE2 regex whose literal parts are
 * escaped, so a `.` or `|` in a host name matches itself only.
 */
import { type FleetRankingFilter, LONE_SURROGATE } from '@blkheat/shared-types';

/**
 * A PromQL double-quoted string of `s`: backslash and quote escaped, control characters as
 * `\uXXXX` (PromQL's escapes are Go's). A lone surrogate cannot be sent as UTF-8: refused.
 */
export function promString(s: string): string {
  if (LONE_SURROGATE.test(s))
    throw new RangeError(`label value ${JSON.stringify(s.slice(0, 64))}: not well-formed text (a lone surrogate)`);
  // eslint-disable-next-line no-control-regex -- escaping control characters is the point
  return `"${s.replace(/[\\"]/g, '\\$&').replace(/[\u0000-\u001f\u007f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)}"`;
}

/** `s` as an RE2 regex that matches exactly `s`. */
export function re2Literal(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A glob (`*` any run of characters, `?` one, the rest literal) as an RE2 regex (Prometheus anchors it). */
export function globToRe2(glob: string): string {
  let out = '';
  for (const ch of glob) out += ch === '*' ? '.*' : ch === '?' ? '.' : re2Literal(ch);
  return out;
}

/** One matcher: `label="value"` (exact) or `label=~"regex"`. */
export function matcher(label: string, op: '=' | '=~', value: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(label)) throw new RangeError(`not a label name: ${JSON.stringify(label.slice(0, 64))}`);
  return `${label}${op}${promString(value)}`;
}

/**
 * The matchers of a page's label filter (the ranked table's and the stuck list's): job exact,
 * instance and disk as globs; `withClass` adds the op class (only series split by class have it).
 */
export function labelFilterMatchers(f: FleetRankingFilter, withClass: boolean): string[] {
  const out: string[] = [];
  if (f.job !== undefined) out.push(matcher('job', '=', f.job));
  if (f.instance !== undefined) out.push(matcher('instance', '=~', globToRe2(f.instance)));
  if (f.disk !== undefined) out.push(matcher('disk', '=~', globToRe2(f.disk)));
  if (withClass && f.class !== undefined) out.push(matcher('class', '=', f.class));
  return out;
}

/** `metric{m1, m2, …}` (just `metric` without matchers). */
export function selector(metric: string, matchers: readonly string[]): string {
  return matchers.length === 0 ? metric : `${metric}{${matchers.join(', ')}}`;
}
