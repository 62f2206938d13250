import { expect, test } from '@playwright/test';
import * as fs from 'fs';
import { hydrated, login, shot, watchConsole } from './helpers';
import { askViaApi } from './accounts';

test.describe('Analytics', () => {
  test('an administrator sees the rates, the charts and what people chose', async ({ page }) => {
    const problems = watchConsole(page);
    await login(page, 'admin', 'clarion-admin');
    // Some activity: one clarified question, one answered directly, one round left open.
    await askViaApi(page.request, 'show me serious wounds', { pick: /^Infected/ });
    await askViaApi(page.request, 'How many open wounds are there by clinic?');
    // 'show me serious wounds' reliably asks (see ask.spec.ts).
    const open = await page.request.post('/api/v1/query', { data: { question: 'show me serious wounds' } });
    expect(open.status()).toBe(202);

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Analytics' }).click();
    await expect(page).toHaveURL(/\/analytics$/);
    await expect(page.getByRole('heading', { level: 1, name: 'Analytics' })).toBeVisible();
    await hydrated(page);
    const questions = Number(await page.getByTestId('kpi-questions').textContent());
    expect(questions).toBeGreaterThanOrEqual(3);
    await expect(page.getByTestId('kpi-clarification-rate')).toHaveText(/^\d+%$/);
    await expect(page.getByTestId('kpi-auto-resolution')).toHaveText(/^\d+%$/);
    await expect(page.getByTestId('kpi-abandonment')).toHaveText(/^(\d+%|—)$/);
    // answers resolved by a remembered or usual definition are counted apart; the saved-question rate
    await expect(page.getByText(/\d+ of them by a clinician's remembered or usual definition/)).toBeVisible();
    await expect(page.getByTestId('kpi-saved')).toHaveText(/^\d+%$/);
    await expect(page.getByTestId('chart-clarification-rate')).toBeVisible();
    await expect(page.getByTestId('chart-clarification-rate').locator('circle').last()).toBeVisible();
    await expect(page.getByTestId('chart-rounds').locator('rect').first()).toBeAttached();
    const serious = page.getByTestId('ambiguous-term').filter({ hasText: '“serious”' });
    await expect(serious).toContainText('Infected');
    await expect(serious).toContainText(/asked \d+ times/);
    // This server has no language model: the section says so instead of an empty table.
    await expect(page.getByTestId('model-calls-none')).toContainText('No calls in this period');
    await expect(page.getByTestId('verified-uses-none')).toContainText('No verified questions yet');
    await shot(page, 'analytics');
    await page.setViewportSize({ width: 768, height: 1024 });
    await shot(page, 'analytics-tablet');
    expect(problems).toEqual([]);
  });

  test('time to answer, edits, repeats, pills with clicks, the range form, the CSV and the per-day chart', async ({ page }) => {
    const problems = watchConsole(page);
    await login(page, 'admin', 'clarion-admin');
    await hydrated(page);
    // A pill clicked on the Ask page is sent as a follow-up from a suggestion.
    const box = page.getByLabel('Your question');
    await box.fill('How many open wounds are there by clinic?');
    await box.press('Enter');
    await expect(page.getByTestId('answer').first()).toBeVisible();
    const before = await page.request.get('/api/v1/admin/analytics?days=1');
    expect(before.status()).toBe(200);
    const clicked = (await before.json()).totals.pills_clicked as number;
    await page.getByTestId('suggestion').first().click();
    await expect(page.getByTestId('exchange')).toHaveCount(2);
    await expect(page.getByTestId('exchange').nth(1).getByTestId('answer')).toBeVisible();
    // A clarified answer voted thumbs up: its choice succeeded.
    const chosen = await askViaApi(page.request, 'show me serious wounds', { pick: /^Infected/ });
    const vote = await page.request.put(`/api/v1/history/${chosen.history_id}/feedback`, { data: { rating: 'up' } });
    expect(vote.status()).toBe(200);

    const after = await (await page.request.get('/api/v1/admin/analytics?days=1')).json();
    // (other specs may click pills meanwhile: at least ours)
    expect(after.totals.pills_clicked).toBeGreaterThanOrEqual(clicked + 1);
    expect(after.totals.median_ms).toBeGreaterThanOrEqual(0);

    await page.goto('/analytics');
    await expect(page.getByTestId('kpi-time-to-answer')).toHaveText(/^\d+(\.\d)? (ms|s)$|^\d+ min \d+ s$/);
    await expect(page.getByTestId('kpi-accept-without-edit')).toHaveText(/^\d+%$/);
    await expect(page.getByTestId('kpi-repeat-clarification')).toHaveText(/^\d+%$/);
    await expect(page.getByTestId('kpi-pill-coverage')).toHaveText(/^\d+%$/);
    await expect(page.getByTestId('kpi-pill-click-through')).toHaveText(/^\d+%$/);
    await expect(page.getByText(/\d+ of \d+ suggestions shown were clicked/)).toBeVisible();
    const serious = page.getByTestId('ambiguous-term').filter({ hasText: '“serious”' });
    await expect(serious.getByTestId('choice-success').first()).toHaveText(/% successful \(\d+ of \d+\)/);
    await expect(page.getByTestId('analytics-definitions')).toContainText('Repeat clarifications');

    // The chart: an image with a name, and the same figures as a table.
    const chart = page.getByRole('img', { name: /Time from question to final answer per day over 30 days/ });
    await expect(chart).toBeVisible();
    await expect(chart.locator('rect').last()).toBeAttached();
    await expect(page.getByRole('img', { name: /Follow-up suggestions per day over 30 days: \d+ shown, [1-9]\d* clicked/ })).toBeVisible();
    const table = page.getByRole('table').filter({ has: page.getByRole('columnheader', { name: 'Pills clicked' }) });
    await expect(table.getByTestId('day-row')).toHaveCount(30);
    const today = new Date().toISOString().slice(0, 10);
    const todayRow = table.getByRole('row').filter({ has: page.getByRole('rowheader', { name: today }) });
    expect(Number(await todayRow.getByRole('cell').last().textContent())).toBeGreaterThanOrEqual(after.totals.pills_clicked);
    await shot(page, 'analytics-new-figures');
    await page.getByTestId('chart-time-to-answer').locator('xpath=ancestor::section[1]/..').screenshot({
      path: 'end2end/test-results/screenshots/analytics-charts-time-pills.png',
    });

    // The presets keep working; the range form shows exactly the days asked for.
    await page.getByRole('navigation', { name: 'Period' }).getByRole('link', { name: '7 days' }).click();
    await expect(page).toHaveURL(/\/analytics\?days=7$/);
    await expect(page.getByTestId('day-row')).toHaveCount(7);
    await expect(page.getByRole('link', { name: '7 days' })).toHaveAttribute('aria-current', 'page');
    const twoDaysAgo = new Date(Date.now() - 2 * 86400000).toISOString().slice(0, 10);
    const form = page.getByRole('form', { name: 'Date range' });
    await form.getByLabel('From').fill(twoDaysAgo);
    await form.getByLabel('Until').fill(today);
    await form.getByRole('button', { name: 'Show' }).click();
    await expect(page).toHaveURL(new RegExp(`/analytics\\?from=${twoDaysAgo}&until=${today}$`));
    await expect(page.getByTestId('analytics-period')).toContainText(`${twoDaysAgo} to ${today}`);
    await expect(page.getByTestId('day-row')).toHaveCount(3);

    // The CSV of what is shown: a header row, the three days, the totals.
    const link = page.getByRole('link', { name: /Download CSV/ });
    await expect(link).toHaveAttribute('href', `/api/v1/admin/analytics.csv?from=${twoDaysAgo}&until=${today}`);
    const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
    expect(download.suggestedFilename()).toBe(`clarion-analytics-${twoDaysAgo}-to-${today}.csv`);
    const csv = fs.readFileSync((await download.path())!, 'utf8').trim().split('\r\n');
    expect(csv).toHaveLength(1 + 3 + 1);
    const header = csv[0].split(',');
    expect(header.slice(0, 3)).toEqual(['date', 'questions', 'clarified']);
    expect(csv[3].startsWith(`${today},`)).toBe(true);
    const total = csv[4].split(',');
    expect(total[0]).toBe('total');
    expect(Number(total[header.indexOf('pills_clicked')])).toBeGreaterThanOrEqual(after.totals.pills_clicked);

    expect(problems).toEqual([]);

    // A range that ends before it starts: a readable message and the form to fix it (422, not 500).
    await form.getByLabel('From').fill(today);
    await form.getByLabel('Until').fill(twoDaysAgo);
    const [res] = await Promise.all([
      page.waitForResponse((r) => r.url().includes('/analytics?from=')),
      form.getByRole('button', { name: 'Show' }).click(),
    ]);
    expect(res.status()).toBe(422);
    await expect(page.getByRole('alert')).toContainText('The range starts after it ends');
    await expect(page.getByRole('form', { name: 'Date range' }).getByLabel('From')).toHaveValue(today);
    await shot(page, 'analytics-bad-range');
    const wide = await page.request.get('/api/v1/admin/analytics?from=2024-01-01&until=2026-01-01');
    expect(wide.status()).toBe(422);
    expect((await wide.json()).message).toContain('at most 366');
  });

  test('a clinician gets no Analytics link, a clear page and 403 from the server function', async ({ page }) => {
    await login(page, 'demo', 'clarion-demo');
    await hydrated(page);
    const nav = page.getByRole('navigation', { name: 'Main' });
    await expect(nav.getByRole('link', { name: 'Settings' })).toBeVisible();
    await expect(nav.getByRole('link', { name: 'Analytics' })).toHaveCount(0);

    const res = await page.goto('/analytics');
    expect(res?.status()).toBe(403);
    await expect(page.getByRole('heading', { level: 1, name: 'Analytics is for administrators' })).toBeVisible();
    await expect(page.getByTestId('admins-only')).toContainText('Only administrators can see this page.');
    await hydrated(page);
    await shot(page, 'analytics-forbidden');

    const api = await page.request.post('/api/analytics', { form: {} });
    expect(api.status()).toBe(403);
    const html = await page.request.post('/api/analytics_html', { form: {} });
    expect(html.status()).toBe(403);
  });
});
