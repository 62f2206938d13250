import { expect, test } from '@playwright/test';
import { holdWasm, hydrated, login, shot, watchConsole } from './helpers';
import { askViaApi, createUser } from './accounts';

test.describe('Settings', () => {
  test.beforeEach(async ({ page }) => {
    await login(page, 'demo', 'clarion-demo');
  });

  test('saving goes through the server function and survives a reload', async ({ page }) => {
    await page.goto('/settings');
    await hydrated(page);
    const skip = page.getByRole('switch', { name: 'Skip all clarifications' });
    const more = page.getByRole('radio', { name: /More questions/ });
    await expect(page.getByRole('radio', { name: /Balanced/ })).toBeChecked();
    await expect(skip).not.toBeChecked();

    await skip.check();
    await more.check();
    await page.getByRole('button', { name: 'Save settings' }).click();
    await expect(page.getByTestId('save-status')).toHaveText('Settings saved.');
    await shot(page, 'settings-saved');

    await page.reload();
    await expect(page.getByRole('switch', { name: 'Skip all clarifications' })).toBeChecked();
    await expect(page.getByRole('radio', { name: /More questions/ })).toBeChecked();

    // Put it back so the run leaves the defaults, and prove it persists too.
    await hydrated(page);
    await page.getByRole('switch', { name: 'Skip all clarifications' }).uncheck();
    await page.getByRole('radio', { name: /Balanced/ }).check();
    await page.getByRole('button', { name: 'Save settings' }).click();
    await expect(page.getByTestId('save-status')).toHaveText('Settings saved.');
    await page.reload();
    await expect(page.getByRole('switch', { name: 'Skip all clarifications' })).not.toBeChecked();
    await expect(page.getByRole('radio', { name: /Balanced/ })).toBeChecked();
  });

  test('a choice made before the page is live counts, and the form works with no wasm at all', async ({ page }) => {
    // Hold the wasm back: choose while the page is server HTML, then let it hydrate.
    const release = await holdWasm(page);
    await page.goto('/settings');
    await page.getByRole('radio', { name: /Fewer questions/ }).check();
    await expect(page.locator('body')).not.toHaveAttribute('data-hydrated', 'true');
    release();
    await hydrated(page);
    await page.getByRole('button', { name: 'Save settings' }).click();
    await expect(page.getByTestId('save-status')).toHaveText('Settings saved.');
    await page.reload();
    await expect(page.getByRole('radio', { name: /Fewer questions/ })).toBeChecked();

    // No wasm at all: the form posts to its server function and comes back here.
    await page.unrouteAll();
    await page.route('**/pkg/*.wasm', (route) => route.abort());
    await page.goto('/settings');
    await page.getByRole('radio', { name: /Balanced/ }).check();
    await page.getByRole('button', { name: 'Save settings' }).click();
    await expect(page).toHaveURL(/\/settings\??$/);
    await expect(page.getByRole('radio', { name: /Balanced/ })).toBeChecked();
    const r = await page.request.get('/api/v1/settings');
    expect((await r.json()).sensitivity).toBe('balanced');
  });
});

