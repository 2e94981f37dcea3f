/** A latency distribution as a sparkline in a table row (op classes, cgroups). */
import { useEffect, useRef } from 'react';
import { paintSpark } from '../render/spark.js';
import { useUi } from '../store/uiStore.js';
import { renderTheme, resolvedTheme } from './theme.js';

const SPARK_W = 120;
const SPARK_H = 18;

export function Spark({ hist, uLo, uHi }: { hist: Float64Array; uLo: number; uHi: number }) {
  const ref = useRef<HTMLCanvasElement>(null);
  const theme = useUi((s) => resolvedTheme(s.theme));
  useEffect(() => {
    const size = { width: SPARK_W, height: SPARK_H, dpr: window.devicePixelRatio || 1 };
    if (ref.current) paintSpark(ref.current, hist, uLo, uHi, size, renderTheme(theme).bar);
  }, [hist, uLo, uHi, theme]);
  return <canvas ref={ref} className="spark" aria-hidden="true" />;
}
