import { expect, Page, test } from '@playwright/test';
import { hydrated, login, watchConsole } from './helpers';

/** Records every Content-Security-Policy violation the page reports. */
async function watchCsp(page: Page): Promise<() => Promise<string[]>> {
  await page.addInitScript(() => {
    (window as unknown as { __csp: string[] }).__csp = [];
    document.addEventListener('securitypolicyviolation', (e) => {
      (window as unknown as { __csp: string[] }).__csp.push(`${e.violatedDirective} ${e.blockedURI}`);
    });
  });
  return () => page.evaluate(() => (window as unknown as { __csp: string[] }).__csp);
}

const PAGES = ['/', '/history', '/glossary', '/settings', '/analytics'];

test.describe('Security headers', () => {
  test('every page hydrates under the Content-Security-Policy with no violation', async ({ page }) => {
    const violations = await watchCsp(page);
    const problems = watchConsole(page);
    await login(page, 'admin', 'clarion-admin');
    for (const path of PAGES) {
      const res = await page.goto(path);
      expect(res?.status(), path).toBe(200);
      const h = res!.headers();
      expect(h['content-security-policy'], path).toContain("frame-ancestors 'none'");
      expect(h['content-security-policy'], path).toMatch(/script-src 'self' 'nonce-[0-9a-f]{32}'/);
      expect(h['cache-control'], path).toBe('no-store');
      expect(h['x-content-type-options'], path).toBe('nosniff');
      await hydrated(page);
      expect(await violations(), path).toEqual([]);
    }
    // The Ask page still works end to end under the policy (server functions, islands).
    await page.goto('/');
    await hydrated(page);
    await page.getByLabel('Your question').fill('how many patients');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect(page.getByTestId('answer').first()).toBeVisible();
    expect(await violations()).toEqual([]);
    expect(problems).toEqual([]);
  });

  test('the sign-in page hydrates under the policy, also after a refused attempt', async ({ page }) => {
    const violations = await watchCsp(page);
    await page.goto('/login');
    await page.getByLabel('Username').fill('demo');
    await page.getByLabel('Password').fill('not-the-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByText('Wrong username or password.')).toBeVisible();
    expect(await violations()).toEqual([]);
  });

  test('Clarion refuses to be framed by another page', async ({ page }) => {
    const res = await page.request.get('/login');
    expect(res.headers()['x-frame-options']).toBe('DENY');
  });
});
