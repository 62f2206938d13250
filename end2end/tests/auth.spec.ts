import { expect, test } from '@playwright/test';
import { hydrated, login, shot, watchConsole } from './helpers';

test.describe('Sign in and out', () => {
  test('a signed-out visitor is sent to sign in, then back where they were going', async ({ page }) => {
    const res = await page.goto('/settings');
    expect(res?.status()).toBe(200);
    await expect(page).toHaveURL(/\/login\?next=%2Fsettings$|\/login\?next=\/settings$/);
    await expect(page.getByRole('heading', { level: 1, name: 'Sign in to Clarion' })).toBeVisible();

    await page.getByLabel('Username').fill('demo');
    await page.getByLabel('Password').fill('clarion-demo');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page).toHaveURL(/\/settings$/);
    await expect(page.getByRole('heading', { level: 1, name: 'Settings' })).toBeVisible();
  });

  test('a wrong password shows an inline error and keeps the username', async ({ page }) => {
    const problems = watchConsole(page);
    await page.goto('/login');
    await page.getByLabel('Username').fill('demo');
    await page.getByLabel('Password').fill('not-the-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByTestId('login-error')).toHaveText('Wrong username or password.');
    await expect(page.getByLabel('Username')).toHaveValue('demo');
    await expect(page.getByLabel('Password')).toHaveValue('');
    // The re-rendered page hydrates cleanly (the error travels with the page).
    await hydrated(page);
    await shot(page, 'login-error');
    expect(problems.filter((p) => !p.includes('401'))).toEqual([]);
  });

  test('login → the header shows the user → sign out → back at sign in', async ({ page }) => {
    await login(page, 'demo', 'clarion-demo');
    await expect(page.getByRole('heading', { level: 1, name: 'Ask a question' })).toBeVisible();
    await expect(page.getByTestId('current-user')).toHaveText('Dr. Dana Reyes');
    await hydrated(page);
    await shot(page, 'signed-in');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await expect(page).toHaveURL(/\/login$/);
    await expect(page.getByRole('heading', { level: 1, name: 'Sign in to Clarion' })).toBeVisible();

    // The session is gone: protected pages send the browser back to sign in.
    await page.goto('/history');
    await expect(page).toHaveURL(/\/login\?next=/);
  });

  test('every page but sign-in sends a signed-out visitor to sign in', async ({ page }) => {
    for (const path of ['/', '/history', '/glossary', '/analytics', '/settings']) {
      await page.goto(path);
      await expect(page, path).toHaveURL(/\/login(\?next=.*)?$/);
      await expect(page.getByRole('heading', { level: 1, name: 'Sign in to Clarion' })).toBeVisible();
    }
    const res = await page.goto('/login');
    expect(res?.status()).toBe(200);
    await expect(page).toHaveURL(/\/login$/);
  });

  test('sign out stays reachable below the tablet breakpoint', async ({ page }) => {
    await page.setViewportSize({ width: 600, height: 900 });
    await login(page, 'demo', 'clarion-demo');
    const signOut = page.getByRole('banner').getByRole('button', { name: 'Sign out', exact: true });
    await expect(signOut).toBeVisible();
    await shot(page, 'header-narrow');
    await signOut.click();
    await expect(page).toHaveURL(/\/login$/);
  });

  test('Settings has a sign-out button of its own, usable by keyboard', async ({ page }) => {
    await login(page, 'demo', 'clarion-demo', '/settings');
    await hydrated(page);
    const button = page.getByRole('button', { name: 'Sign out of Clarion' });
    await button.focus();
    await page.keyboard.press('Enter');
    await expect(page).toHaveURL(/\/login$/);
    await page.goto('/settings');
    await expect(page).toHaveURL(/\/login\?next=/);
  });
});
