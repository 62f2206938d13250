import { expect, test } from '@playwright/test';
import { hydrated, login } from '../tests/helpers';

// A measurement, not a test: how long a clinician waits between pressing Enter and
// seeing the answer or the clarification panel, in the real browser against the
// release server on the default demo dataset. Run with
//   npx playwright test --config end2end/measure.config.ts
// and read the printed p50/p95 (milliseconds, wall clock in the test runner).

const RUNS = Number(process.env.CLARION_MEASURE_RUNS ?? 15);

const CASES: [string, 'answer' | 'clarification-panel'][] = [
  ['How many open wounds are there by clinic?', 'answer'],
  ['Average healing time of venous leg ulcers last year', 'answer'],
  ['show me serious wounds', 'clarification-panel'],
  ['recent infections', 'clarification-panel'],
];

function pct(sorted: number[], p: number) {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

test('Enter → answer or panel, as seen in the browser', async ({ page }) => {
  test.setTimeout(RUNS * CASES.length * 10_000 + 30_000);
  await login(page, 'demo', 'clarion-demo');
  await hydrated(page);
  const lines: string[] = [];
  for (const [question, until] of CASES) {
    const times: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      await page.goto('/');
      await hydrated(page);
      const box = page.getByLabel('Your question');
      await box.fill(question);
      // Timed inside the page: from the real Enter keydown to the first frame after the
      // result is in the DOM.
      await page.evaluate((testid) => {
        const w = window as unknown as { __ms?: number };
        w.__ms = undefined;
        let t0 = 0;
        document.addEventListener('keydown', () => (t0 = performance.now()), { capture: true, once: true });
        const obs = new MutationObserver(() => {
          if (t0 && document.querySelector('[data-testid="answer"], [data-testid="clarification-panel"]')) {
            obs.disconnect();
            requestAnimationFrame(() => (w.__ms = performance.now() - t0));
          }
        });
        obs.observe(document.body, { childList: true, subtree: true });
      }, until);
      await box.press('Enter');
      await page.waitForFunction(() => (window as unknown as { __ms?: number }).__ms !== undefined);
      const ms = await page.evaluate(() => (window as unknown as { __ms: number }).__ms);
      // The question must still do what it is listed for (an answer, or the panel).
      await expect(page.getByTestId(until)).toBeVisible();
      times.push(ms);
    }
    times.sort((a, b) => a - b);
    lines.push(
      `${until.padEnd(19)} p50 ${pct(times, 50).toFixed(0).padStart(4)} ms  p95 ${pct(times, 95).toFixed(0).padStart(4)} ms  max ${times[times.length - 1].toFixed(0).padStart(4)} ms  (${RUNS} runs) "${question}"`,
    );
  }
  console.log(`\nEnter → result in Chromium (release build, demo data):\n${lines.join('\n')}`);
});
