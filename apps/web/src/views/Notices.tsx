/** Errors and notices; errors stay until dismissed and are announced to screen readers. */
import { dismissNotice, useNotices } from '../store/notices.js';

export function Notices() {
  const notices = useNotices((s) => s.notices);
  if (notices.length === 0) return null;
  return (
    <div className="notices" data-testid="notices">
      {notices.map((n) => (
        <div
          key={n.id}
          className={`notice notice-${n.kind}`}
          role={n.kind === 'error' ? 'alert' : 'status'}
          data-testid={`notice-${n.kind}`}
        >
          <span>{n.text}</span>
          <button type="button" className="link" aria-label="dismiss" onClick={() => dismissNotice(n.id)}>
            ×
          </button>
        </div>
      ))}
    </div>
  );
}
