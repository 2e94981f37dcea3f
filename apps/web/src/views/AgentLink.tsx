/**
 * The link from a fleet view to one host's own blkheat agent (a disk row's header, a ranked row, a
 * stuck row): the fleet has only what Prometheus scraped; the agent has the per-I/O drill-down.
 * Opens in a new tab without the fleet page's opener; a click on it does not also pick its row.
 */
export function AgentLink({ href, host, testId, why }: { href: string; host: string; testId: string; why?: string }) {
  return (
    <a
      className="agent-link"
      href={href}
      target="_blank"
      rel="noopener noreferrer"
      data-testid={testId}
      onClick={(e) => e.stopPropagation()}
      title={`${host}'s own blkheat agent${why ? `: ${why}` : ''} (add #token=… if it needs one)`}
    >
      agent ↗
    </a>
  );
}
