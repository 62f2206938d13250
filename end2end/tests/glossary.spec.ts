import { expect, test } from '@playwright/test';
import { holdWasm, hydrated, login, shot } from './helpers';

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

  test('a search typed before the page is live applies once it is', async ({ page }) => {
    const release = await holdWasm(page);
    await page.goto('/glossary');
    const total = await page.getByTestId('glossary-term').count();
    await page.getByLabel('Search the glossary').fill('exudate');
    release();
    await hydrated(page);
    const shown = page.getByTestId('glossary-term').filter({ visible: true });
    await expect(page.getByTestId('term-count')).toHaveText(new RegExp(`^\\d+ of ${total} terms$`));
    for (const card of await shown.all()) {
      await expect(card).toContainText(/exudate/i);
    }
  });

  test('search narrows terms and data items, and says when nothing matches', async ({ page }) => {
    await page.goto('/glossary');
    await hydrated(page);
    const search = page.getByLabel('Search the glossary');
    // Searching hides what does not match (the page is server HTML; only the box is live).
    const shownTerms = page.getByTestId('glossary-term').filter({ visible: true });
    const shownItems = page.getByTestId('glossary-entity').filter({ visible: true }).locator('tbody tr').filter({ visible: true });
    const total = await shownTerms.count();
    const totalItems = await shownItems.count();

    await search.fill('exudate');
    await expect(shownTerms.first()).toBeVisible();
    const narrowed = await shownTerms.count();
    expect(narrowed).toBeGreaterThan(0);
    expect(narrowed).toBeLessThan(total);
    await expect(page.getByTestId('term-count')).toHaveText(`${narrowed} of ${total} terms`);
    for (const card of await shownTerms.all()) {
      await expect(card).toContainText(/exudate/i);
    }
    // Data items narrow too: only rows that mention exudate stay, inside their entity.
    const items = await shownItems.count();
    expect(items).toBeGreaterThan(0);
    expect(items).toBeLessThan(totalItems);
    for (const row of await shownItems.all()) {
      await expect(row).toContainText(/exudate/i);
    }
    await expect(page.getByText('No term matches your search.')).toBeHidden();
    await shot(page, 'glossary-search');

    // An entity's own name keeps all of its items.
    await search.fill('clinic');
    await expect(page.getByTestId('glossary-entity').filter({ visible: true }).first()).toBeVisible();

    await search.fill('zzzz-no-such-word');
    await expect(page.getByText('No term matches your search.')).toBeVisible();
    await expect(page.getByText('No data item matches your search.')).toBeVisible();
    await expect(shownTerms).toHaveCount(0);
    await expect(page.getByTestId('term-count')).toHaveText(`0 of ${total} terms`);

    await search.fill('');
    await expect(shownTerms).toHaveCount(total);
    await expect(shownItems).toHaveCount(totalItems);
    await expect(page.getByTestId('term-count')).toHaveText(`${total} terms`);
    await expect(page.getByText('No term matches your search.')).toBeHidden();
  });
});
