import { expect, Page, test } from '@playwright/test';
import { hydrated, login, shot, watchConsole } from './helpers';

// The optional language model (F24, F28) in the browser. A second release server runs
// with CLARION_LLM_URL pointing at a local stand-in OpenAI-compatible endpoint
// (end2end/llm-stand-in.mjs, a separate process started by the Playwright config); the
// first server of the suite has no model. Everything but the endpoint is real.

const WITH_MODEL = `http://127.0.0.1:${Number(process.env.CLARION_E2E_LLM_PORT ?? 3124)}`;
const STAND_IN = `http://127.0.0.1:${Number(process.env.LLM_STAND_IN_PORT ?? 3125)}`;
const DEMO = ['demo', 'clarion-demo'] as const;

async function ask(page: Page, question: string) {
  const box = page.getByLabel('Your question');
  await box.fill(question);
  await box.press('Enter');
}

function panel(page: Page) {
  return page.getByTestId('clarification-panel').last();
}

test.describe('with a language model', () => {
  test.use({ baseURL: WITH_MODEL });

  test('an unknown word gets the model’s question, with counts, and its choice is marked on the answer', async ({
    page,
    request,
  }) => {
    const problems = watchConsole(page);
    await login(page, DEMO[0], DEMO[1]);
    await hydrated(page);
    await ask(page, 'list flubbery wounds');
    const p = panel(page);
    await expect(p).toBeVisible();
    await expect(p).toContainText('do you mean large or infected wounds?');
    // The round says it asked the model (model name, time, tokens).
    await expect(page.getByTestId('thinking').last()).toContainText('Asked the language model');
    const options = p.getByTestId('clarification-option');
    await expect(options.filter({ hasText: 'Infected' })).toBeVisible();
    // The model's options say where they come from and carry real counts.
    await expect(p.getByTestId('llm-badge').first()).toBeVisible();
    await expect(options.filter({ hasText: 'Infected' }).getByTestId('option-count')).toHaveText(/\d/);
    await shot(page, 'llm-question');
    await options.filter({ hasText: 'Infected' }).locator('input[type=radio]').check();
    await p.getByRole('button', { name: 'Submit' }).click();
    const answer = page.getByTestId('answer').last();
    await expect(answer).toBeVisible();
    const badge = answer.locator('[data-testid=assumption][data-source=LanguageModel]');
    await expect(badge.first()).toContainText('Infected');
    await shot(page, 'llm-answer');

    // What left the host: the question and the schema card, never rows or names.
    const sent = await (await request.get(`${STAND_IN}/requests`)).json();
    expect(sent.length).toBeGreaterThan(0);
    const text = JSON.stringify(sent);
    expect(text).toContain('flubbery');
    expect(text).not.toMatch(/SELECT|date_of_birth"\s*:\s*"\d/);
    expect(problems).toEqual([]);
  });

  test('an administrator sees the model calls per day on Analytics', async ({ page }) => {
    await login(page, 'admin', 'clarion-admin');
    // One call of the admin's own, so the day has at least one.
    const r = await page.request.post('/api/v1/query', { data: { question: 'list flubbery wounds' } });
    expect(r.status()).toBe(202);
    await page.goto('/analytics');
    await hydrated(page);
    const table = page.getByTestId('model-calls');
    await expect(table).toBeVisible();
    const total = table.locator('tbody tr').last();
    await expect(total).toContainText('All days');
    expect(Number(await total.locator('td').first().textContent())).toBeGreaterThanOrEqual(1);
    await expect(total.locator('td').nth(2)).toHaveText(/^\d*[1-9]\d*$/); // tokens reported
    await shot(page, 'llm-analytics');
  });

  test('an answer in your own words the engine cannot read is read by the model and shown before it runs', async ({
    page,
  }) => {
    await login(page, DEMO[0], DEMO[1]);
    await hydrated(page);
    await ask(page, 'show me serious wounds');
    const p = panel(page);
    await expect(p).toBeVisible();
    await p.getByTestId('own-words').first().fill('the ones that smell bad');
    await p.getByRole('button', { name: 'Submit' }).click();
    // Read back as a new, preselected option marked as the model's; nothing ran yet.
    const again = panel(page);
    // Shown as Clarion reads the typed piece it will run, marked as the model's reading.
    const proposed = again.getByTestId('clarification-option').filter({ has: page.getByTestId('llm-badge') });
    await expect(proposed).toHaveCount(1);
    await expect(proposed).toContainText(/infected/i);
    await expect(proposed.locator('input[type=radio]')).toBeChecked();
    await shot(page, 'llm-own-words');
    await again.getByRole('button', { name: 'Submit' }).click();
    await expect(page.getByTestId('answer').last()).toBeVisible();
  });
});

test.describe('without a language model', () => {
  test('an answer in your own words the engine cannot read gets an inline error and keeps the text', async ({
    page,
  }) => {
    await login(page, DEMO[0], DEMO[1]);
    await hydrated(page);
    await ask(page, 'show me serious wounds');
    const p = panel(page);
    await expect(p).toBeVisible();
    const field = p.getByTestId('own-words').first();
    await field.fill('the ones that smell bad');
    await p.getByRole('button', { name: 'Submit' }).click();
    await expect(p.getByTestId('custom-error').first()).toContainText("couldn't read");
    await expect(field).toHaveValue('the ones that smell bad');
    await expect(page.getByTestId('answer')).toHaveCount(0);
  });
});
