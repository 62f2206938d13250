import { Browser, expect, Page, test } from '@playwright/test';
import { hydrated, login, shot } from './helpers';

// Verified questions (issue 16): an administrator answers an ambiguous question, verifies
// it on /admin/verified, and a clinician asking it then gets the answer at once with
// the "Verified by" badge and no clarification panel. The question is used by no other
// spec; the test retires what it verified.

const NURSE = ['nurse', 'clarion-nurse'] as const;
const ADMIN = ['admin', 'clarion-admin'] as const;
const QUESTION = 'show me serious wounds at Lakeview';

async function signedIn(browser: Browser, user: readonly [string, string]) {
  const ctx = await browser.newContext();
  const page = await ctx.newPage();
  await login(page, user[0], user[1]);
  await hydrated(page);
  return page;
}

async function ask(page: Page, question: string) {
  const box = page.getByLabel('Your question');
  await box.fill(question);
  await box.press('Enter');
}

test.describe('Verified questions', () => {
  test('an administrator verifies an answer; a clinician gets it with the badge and no panel', async ({ browser }) => {
    const admin = await signedIn(browser, ADMIN);
    await ask(admin, QUESTION);
    // Without a verified definition the question is asked back (one round or more).
    const panel = admin.getByTestId('clarification-panel').last();
    await expect(panel).toBeVisible();
    for (let round = 1; (await admin.getByTestId('answer').count()) === 0; round++) {
      await admin.getByTestId('clarification-panel').last().getByRole('button', { name: 'Submit' }).click();
      await expect(admin.getByTestId('answer').or(admin.getByTestId('clarification-panel').nth(round))).toBeVisible();
    }

    await admin.goto('/admin/verified');
    const candidate = admin.getByTestId('verify-candidate').filter({ hasText: QUESTION }).first();
    await candidate.getByLabel('Name').fill('Serious wounds at Lakeview');
    await shot(admin, 'verified-admin-page');
    await candidate.getByRole('button', { name: `Verify “${QUESTION}”` }).click();
    await expect(admin.getByTestId('verified-notice')).toContainText('Verified');
    await expect(admin.getByTestId('verified-item')).toContainText('Serious wounds at Lakeview');

    const nurse = await signedIn(browser, NURSE);
    await ask(nurse, QUESTION);
    await expect(nurse.getByTestId('answer')).toBeVisible();
    await expect(nurse.getByTestId('verified-badge')).toHaveText('Verified by Alex Morgan · Serious wounds at Lakeview');
    await expect(nurse.getByTestId('clarification-panel')).toHaveCount(0);
    await shot(nurse, 'verified-badge');

    await nurse.goto('/glossary');
    await expect(nurse.getByTestId('glossary-verified')).toContainText('Serious wounds at Lakeview');

    // Analytics shows how often it has answered (the nurse's question, at least).
    await admin.goto('/analytics');
    const row = admin.getByTestId('verified-uses').locator('tr').filter({ hasText: 'Serious wounds at Lakeview' });
    await expect(row).toContainText('Alex Morgan');
    // Cells after the name: verified by, questions answered, 👍, 👎.
    expect(Number(await row.locator('td').nth(1).textContent())).toBeGreaterThanOrEqual(1);
    await expect(row.getByTestId('verified-down')).toHaveText('0');

    // Retired, it no longer answers (and no other spec sees it).
    await admin.goto('/admin/verified');
    await admin
      .getByTestId('verified-item')
      .filter({ hasText: 'Serious wounds at Lakeview' })
      .getByRole('button', { name: 'Retire “Serious wounds at Lakeview”' })
      .click();
    await expect(admin.getByTestId('verified-notice')).toContainText('Retired');
  });
});
