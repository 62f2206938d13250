import { expect, test } from '@playwright/test';
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
