import { expect, test } from '@playwright/test';
import { hydrated, login, shot } from './helpers';

test.describe('Ask composer', () => {
  test.beforeEach(async ({ page }) => {
    await login(page, 'demo', 'clarion-demo');
  });

  test('an example question fills the composer and Enter sends it (needs hydration)', async ({ page }) => {
    await page.goto('/');
    await hydrated(page);
    const box = page.getByLabel('Your question');
    const send = page.getByRole('button', { name: 'Send' });
    await expect(send).toBeDisabled();

    await page.getByTestId('example-question').first().click();
    await expect(box).toHaveValue('How many open wounds are there by clinic?');
    await expect(send).toBeEnabled();
    await expect(box).toBeFocused();

    await box.press('Enter');
    await expect(page.getByTestId('exchange-question')).toHaveText(['How many open wounds are there by clinic?']);
    await expect(box).toHaveValue('');
    await expect(send).toBeDisabled();
    await shot(page, 'ask-thread');
  });

  test('Shift+Enter adds a new line instead of sending; blank input never sends', async ({ page }) => {
    await page.goto('/');
    await hydrated(page);
    const box = page.getByLabel('Your question');
    await box.fill('   ');
    await box.press('Enter');
    await expect(page.getByTestId('exchange-question')).toHaveCount(0);
    await box.fill('first line');
    await box.press('Shift+Enter');
    await box.pressSequentially('second line');
    await expect(box).toHaveValue('first line\nsecond line');
    await expect(page.getByTestId('exchange-question')).toHaveCount(0);
  });
});
