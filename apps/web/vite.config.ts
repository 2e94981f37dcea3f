// The dashboard bundle the agent serves. Relative base so the page also works behind a
// reverse proxy under a path prefix; no inline scripts anywhere (the agent's CSP forbids them).
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

export default defineConfig({
  base: './',
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: true,
    // Vite's modulepreload polyfill is emitted into the entry chunk, not inline; keep it off
    // anyway: every browser we target supports modulepreload.
    modulePreload: { polyfill: false },
    chunkSizeWarningLimit: 1024,
  },
  server: {
    // `pnpm --filter @blkheat/web dev` against an agent (or the fake one) on :7070.
    proxy: { '/api': { target: process.env.BLKHEAT_AGENT ?? 'http://127.0.0.1:7070', ws: true } },
  },
});
