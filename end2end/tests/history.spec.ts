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
    await expect(items.nth(1).getByRole('link', { name: /^Open the thread of/ })).toHaveAttribute(
      'href',
      `/threads/${clear.thread_id}`,
    );
    await shot(page, 'history');
    await page.setViewportSize({ width: 768, height: 1024 });
    await shot(page, 'history-tablet');
    expect(problems).toEqual([]);
  });

  test('re-run asks the same question again in one click', async ({ page }) => {
    const user = createUser('rerun', 'Riley Rerun', 'rerun-password-1');
    await login(page, user, 'rerun-password-1', '/history');
    await askViaApi(page.request, 'How many open wounds are there by clinic?');
    await page.reload();
    await hydrated(page);
    const rerun = page.getByRole('link', { name: 'Re-run “How many open wounds are there by clinic?”' });
    await expect(rerun).toHaveAttribute('href', '/?q=How%20many%20open%20wounds%20are%20there%20by%20clinic%3F');
    await rerun.click();
    await expect(page.getByTestId('exchange-question')).toHaveText(['How many open wounds are there by clinic?']);
    await expect(page.getByTestId('answer')).toBeVisible();
    await shot(page, 'history-rerun');

    // The re-run is a new entry in the history.
    await page.goto('/history');
    await expect(page.getByTestId('history-item')).toHaveCount(2);
  });
});
