import AxeBuilder from '@axe-core/playwright';
import { expect, Page, test } from '@playwright/test';
import { hydrated, login, shot, watchConsole } from './helpers';
import { askViaApi, createUser } from './accounts';

// Saved questions (F27): an answer that needed a clarification is saved under a name
// from the answer card, listed on /saved, and run from there with exactly its choices:
// the answer appears with no clarification panel. A saved question whose verified
// definition was retired says it no longer applies and offers to ask afresh.

/** No serious or critical WCAG 2.1 A/AA violation (as a11y.spec.ts scans every page). */
async function scan(page: Page, what: string) {
  const result = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
  const bad = result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.help} — ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  expect(bad, `${what}: serious or critical accessibility violations`).toEqual([]);
}

test.describe('Saved questions', () => {
  test('save an answered clarification with a name, then run it from Saved without being asked again', async ({ page }) => {
    const problems = watchConsole(page);
    const user = createUser('saved', 'Sam Saver', 'saved-password-1');
    await login(page, user, 'saved-password-1');
    await hydrated(page);

    // Ask through the page; the panel asks what "serious" means; choose Infected.
    const box = page.getByLabel('Your question');
    await box.fill('show me serious wounds');
    await box.press('Enter');
    const panel = page.getByTestId('clarification-panel');
    await expect(panel).toBeVisible();
    await panel.getByTestId('clarification-option').filter({ hasText: 'Signs of infection at the latest assessment' }).click();
    await panel.getByRole('button', { name: 'Submit' }).click();
    const answer = page.getByTestId('answer');
    await expect(answer).toBeVisible();
    const rows = await answer.getByTestId('row-count').textContent();
    const restatement = await answer.getByTestId('restatement').textContent();

    // "Save question" under the answer opens the server-rendered save form.
    await answer.getByRole('link', { name: 'Save question' }).click();
    await expect(page).toHaveURL(/\/saved\/new\?history=[0-9a-f]{32}$/);
    const form = page.getByTestId('save-form');
    await expect(form).toContainText('show me serious wounds');
    await expect(form).toContainText('serious: Infected');
    await scan(page, 'the save form');
    await form.getByLabel('Name').fill('Infected wounds — weekly check');
    await form.getByRole('button', { name: 'Save question' }).click();

    await expect(page).toHaveURL(/\/saved\?done=saved$/);
    await expect(page.getByTestId('saved-notice')).toContainText('Saved.');
    const item = page.getByTestId('saved-item');
    await expect(item).toHaveCount(1);
    await expect(item.getByTestId('saved-name')).toHaveText('Infected wounds — weekly check');
    await expect(item.getByTestId('saved-chosen')).toHaveText([/serious: Infected.*\(you chose\)/]);
    await expect(page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Saved' })).toHaveAttribute('aria-current', 'page');
    await shot(page, 'saved-list');
    await scan(page, 'the Saved list');

    // Run: a new thread with the answer, the same rows, and no clarification panel.
    await item.getByRole('button', { name: 'Run “Infected wounds — weekly check”' }).click();
    await expect(page).toHaveURL(/\/threads\/[0-9a-f]{32}$/);
    await expect(page.getByTestId('restored-answer').getByTestId('restatement')).toHaveText(restatement!);
    await expect(page.getByTestId('restored-answer').getByTestId('row-count')).toContainText(rows!);
    await expect(page.getByTestId('clarification-panel')).toHaveCount(0);
    await shot(page, 'saved-run');

    // Rename, then delete.
    await page.goto('/saved');
    await expect(page.getByTestId('saved-item')).toContainText('run 1 time');
    await page.getByLabel('New name for “Infected wounds — weekly check”').fill('Infected wounds');
    await page.getByRole('button', { name: 'Rename' }).click();
    await expect(page.getByTestId('saved-notice')).toHaveText('Renamed.');
    await expect(page.getByTestId('saved-name')).toHaveText('Infected wounds');
    await page.getByRole('button', { name: 'Delete “Infected wounds”' }).click();
    await expect(page.getByTestId('saved-notice')).toHaveText('Deleted.');
    await expect(page.getByText('No saved questions yet')).toBeVisible();
    expect(problems).toEqual([]);
  });

  test('a saved question whose verified definition was retired no longer applies and offers to ask afresh', async ({ page, browser }) => {
    const adminName = createUser('savedadm', 'Alex Morgan', 'saved-admin-pass-1', true);
    const admin = await (await browser.newContext()).newPage();
    await login(admin, adminName, 'saved-admin-pass-1');
    const phrasing = `serious wounds to recheck ${Date.now().toString(36)}`;
    const answered = await askViaApi(admin.request, 'show me serious wounds', { pick: /^Infected/ });
    const v = await admin.request.post('/api/v1/admin/verified', {
      data: { history_id: answered.history_id, name: 'Serious wounds (infected)', phrasings: [phrasing] },
    });
    expect(v.status()).toBe(201);
    const verified = await v.json();

    const user = createUser('stale', 'Sky Stale', 'stale-password-1');
    await login(page, user, 'stale-password-1', '/saved');
    const mine = await askViaApi(page.request, phrasing);
    expect(mine.verified).toContain('Serious wounds (infected)');
    const s = await page.request.post('/api/v1/saved', { data: { history_id: mine.history_id, name: 'Serious (verified)' } });
    expect(s.status()).toBe(201);

    const r = await admin.request.delete(`/api/v1/admin/verified/${verified.id}`);
    expect(r.status()).toBe(204);

    await page.goto('/saved');
    const item = page.getByTestId('saved-item');
    await expect(item).toHaveAttribute('data-applies', 'false');
    await expect(item.getByTestId('saved-stale')).toContainText('No longer applies');
    await expect(item.getByTestId('saved-stale')).toContainText('“Serious wounds (infected)” was retired');
    await expect(item.getByRole('button', { name: /^Run/ })).toHaveCount(0);
    await expect(item.getByTestId('saved-afresh')).toHaveAttribute('href', '/?q=' + encodeURIComponent(phrasing));
    await shot(page, 'saved-no-longer-applies');
    await scan(page, 'a saved question that no longer applies');

    // The API refuses to run it with another reading.
    const list = await (await page.request.get('/api/v1/saved')).json();
    const run = await page.request.post(`/api/v1/saved/${list[0].id}/run`);
    expect(run.status()).toBe(422);
    expect((await run.json()).code).toBe('no_longer_applies');
    await admin.context().close();
  });
});
