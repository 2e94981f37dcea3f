import { type RefObject, useEffect, useRef } from 'react';

export interface Size {
  width: number;
  height: number;
}

/**
 * Calls `onResize` with the CSS size of `ref`'s element now and whenever it changes. Callers
 * keep the size in a ref (not state): a resize must not re-render React, only redraw canvases.
 */
export function useElementSize(ref: RefObject<HTMLElement | null>, onResize: (w: number, h: number) => void): void {
  const cb = useRef(onResize);
  useEffect(() => {
    cb.current = onResize;
  });
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    let last: Size = { width: -1, height: -1 };
    const measure = (): void => {
      const r = el.getBoundingClientRect();
      if (r.width !== last.width || r.height !== last.height) {
        last = { width: r.width, height: r.height };
        cb.current(r.width, r.height);
      }
    };
    measure();
    const ro = new ResizeObserver(measure);
    ro.observe(el);
    return () => ro.disconnect();
  }, [ref]);
}
