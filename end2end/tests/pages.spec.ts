import { expect, test } from '@playwright/test';
import { hydrated, login, shot, watchConsole } from './helpers';

const PAGES = [
  { path: '/', heading: 'Ask a question', nav: 'Ask', shot: 'ask' },
  { path: '/history', heading: 'History', nav: 'History', shot: 'history' },
  { path: '/saved', heading: 'Saved questions', nav: 'Saved', shot: 'saved-empty' },
  { path: '/glossary', heading: 'Glossary', nav: 'Glossary', shot: 'glossary' },
  // Analytics is for administrators: covered in analytics.spec.ts.
  { path: '/settings', heading: 'Settings', nav: 'Settings', shot: 'settings' },
];

test.describe('Pages', () => {
  test.beforeEach(async ({ page }) => {
    await login(page, 'demo', 'clarion-demo');
  });

  for (const p of PAGES) {
    test(`${p.path} renders its heading, hydrates without console errors`, async ({ page }) => {
      const problems = watchConsole(page);
      const res = await page.goto(p.path);
      expect(res?.status()).toBe(200);
      await expect(page.getByRole('heading', { level: 1, name: p.heading })).toBeVisible();
      await hydrated(page);
      await expect(page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: p.nav })).toHaveAttribute(
        'aria-current',
        'page',
      );
      await shot(page, p.shot);
      expect(problems).toEqual([]);
    });
  }

  test('login page renders its form', async ({ page }) => {
    await page.goto('/login');
    await expect(page.getByRole('heading', { level: 1, name: 'Sign in to Clarion' })).toBeVisible();
    await expect(page.getByLabel('Username')).toBeVisible();
    await expect(page.getByLabel('Password')).toBeVisible();
    await shot(page, 'login');
  });

  test('an unknown address shows the 404 page with a way back', async ({ page }) => {
    const res = await page.goto('/no/such/page');
    expect(res?.status()).toBe(404);
    await expect(page.getByRole('heading', { level: 1, name: 'Page not found' })).toBeVisible();
    await shot(page, 'not-found');
    await hydrated(page);
    await page.getByRole('link', { name: 'Back to Ask' }).click();
    await expect(page).toHaveURL(/\/$/);
    await expect(page.getByRole('heading', { level: 1, name: 'Ask a question' })).toBeVisible();
  });

  test('the header navigation moves between every page, each hydrating its islands', async ({ page }) => {
    const problems = watchConsole(page);
    await page.goto('/');
    await hydrated(page);
    for (const p of [...PAGES.slice(1), PAGES[0]]) {
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: p.nav }).click();
      await expect(page).toHaveURL(new RegExp(`${p.path === '/' ? '/$' : p.path}$`));
      await expect(page.getByRole('heading', { level: 1, name: p.heading })).toBeVisible();
      // Routing is on the server (islands): every page arrives whole and hydrates again.
      await hydrated(page);
    }
    expect(problems).toEqual([]);
  });

  test('the tablet layout keeps the navigation usable', async ({ page }) => {
    await page.setViewportSize({ width: 768, height: 1024 });
    await page.goto('/settings');
    await expect(page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Glossary' })).toBeVisible();
    await shot(page, 'settings-tablet');
  });
});
