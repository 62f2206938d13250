import AxeBuilder from '@axe-core/playwright';
import { expect, Page, test } from '@playwright/test';
import { hydrated, login } from './helpers';

// Every page, and every state of the Ask page, scanned by axe-core (WCAG 2.1 A and AA
// rules): no serious or critical violation may appear. A failure lists each rule with
// the elements it found.

const DEMO = ['demo', 'clarion-demo'] as const;
const ADMIN = ['admin', 'clarion-admin'] as const;

async function scan(page: Page, what: string) {
  const result = await new AxeBuilder({ page })
    .withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'])
    .analyze();
  const bad = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  const report = bad.map(
    (v) =>
      `${v.id} (${v.impact}): ${v.help}\n` +
      v.nodes
        .slice(0, 5)
        .map((n) => `    ${n.target.join(' ')} — ${n.failureSummary?.split('\n').join(' ')}`)
        .join('\n'),
  );
  expect(report, `${what}: serious or critical accessibility violations`).toEqual([]);
  // The scan really ran rules against the page (not an empty document).
  expect(result.passes.length, `${what}: axe found nothing to check`).toBeGreaterThan(5);
}

async function ask(page: Page, question: string) {
  const box = page.getByLabel('Your question');
  await box.fill(question);
  await box.press('Enter');
}

test.describe('Accessibility (axe-core)', () => {
  test('the sign-in page, signed out, and the not-found page', async ({ page }) => {
    await page.goto('/login');
    await scan(page, 'sign-in');
    await page.getByLabel('Username').fill('nobody');
    await page.getByLabel('Password').fill('wrong-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByRole('alert')).toBeVisible();
    await scan(page, 'sign-in with an error');
  });

  test('every state of the Ask page: empty, panel open, answer, error', async ({ page }) => {
    await login(page, DEMO[0], DEMO[1]);
    await hydrated(page);
    await scan(page, 'Ask, empty');
    await ask(page, 'show me serious wounds');
    await expect(page.getByTestId('clarification-panel')).toBeVisible();
    await scan(page, 'Ask, clarification panel open');
    await page.getByTestId('clarification-panel').getByRole('button', { name: 'Submit' }).click();
    await expect(page.getByTestId('answer')).toBeVisible();
    await scan(page, 'Ask, answer with assumptions and table');
    await ask(page, 'delete all patients');
    await expect(page.getByTestId('ask-error')).toBeVisible();
    await scan(page, 'Ask, refused question');
  });

  test('History, Glossary, Settings and a missing page', async ({ page }) => {
    await login(page, DEMO[0], DEMO[1]);
    for (const path of ['/history', '/glossary', '/settings', '/no-such-page']) {
      await page.goto(path);
      await hydrated(page);
      await scan(page, path);
    }
  });

  test("the administrators' pages", async ({ page }) => {
    await login(page, ADMIN[0], ADMIN[1]);
    for (const path of ['/analytics', '/admin/access', '/admin/verified']) {
      await page.goto(path);
      await expect(page.locator('main, body').first()).toBeVisible();
      await scan(page, path);
    }
  });
});
