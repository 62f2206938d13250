import { Browser, expect, Page, test } from '@playwright/test';
import { createUser } from './accounts';
import { hydrated, login, shot } from './helpers';

// Clinic-scoped access (issue 16) on the demo data: `nurse` may see Lakeview Community
// Wound Care and Harborview Care Home (clinics 2 and 3) only; `admin` sees all 12.

const NURSE = ['nurse', 'clarion-nurse'] as const;
const ADMIN = ['admin', 'clarion-admin'] as const;
const HERS = ['Harborview Care Home', 'Lakeview Community Wound Care'];

async function signedIn(browser: Browser, user: readonly [string, string]) {
  const ctx = await browser.newContext();
  const page = await ctx.newPage();
  await login(page, user[0], user[1]);
  await hydrated(page);
  return page;
}

/** Asks, and waits for one more answer or clarification panel than before. */
async function ask(page: Page, question: string, until: 'answer' | 'clarification-panel') {
  const before = await page.getByTestId(until).count();
  const box = page.getByLabel('Your question');
  await box.fill(question);
  await box.press('Enter');
  await expect(page.getByTestId(until)).toHaveCount(before + 1);
}

/** The answer's rows as (first cell → last cell as a number). */
async function rowsOf(page: Page): Promise<Map<string, number>> {
  const rows = page.getByTestId('answer').last().locator('tbody tr');
  const out = new Map<string, number>();
  for (const cells of await Promise.all((await rows.all()).map((r) => r.locator('td').allInnerTexts()))) {
    out.set(cells[0].trim(), Number(cells[cells.length - 1].replace(/[^0-9.]/g, '')));
  }
  return out;
}

/** The option counts of the last clarification panel, as numbers. */
async function optionCounts(page: Page): Promise<number[]> {
  const texts = await page.getByTestId('clarification-panel').last().getByTestId('option-count').allInnerTexts();
  return texts.map((t) => Number(t.replace(/[^0-9]/g, '')));
}

test.describe('Clinic access', () => {
  test('a scoped clinician sees only her clinics in counts, groups and option counts', async ({ browser }) => {
    const nurse = await signedIn(browser, NURSE);
    const admin = await signedIn(browser, ADMIN);

    const byClinic = 'How many open wounds are there by clinic?';
    await ask(nurse, byClinic, 'answer');
    const hers = await rowsOf(nurse);
    expect([...hers.keys()].sort()).toEqual(HERS);
    await expect(nurse.getByTestId('assumption').filter({ hasText: 'only yours' })).toContainText(
      'Lakeview Community Wound Care',
    );
    await ask(admin, byClinic, 'answer');
    const everyone = await rowsOf(admin);
    expect(everyone.size).toBe(12);
    for (const [clinic, n] of hers) expect(n).toBe(everyone.get(clinic));
    await shot(nurse, 'scope-by-clinic');

    // The count of all open wounds is the sum of her two clinics.
    await ask(nurse, 'How many open wounds?', 'answer');
    const total = [...(await rowsOf(nurse)).values()][0];
    expect(total).toBe([...hers.values()].reduce((a, b) => a + b, 0));

    // A clinic outside her access: her own figure, and a note instead of Riverside's.
    await ask(nurse, 'How many open wounds at Riverside?', 'answer');
    expect([...(await rowsOf(nurse)).values()][0]).toBe(total);
    await expect(nurse.getByTestId('assumption').filter({ hasText: 'outside your access' })).toContainText(
      'Riverside General Hospital Wound Clinic',
    );
    await shot(nurse, 'scope-outside-note');

    // Option counts of a clarification round are counted over her clinics only.
    await ask(nurse, 'show me serious wounds', 'clarification-panel');
    await ask(admin, 'show me serious wounds', 'clarification-panel');
    const mine = await optionCounts(nurse);
    const all = await optionCounts(admin);
    expect(mine.length).toBeGreaterThan(0);
    expect(mine.length).toBe(all.length);
    mine.forEach((n, i) => expect(n).toBeLessThan(all[i]));
    await shot(nurse, 'scope-option-counts');

    // The JSON API says what she may see.
    const me = await nurse.request.get('/api/v1/me');
    expect(await me.json()).toMatchObject({ username: 'nurse', all_clinics: false, clinic_ids: [2, 3] });
  });

  test('an administrator assigns clinics on the access page; it applies to the next question', async ({ browser }) => {
    const username = createUser('scoped', 'Sky Scoped', 'scoped-password-1');
    const admin = await signedIn(browser, ADMIN);
    await admin.goto('/admin/access');
    const section = admin.locator(`[data-testid="access-user"][data-username="${username}"]`);
    await expect(section.getByTestId('access-current')).toHaveText('Sees: all clinics');
    await section.getByLabel('Only these clinics:').check();
    await section.getByLabel(/Riverside General Hospital Wound Clinic/).check();
    await shot(admin, 'scope-admin-page');
    await section.getByRole('button', { name: `Save access for ${username}` }).click();
    await expect(admin.getByTestId('access-notice')).toContainText('Saved');
    await expect(
      admin.locator(`[data-testid="access-user"][data-username="${username}"]`).getByTestId('access-current'),
    ).toHaveText('Sees: Riverside General Hospital Wound Clinic');

    const user = await signedIn(browser, [username, 'scoped-password-1']);
    await ask(user, 'How many clinics are there?', 'answer');
    expect([...(await rowsOf(user)).values()][0]).toBe(1);
  });
});
