// Protocol 4 `Frame.cg_psi`: cgroups' I/O pressure. Parsed as written; refused naming the field
// when a stall is above the step, a path is listed twice or there are more than CGROUP_PSI_LISTED;
// summed per path by merges (coarse steps), keeping the most stalled; kept by filterFrame.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CGROUP_PSI_LISTED, type Frame, filterFrame, frameSchema, mergeFrames } from '../src/index.js';

const T0 = 1795290000;
const frame = (ts: number, cg_psi: Frame['cg_psi']): Frame => ({ ts, step: 1, disks: [], ...(cg_psi ? { cg_psi } : {}) });

test('cg_psi parses as written, and is refused naming the field when impossible', () => {
  const ok = frame(T0, [
    { g: '/backup', some_us: 910_000, full_us: 850_000 },
    { g: '/', some_us: 0, full_us: 0 },
  ]);
  const r = frameSchema.safeParse(ok);
  assert.ok(r.success);
  assert.deepEqual(r.data, ok);
  const cases: [unknown, string, RegExp][] = [
    [frame(T0, [{ g: '/a', some_us: 1_000_001, full_us: 0 }]), 'cg_psi.0.some_us', /must not be above the step/],
    [
      {
        ...frame(T0, [{ g: '/a', some_us: 0, full_us: 0 }]),
        step: 10,
        ts: T0 - (T0 % 10),
        cg_psi: [{ g: '/a', some_us: 0, full_us: 10_000_001 }],
      },
      'cg_psi.0.full_us',
      /above the step \(10000000/,
    ],
    [
      frame(T0, [
        { g: '/a', some_us: 1, full_us: 0 },
        { g: '/a', some_us: 2, full_us: 0 },
      ]),
      'cg_psi.1.g',
      /listed twice/,
    ],
    [frame(T0, [{ g: '', some_us: 1, full_us: 0 }]), 'cg_psi.0.g', /at least 1|too small|>=1/i],
    [frame(T0, [{ g: '/a', some_us: -1, full_us: 0 }]), 'cg_psi.0.some_us', />=0/],
    [
      frame(
        T0,
        Array.from({ length: CGROUP_PSI_LISTED + 1 }, (_, i) => ({ g: `/g${i}`, some_us: 0, full_us: 0 })),
      ),
      'cg_psi',
      /64/,
    ],
  ];
  for (const [value, field, message] of cases) {
    const p = frameSchema.safeParse(value);
    assert.equal(p.success, false, `accepted: ${field}`);
    if (!p.success) {
      const issue = p.error.issues[0];
      assert.equal(issue?.path.join('.'), field, JSON.stringify(p.error.issues));
      assert.match(issue?.message ?? '', message);
    }
  }
});

test('a coarse step sums each cgroup’s stall over its seconds, the most stalled first; filterFrame keeps it', () => {
  const seconds = [
    frame(T0, [{ g: '/a', some_us: 100, full_us: 10 }]),
    frame(T0 + 1, [
      { g: '/b', some_us: 900_000, full_us: 0 },
      { g: '/a', some_us: 200, full_us: 20 },
    ]),
    frame(T0 + 2, undefined),
  ];
  const merged = mergeFrames(seconds, T0, 3);
  assert.deepEqual(merged.cg_psi, [
    { g: '/b', some_us: 900_000, full_us: 0 },
    { g: '/a', some_us: 300, full_us: 30 },
  ]);
  assert.equal(mergeFrames([frame(T0, undefined)], T0, 1).cg_psi, undefined, 'none: absent, not empty');
  const many = frame(
    T0,
    Array.from({ length: CGROUP_PSI_LISTED }, (_, i) => ({ g: `/g${i}`, some_us: i, full_us: 0 })),
  );
  const more = frame(T0 + 1, [{ g: '/late', some_us: 1_000, full_us: 0 }]);
  const kept = mergeFrames([many, more], T0, 2).cg_psi ?? [];
  assert.equal(kept.length, CGROUP_PSI_LISTED);
  assert.equal(kept[0]?.g, '/late', 'the most stalled first');
  assert.ok(!kept.some((p) => p.g === '/g0'), 'the least stalled past the limit left out');
  assert.deepEqual(filterFrame(seconds[1] as Frame, { disks: ['8:0'] }).cg_psi, seconds[1]?.cg_psi);
});
