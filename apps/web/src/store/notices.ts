/** Notices (errors and infos shown at the bottom of the page), in a store of their own. */
import { create } from 'zustand';

export interface Notice {
  readonly id: number;
  readonly kind: 'error' | 'info';
  readonly text: string;
  /** Notices about one thing (e.g. 'snapshot') go away together when it ends. */
  readonly tag?: string | undefined;
}

export type Notify = (kind: Notice['kind'], text: string, tag?: string) => void;

export const useNotices = create<{ notices: readonly Notice[] }>()(() => ({ notices: [] }));

let noticeId = 0;
/** Shows a notice; a `tag` replaces earlier notices with the same tag. */
export function notify(kind: Notice['kind'], text: string, tag?: string): void {
  const id = ++noticeId;
  useNotices.setState((s) => ({
    notices: [...s.notices.filter((n) => tag === undefined || n.tag !== tag).slice(-3), { id, kind, text, tag }],
  }));
  if (kind === 'info') setTimeout(() => dismissNotice(id), 6000);
}

export function dismissNotice(id: number): void {
  useNotices.setState((s) => ({ notices: s.notices.filter((n) => n.id !== id) }));
}

/** Removes every notice with `tag` (what they were about has ended). */
export function dismissTagged(tag: string): void {
  useNotices.setState((s) => (s.notices.some((n) => n.tag === tag) ? { notices: s.notices.filter((n) => n.tag !== tag) } : s));
}
