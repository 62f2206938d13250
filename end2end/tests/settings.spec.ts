import { expect, test } from '@playwright/test';
import { hydrated, login, shot } from './helpers';

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
});
