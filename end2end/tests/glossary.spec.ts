import { expect, test } from '@playwright/test';
import { hydrated, login, shot } from './helpers';

test.describe('Glossary', () => {
  test.beforeEach(async ({ page }) => {
    await login(page, 'demo', 'clarion-demo');
  });

  test('lists every dictionary term with its options, server-rendered', async ({ page }) => {
    await page.goto('/glossary');
    const terms = page.getByTestId('glossary-term');
    const count = await terms.count();
    expect(count).toBeGreaterThanOrEqual(50);
    await expect(page.getByTestId('term-count')).toHaveText(`${count} terms`);
    // Every term card shows exactly one default option.
    const large = terms.filter({ has: page.getByRole('heading', { name: 'large', exact: true }) });
    await expect(large).toHaveCount(1);
    await expect(large.getByText('Default')).toHaveCount(1);
    await expect(large.getByText('What counts as a large wound?')).toBeVisible();
    await expect(page.getByTestId('glossary-entity').filter({ hasText: 'Wound' }).first()).toBeVisible();
    await shot(page, 'glossary-full');
  });

  test('search narrows terms and data items, and says when nothing matches', async ({ page }) => {
    await page.goto('/glossary');
    await hydrated(page);
    const search = page.getByLabel('Search the glossary');
    const total = await page.getByTestId('glossary-term').count();

    await search.fill('exudate');
    await expect(page.getByTestId('glossary-term').first()).toBeVisible();
    const narrowed = await page.getByTestId('glossary-term').count();
    expect(narrowed).toBeGreaterThan(0);
    expect(narrowed).toBeLessThan(total);
    await expect(page.getByTestId('term-count')).toHaveText(`${narrowed} of ${total} terms`);
    for (const card of await page.getByTestId('glossary-term').all()) {
      await expect(card).toContainText(/exudate/i);
    }
    await shot(page, 'glossary-search');

    await search.fill('zzzz-no-such-word');
    await expect(page.getByText('No term matches your search.')).toBeVisible();
    await expect(page.getByText('No data item matches your search.')).toBeVisible();

    await search.fill('');
    await expect(page.getByTestId('glossary-term')).toHaveCount(total);
  });
});
