/**
 * The agent's `instance`, said in the HELP text of its `blkheat_build_info` (added after 0.4.0),
 * so that `blkheat fleet` can tell which Prometheus target serves which host.
 *
 * Why: with `honor_labels` (what docs/fleet.md recommends) a host's series carry its own
 * `instance` and lose the target's, so nothing in a sample says which target (which URL) it came
 * from. Matching a host's scrape times to a target's `up` left hosts unlinked wherever Prometheus
 * stamped two targets' scrapes with the same milliseconds: 42 of 1,000 hosts at 15 s in
 * bench/fleet-scale, and now and then the slow host of fleet-ranking.test.ts's 40 at 1 s.
 * Prometheus keeps each target's metric metadata, HELP included, and serves it with the target's
 * own labels (`/api/v1/targets/metadata`): a text there that names the agent's instance links
 * the two exactly, whatever the times, at one request for the whole fleet.
 */

/** The family whose HELP names the instance (one sample, 1, labelled with the version). */
export const BUILD_INFO_METRIC = 'blkheat_build_info';

const BUILD_INFO_TEXT = 'Agent version and protocol version.';
/** Before the instance, quoted as a JSON string (any text a label value may hold). */
const INSTANCE_MARK = ' Its instance label: ';

/** The HELP of blkheat_build_info: the instance named when the agent sets one (--instance). */
export function buildInfoHelp(instance: string | undefined): string {
  return instance === undefined || instance === '' ? BUILD_INFO_TEXT : `${BUILD_INFO_TEXT}${INSTANCE_MARK}${JSON.stringify(instance)}.`;
}

/** The instance a blkheat_build_info HELP names; undefined for any other text (an agent before it, or none set). */
export function instanceOfBuildInfoHelp(help: string): string | undefined {
  if (!help.startsWith(BUILD_INFO_TEXT + INSTANCE_MARK) || !help.endsWith('.')) return undefined;
  try {
    const named: unknown = JSON.parse(help.slice(BUILD_INFO_TEXT.length + INSTANCE_MARK.length, -1));
    return typeof named === 'string' && named !== '' ? named : undefined;
  } catch {
    return undefined;
  }
}
