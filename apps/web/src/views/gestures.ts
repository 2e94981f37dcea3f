/**
 * Every gesture and key of the page, as the `?` help lists them (KeyboardHelp.tsx): one list, the
 * one interactions.ts and App.tsx implement. A gesture added there is added here.
 */
export interface Gesture {
  /** The keys or pointer action ("Shift-drag", "← → ↑ ↓"). */
  readonly keys: string;
  /** What it does. */
  readonly does: string;
}

export const GESTURES: readonly Gesture[] = [
  { keys: 'drag', does: 'zoom to the dragged time range' },
  { keys: 'Alt-drag (or the Select tool)', does: 'box in time × latency: list the sampled I/Os inside it' },
  { keys: 'Shift-drag', does: 'pan' },
  { keys: 'Ctrl/⌘-drag', does: 'compare: the dragged range becomes the baseline (A/B)' },
  { keys: 'click', does: 'list the sampled I/Os of that cell' },
  { keys: 'wheel', does: 'pan; Ctrl/⌘-wheel zooms around the pointer' },
  { keys: 'double-click, Esc', does: 'back to live (or the whole snapshot); Esc first clears a selection' },
  { keys: '← → ↑ ↓ (heat map focused)', does: 'move the cell cursor' },
  { keys: 'Shift ← →', does: 'pan' },
  { keys: '+ −', does: 'zoom in, out' },
  { keys: 'Enter, Space', does: 'list the sampled I/Os of the cursor cell' },
  { keys: '?', does: 'this list' },
];
