/**
 * Theme: "system" follows prefers-color-scheme, or a fixed choice. CSS custom properties hold
 * the colours; renderers get them as a RenderTheme read once per theme change.
 */
import { buildPalette, paletteInterpolator, type ThemeName } from '../model/colour.js';
import type { RenderTheme } from '../render/contract.js';
import type { ThemeChoice } from '../store/uiStore.js';

const darkQuery = typeof window !== 'undefined' ? window.matchMedia('(prefers-color-scheme: dark)') : undefined;

export function resolvedTheme(choice: ThemeChoice): ThemeName {
  if (choice === 'light' || choice === 'dark') return choice;
  return darkQuery?.matches ? 'dark' : 'light';
}

export function onSystemThemeChange(fn: () => void): () => void {
  darkQuery?.addEventListener('change', fn);
  return () => darkQuery?.removeEventListener('change', fn);
}

const palettes = new Map<ThemeName, Uint32Array>();
export function paletteFor(theme: ThemeName): Uint32Array {
  let p = palettes.get(theme);
  if (!p) palettes.set(theme, (p = buildPalette(paletteInterpolator(theme))));
  return p;
}

let cached: { theme: ThemeName; value: RenderTheme } | undefined;

/** Colours for canvas drawing, from the CSS variables of the applied theme. */
export function renderTheme(theme: ThemeName): RenderTheme {
  if (cached?.theme === theme) return cached.value;
  const css = getComputedStyle(document.documentElement);
  const v = (name: string, fallback: string): string => css.getPropertyValue(name).trim() || fallback;
  const value: RenderTheme = {
    background: v('--bg', theme === 'dark' ? '#111' : '#fff'),
    foreground: v('--fg', theme === 'dark' ? '#eee' : '#111'),
    muted: v('--muted', '#888'),
    grid: v('--grid', '#8884'),
    accent: v('--accent', '#2a7fff'),
    bar: v('--bar', '#5b8def'),
    selection: v('--selection', '#2a7fff'),
    gap: v('--gap', '#8a93a3'),
    alert: v('--bad', '#c62828'),
    warn: v('--warn', '#b35900'),
    percentiles: [v('--p50', '#39d0ff'), v('--p99', '#7dff6b'), v('--p999', '#ff5ce1')],
    marks: [v('--p50', '#39d0ff'), v('--p90', '#ffd166'), v('--p99', '#7dff6b'), v('--p999', '#ff5ce1')],
    font: `11px ${v('--font-mono', 'ui-monospace, monospace')}`,
  };
  cached = { theme, value };
  return value;
}

/** Forget cached colours (the theme attribute changed). */
export function resetRenderTheme(): void {
  cached = undefined;
}
