/**
 * Development aid: starts the fake agent, opens the dashboard in headless chromium and writes
 * screenshots (artifacts/web-dev/*.png). Not a test; run by hand:
 *   node --import tsx apps/web/test/dev/shoot.ts [light|dark]
 *   BLKHEAT_URL=http://127.0.0.1:7360/ node --import tsx apps/web/test/dev/shoot.ts   (a real agent)
 */
import { idle, launch, screenshot } from '@blkheat/testkit';
import { startFakeAgent } from '../fixtures/fakeAgent.ts';

const theme = process.argv[2] === 'light' ? 'light' : 'dark';
// BLKHEAT_URL=http://127.0.0.1:7360/ shoots a running agent instead of the fake one.
const real = process.env.BLKHEAT_URL;
const agent = real ? { url: real, close: async () => undefined } : await startFakeAgent();
const s = await launch({ colorScheme: theme });
try {
  await s.page.goto(agent.url);
  await idle(s.page);
  await s.page.waitForTimeout(1500);
  await idle(s.page);
  console.log(await screenshot(s.page, `${real ? 'agent' : 'live'}-${theme}`, 'web-dev'));
  console.log('errors:', s.errors);
} finally {
  await s.close();
  await agent.close();
}
