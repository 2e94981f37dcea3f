/** The `?` help: every gesture and key (gestures.ts), in a dialog that Esc, `?` or its button closes. */
import { useEffect, useRef } from 'react';
import { showHelp } from '../store/actions.js';
import { useUi } from '../store/uiStore.js';
import { GESTURES } from './gestures.js';

export function KeyboardHelp() {
  const open = useUi((s) => s.helpOpen);
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) d.showModal();
    if (!open && d.open) d.close();
  }, [open]);
  return (
    <dialog ref={ref} className="keyboard-help" data-testid="keyboard-help" aria-label="Keys and gestures" onClose={() => showHelp(false)}>
      <h2>Keys and gestures</h2>
      <table className="grid">
        <tbody>
          {GESTURES.map((g) => (
            <tr key={g.keys}>
              <th scope="row">{g.keys}</th>
              <td>{g.does}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <button type="button" onClick={() => showHelp(false)} data-testid="keyboard-help-close">
        Close
      </button>
    </dialog>
  );
}
