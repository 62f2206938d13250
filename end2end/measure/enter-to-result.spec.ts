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
  ['patients with large wounds', 'clarification-panel'],
];

function pct(sorted: number[], p: number) {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

test('Enter → answer or panel, as seen in the browser', async ({ page }) => {
  test.setTimeout(RUNS * CASES.length * 5_000 + 30_000);
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
      // Timed inside the page: from the keydown to the first frame showing the result.
      const ms = await page.evaluate(
        ([testid]) =>
          new Promise<number>((resolve) => {
            const box = document.querySelector('textarea') as HTMLTextAreaElement;
            const t0 = performance.now();
            const seen = () => {
              if (document.querySelector(`[data-testid="${testid}"]`)) {
                requestAnimationFrame(() => resolve(performance.now() - t0));
              } else {
                requestAnimationFrame(seen);
              }
            };
            box.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true, cancelable: true }));
            requestAnimationFrame(seen);
          }),
        [until],
      );
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