// Each of these signs in as an account of its own, so what it changes is seen by no other test.
test.describe('Settings: clarifications, remembered choices, account', () => {
  test('skip all clarifications: an ambiguous question is answered with badges, no panel', async ({ page }) => {
    const user = createUser('skip', 'Sam Skip', 'skip-password-1');
    await login(page, user, 'skip-password-1', '/settings');
    await hydrated(page);
    const skip = page.getByRole('switch', { name: 'Skip all clarifications' });
    await expect(page.getByText('Never stop to ask.')).toBeVisible();
    await skip.check();
    await page.getByRole('button', { name: 'Save settings' }).click();
    await expect(page.getByTestId('save-status')).toHaveText('Settings saved.');

    await page.goto('/');
    await hydrated(page);
    const box = page.getByLabel('Your question');
    await box.fill('patients with large wounds');
    await box.press('Enter');
    const answer = page.getByTestId('answer');
    await expect(answer).toBeVisible();
    await expect(page.getByRole('radiogroup')).toHaveCount(0);
    await expect(page.getByTestId('clarification-panel')).toHaveCount(0);
    await expect(answer.getByTestId('assumption').filter({ hasText: 'large' }).first()).toBeVisible();
    await shot(page, 'settings-skip-answer');
  });

  test('remembered choices are listed with how often they were given, and can be deleted', async ({ page }) => {
    const problems = watchConsole(page);
    const user = createUser('prefs', 'Pat Prefs', 'prefs-password-1');
    await login(page, user, 'prefs-password-1', '/settings');
    await expect(page.getByTestId('remembered-empty')).toBeVisible();
    await askViaApi(page.request, 'show me serious wounds', { pick: /^Infected/, remember: true });

    await page.reload();
    await hydrated(page);
    const row = page.getByTestId('remembered-choice');
    await expect(row).toHaveCount(1);
    await expect(row).toContainText('serious');
    await expect(row).toContainText('Infected');
    await expect(row).toContainText('Given once');
    await expect(row).toContainText('Remembered');
    await shot(page, 'settings-remembered');
    await page.setViewportSize({ width: 768, height: 1024 });
    await shot(page, 'settings-remembered-tablet');

    await row.getByRole('button', { name: /^Forget/ }).click();
    await expect(page.getByTestId('remembered-empty')).toBeVisible();
    await page.reload();
    await expect(page.getByTestId('remembered-empty')).toBeVisible();
    expect(problems).toEqual([]);
  });

  test('API tokens: created with its secret shown once, used as a bearer token, then revoked', async ({ page, playwright }) => {
    const user = createUser('tok', 'Toni Token', 'token-password-1');
    await login(page, user, 'token-password-1', '/settings');
    await hydrated(page);
    await expect(page.getByTestId('tokens-empty')).toBeVisible();
    await page.getByLabel('Name', { exact: true }).fill('nightly export');
    await page.getByLabel('Valid for').selectOption('30');
    await page.getByRole('button', { name: 'Create token' }).click();
    const secretBox = page.getByTestId('token-secret');
    await expect(secretBox).toContainText('Copy it now');
    const secret = (await secretBox.locator('code').first().innerText()).trim();
    expect(secret).toMatch(/^clarion_/);
    await expect(page.getByTestId('token')).toHaveCount(1);
    await expect(page.getByTestId('token')).toContainText(/nightly export.*expires \d{4}-\d{2}-\d{2}/);
    await shot(page, 'settings-token-created');

    // The secret works for the JSON API, outside the browser session.
    const api = await playwright.request.newContext({ baseURL: page.url().replace(/\/settings.*$/, '') });
    const ok = await api.get('/api/v1/settings', { headers: { Authorization: `Bearer ${secret}` } });
    expect(ok.status()).toBe(200);

    // After a reload it is listed, never its secret; revoking ends it.
    await page.reload();
    await hydrated(page);
    await expect(page.getByTestId('token-secret')).toHaveCount(0);
    expect(await page.content()).not.toContain(secret);
    await page.getByRole('button', { name: 'Revoke “nightly export”' }).click();
    await expect(page.getByTestId('tokens-empty')).toBeVisible();
    const gone = await api.get('/api/v1/settings', { headers: { Authorization: `Bearer ${secret}` } });
    expect(gone.status()).toBe(401);
    await api.dispose();
  });

  test('change password: a wrong current one is an inline error; the new one signs in', async ({ page }) => {
    const user = createUser('pw', 'Pat Password', 'first-password-1');
    await login(page, user, 'first-password-1', '/settings');
    await hydrated(page);
    const form = page.getByRole('form', { name: 'Change password' });
    await form.getByLabel('Current password').fill('not-my-password');
    await form.getByLabel('New password', { exact: true }).fill('second-password-2');
    await form.getByLabel('Confirm new password').fill('second-password-2');
    await form.getByRole('button', { name: 'Change password' }).click();
    const error = page.getByTestId('password-error');
    await expect(error).toHaveText('Your current password is not correct.');
    await expect(error).toHaveAttribute('aria-live', 'assertive');
    await expect(form.getByLabel('Current password')).toHaveAttribute('aria-invalid', 'true');
    await shot(page, 'settings-password-error');

    // Mismatched confirmation: refused before anything is checked.
    await form.getByLabel('Current password').fill('first-password-1');
    await form.getByLabel('Confirm new password').fill('second-password-X');
    await form.getByRole('button', { name: 'Change password' }).click();
    await expect(error).toHaveText('The two new passwords do not match.');

    await form.getByLabel('Current password').fill('first-password-1');
    await form.getByLabel('New password', { exact: true }).fill('second-password-2');
    await form.getByLabel('Confirm new password').fill('second-password-2');
    await form.getByRole('button', { name: 'Change password' }).click();
    await expect(page.getByTestId('password-changed')).toContainText('Password changed.');
    await shot(page, 'settings-password-changed');

    // Signed out everywhere: pages send the browser to sign in.
    await page.goto('/history');
    await expect(page).toHaveURL(/\/login\?next=/);
    // The old password is refused, the new one works.
    await page.getByLabel('Username').fill(user);
    await page.getByLabel('Password').fill('first-password-1');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByTestId('login-error')).toHaveText('Wrong username or password.');
    await login(page, user, 'second-password-2', '/settings');
    await expect(page.getByTestId('current-user')).toHaveText('Pat Password');
  });
});
