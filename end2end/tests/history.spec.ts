import { expect, test } from '@playwright/test';
import { hydrated, login, shot, watchConsole } from './helpers';
import { askViaApi, createUser } from './accounts';

test.describe('History', () => {
  test('starts empty, then lists past questions newest first with their assumptions', async ({ page }) => {
    const problems = watchConsole(page);
    const user = createUser('hist', 'Harper History', 'history-password-1');
    await login(page, user, 'history-password-1', '/history');
    await expect(page.getByText('No questions yet')).toBeVisible();
    await shot(page, 'history-empty');

    const clear = await askViaApi(page.request, 'How many open wounds are there by clinic?');
    const clarified = await askViaApi(page.request, 'show me serious wounds', { pick: /^Infected/ });
    await page.reload();
    await hydrated(page);

    const items = page.getByTestId('history-item');
    await expect(items).toHaveCount(2);
    await expect(page.getByTestId('history-count')).toHaveText('2 questions');
    await expect(page.getByTestId('history-question')).toHaveText([
      'show me serious wounds',
      'How many open wounds are there by clinic?',
    ]);
    const rows = (n: number) => (n === 1 ? '1 row' : `${n} rows`);
    await expect(items.nth(0).getByTestId('history-rows')).toHaveText(rows(clarified.table.row_count));
    await expect(items.nth(1).getByTestId('history-rows')).toHaveText(rows(clear.table.row_count));
    // Which answers were given, not just how many.
    await expect(items.nth(0).getByTestId('history-chosen')).toHaveText([/serious.*: Infected.*\(you chose\)/]);
    await expect(items.nth(1).getByTestId('history-chosen')).toHaveCount(0);
    await expect(items.nth(0).locator('time')).toHaveText(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC$/);
    await expect(items.nth(1).getByRole('link', { name: /^Open thread: / })).toHaveAttribute(
      'href',
      `/threads/${clear.thread_id}`,
    );
    await shot(page, 'history');
    await page.setViewportSize({ width: 768, height: 1024 });
    await shot(page, 'history-tablet');
    expect(problems).toEqual([]);
  });

  test('re-run asks the same question again in one click, keeping its clarifications', async ({ page }) => {
    const user = createUser('rerun', 'Riley Rerun', 'rerun-password-1');
    await login(page, user, 'rerun-password-1', '/history');
    const first = await askViaApi(page.request, 'show me serious wounds', { pick: /^Infected/ });
    await page.reload();
    // A form post: it works even before the page's script has loaded.
    const rerun = page.getByRole('button', { name: 'Re-run “show me serious wounds”' });
    await rerun.click();
    await expect(page).toHaveURL(/\/threads\/[0-9a-f]{32}$/);
    expect(page.url()).not.toContain(first.thread_id);
    await expect(page.getByTestId('exchange-question')).toHaveText(['show me serious wounds']);
    // Asked with the same choice: answered at once, no clarification panel.
    const restored = page.getByTestId('restored-answer');
    await expect(restored.getByTestId('restatement')).toHaveText(first.restatement);
    await expect(page.getByTestId('clarification-panel')).toHaveCount(0);
    await shot(page, 'history-rerun');

    // The re-run is a new entry in the history, with the same choice.
    await page.goto('/history');
    const items = page.getByTestId('history-item');
    await expect(items).toHaveCount(2);
    await expect(items.nth(0).getByTestId('history-chosen')).toHaveText([/serious.*: Infected.*\(you chose\)/]);
  });

  test('a link with a question fills the composer and runs nothing until Send', async ({ page }) => {
    const user = createUser('link', 'Lee Link', 'link-password-12');
    await login(page, user, 'link-password-12');
    await page.goto('/?q=' + encodeURIComponent('how many patients are there'));
    await hydrated(page);
    await expect(page.getByLabel('Your question')).toHaveValue('how many patients are there');
    await expect(page.getByTestId('from-link')).toBeVisible();
    await page.waitForTimeout(500);
    await expect(page.getByTestId('answer')).toHaveCount(0);
    const history = await page.request.get('/api/v1/history');
    expect(await history.json()).toEqual([]);
    await page.getByRole('button', { name: 'Send' }).click();
    await expect(page.getByTestId('answer')).toBeVisible();
  });

  test('a failed re-run comes back to History with a message, never text from the address', async ({ page }) => {
    await login(page, 'demo', 'clarion-demo', '/history');
    await page.goto('/history?rerun_error=' + encodeURIComponent('Your account is locked, call 555'));
    await expect(page.getByTestId('rerun-error')).toHaveText('The question could not be run again. Please try again.');
    await page.goto('/history?rerun_error=not_found');
    await expect(page.getByTestId('rerun-error')).toHaveText('That question is no longer in your history.');
  });
});
