import { expect, test } from '@playwright/test';
import { hydrated, login } from '../tests/helpers';

// Refreshes the README's screenshots (viewport-sized, 1280×800) from the real release
// build: `npx playwright test --config end2end/measure.config.ts readme-screenshots`.

test('README screenshots', async ({ page }) => {
  await login(page, 'demo', 'clarion-demo');
  await hydrated(page);
  const box = page.getByLabel('Your question');
  await box.fill('Show me patients with serious wounds');
  await box.press('Enter');
  const panel = page.getByTestId('clarification-panel');
  await expect(panel).toBeVisible();
  await page.getByTestId('exchange').last().evaluate((el) => el.scrollIntoView({ block: 'start' }));
  await page.screenshot({ path: 'end2end/screenshots/ask.png' });
  await panel.getByRole('radio', { name: /^Infected/ }).check();
  await panel.getByRole('button', { name: 'Submit' }).click();
  await expect(page.getByTestId('answer')).toBeVisible();
  await box.fill('How many open wounds are there by clinic?');
  await box.press('Enter');
  const answer = page.getByTestId('answer').last();
  await expect(answer.getByTestId('chart')).toBeVisible();
  await page.getByTestId('exchange').last().evaluate((el) => el.scrollIntoView({ block: 'start' }));
  await page.screenshot({ path: 'end2end/screenshots/answer.png' });
});
