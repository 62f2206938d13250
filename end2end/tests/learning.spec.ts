import { expect, test } from '@playwright/test';
import { hydrated, login, shot, watchConsole } from './helpers';
import { askViaApi, createUser } from './accounts';

// Learning by the documented rule (issue 15, point 4): an answer given three times for
// the same word, once approved, is applied without asking as "your usual definition",
// and stays changeable on the answer.
test.describe('Learning', () => {
  test('an answer given three times and approved is applied as your usual definition', async ({ page }) => {
    const problems = watchConsole(page);
    const user = createUser('usual', 'Uma Usual', 'usual-password-12');
    await login(page, user, 'usual-password-12');
    await hydrated(page);

    let last: any;
    for (let i = 0; i < 3; i++) {
      last = await askViaApi(page.request, 'show me serious wounds', { pick: /^Stage 3\/4/ });
    }
    // Three times but never approved: preselected, still asked.
    const asked = await page.request.post('/api/v1/query', { data: { question: 'how many serious wounds are there' } });
    expect(asked.status()).toBe(202);
    const round = await asked.json();
    const serious = round.questions.find((q: any) => q.id === 'term:serious@wounds');
    expect(serious.options.find((o: any) => o.default).label).toMatch(/^Stage 3\/4/);
    expect((await page.request.post('/api/v1/query/cancel', { data: { clarification_id: round.clarification_id } })).status()).toBe(204);

    // A thumbs-up on one of those answers: now it is the usual definition.
    const up = await page.request.put(`/api/v1/history/${last.history_id}/feedback`, { data: { rating: 'up' } });
    expect(up.ok()).toBeTruthy();

    const box = page.getByLabel('Your question');
    await box.fill('how many serious wounds are there');
    await box.press('Enter');
    const answer = page.getByTestId('answer');
    await expect(answer).toBeVisible();
    await expect(page.getByTestId('clarification-panel')).toHaveCount(0);
    const badge = answer.locator('[data-testid=assumption][data-source=UsualDefinition]');
    await expect(badge).toContainText('Your usual definition: serious = Stage 3/4');
    // changeable like any assumption
    await badge.getByRole('button').click();
    await expect(badge.getByRole('button', { name: /^Infected/ })).toBeVisible();
    await shot(page, 'ask-usual-definition');

    await page.goto('/settings');
    await expect(page.getByTestId('remembered-choice').filter({ hasText: 'Stage 3/4' })).toContainText('Your usual definition');
    expect(problems).toEqual([]);
  });
});
