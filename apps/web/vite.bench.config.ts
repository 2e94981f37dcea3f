// Builds the renderer benchmark page (src/dev/bench.html) for bench/web.ts. Separate from
// the dashboard build so nothing of it ships; the output directory comes from the bench.
export default {
  root: import.meta.dirname,
  base: './',
  logLevel: 'warn',
  build: {
    outDir: process.env.BLKHEAT_BENCH_OUT ?? 'dist-bench',
    emptyOutDir: true,
    target: 'es2022',
    rollupOptions: { input: { bench: 'src/dev/bench.html' } },
  },
};
