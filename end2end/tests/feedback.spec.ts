import { expect, test } from '@playwright/test';
import { hydrated, login, shot, watchConsole } from './helpers';
import { askViaApi, createUser } from './accounts';

// Feedback on answers and clarification panels, the whole History (refused questions
// with their message, filterable) and the Analytics feedback figures (issue 15,
// points 3 and 7; issue 16's verified-question feedback).
const SHOTS = process.env.CLARION_SHOTS_DIR;

test.describe('Feedback', () => {
  test('thumbs down with a reason on an answer is confirmed; a panel question can be rated helpful', async ({ page }) => {
    const problems = watchConsole(page);
    const user = createUser('fb', 'Fiona Feedback', 'feedback-password-1');
    await login(page, user, 'feedback-password-1');
    await hydrated(page);

    // A live panel: "Was this question helpful?" answers in place, the panel stays open.
    const box = page.getByLabel('Your question');
    await box.fill('show me serious wounds');
    await box.press('Enter');
    const panel = page.getByTestId('clarification-panel');
    await expect(panel).toBeVisible();
    const rate = panel.locator('form.fb-r');
    await expect(rate).toContainText('Was this question helpful?');
    await rate.getByRole('button', { name: 'Yes' }).click();
    const frame = page.frameLocator('iframe[title="Feedback confirmation"]').last();
    await expect(frame.getByTestId('round-feedback-sent')).toHaveText('✓ Thanks — noted as helpful.');
    await expect(panel).toBeVisible();
    if (SHOTS) await rate.screenshot({ path: `${SHOTS}/loop-panel-helpful.png` });

    // Answer it, then vote thumbs down with a reason and a comment.
    await panel.getByTestId('clarification-option').filter({ hasText: 'Signs of infection at the latest assessment' }).click();
    await panel.getByRole('button', { name: 'Submit' }).click();
    const answer = page.getByTestId('answer');
    await expect(answer).toBeVisible();
    const form = answer.locator('form.fb');
    await expect(form).toContainText('Was this answer right?');
    const yes = form.getByRole('button', { name: '👍 Yes' });
    const no = form.getByRole('button', { name: '👎 No' });
    // "No" sits on the line of "Yes" (never wrapped under it), on a phone too.
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 800 });
      const [y, n] = [await yes.boundingBox(), await no.boundingBox()];
      expect(Math.abs(y!.y - n!.y)).toBeLessThan(4);
      expect(n!.x).toBeGreaterThan(y!.x + y!.width);
    }
    // Tall enough that the whole answer shows above the composer pinned to the bottom.
    await page.setViewportSize({ width: 1280, height: 1800 });
    await page.evaluate(() => window.scrollTo(0, 0));
    await shot(page, 'answer-feedback');
    if (SHOTS) await answer.screenshot({ path: `${SHOTS}/loop-answer-feedback.png` });
    await page.setViewportSize({ width: 1280, height: 800 });

    // Thumbs down: back on the thread, noted, with the optional reason and comment.
    await no.click();
    await expect(page).toHaveURL(/\/threads\/[0-9a-f]{32}\?feedback=down&answer=[0-9a-f]{32}$/);
    const reason = page.getByTestId('feedback-reason');
    await expect(reason).toContainText('Thanks — noted 👎. What was wrong?');
    await reason.getByLabel('Reason').selectOption('wrong_cohort');
    await reason.getByLabel(/^Comment/).fill('It counted healed wounds too.');
    await shot(page, 'answer-feedback-reason');
    if (SHOTS) await page.screenshot({ path: `${SHOTS}/loop-answer-feedback-reason.png`, clip: { x: 0, y: 0, width: 1280, height: 620 } });
    await reason.getByRole('button', { name: 'Send reason' }).click();
    await expect(page).toHaveURL(/\/threads\/[0-9a-f]{32}\?feedback=sent$/);
    await expect(page.getByTestId('feedback-sent')).toContainText('your feedback on the answer was saved');
    await expect(page.getByTestId('restored-answer').locator('form.fb')).toBeVisible();

    // Stored as sent (the API reads the same row).
    const hist = await (await page.request.get('/api/v1/history?limit=1')).json();
    const vote = await page.request.put(`/api/v1/history/${hist[0].id}/feedback`, {
      data: { rating: 'down', reason: 'wrong_cohort', comment: 'It counted healed wounds too.' },
    });
    expect(vote.status()).toBe(200);
    expect(problems).toEqual([]);
  });

  test('History lists a refused question with its message and filters by outcome', async ({ page }) => {
    const user = createUser('fbh', 'Hana History', 'feedback-password-2');
    await login(page, user, 'feedback-password-2', '/history');
    await askViaApi(page.request, 'How many open wounds are there by clinic?');
    const refused = await page.request.post('/api/v1/query', { data: { question: 'delete all wounds at Riverside' } });
    expect(refused.status()).toBe(422);
    const message = (await refused.json()).message as string;

    await page.goto('/history');
    const items = page.getByTestId('history-item');
    await expect(items).toHaveCount(2);
    const row = items.filter({ hasText: 'delete all wounds at Riverside' });
    await expect(row.getByTestId('history-status')).toHaveText('Refused');
    await expect(row.getByTestId('history-message')).toHaveText(message);
    await expect(row.getByRole('button', { name: /^Re-run/ })).toHaveCount(0);

    const filter = page.getByRole('navigation', { name: 'Show' });
    await filter.getByRole('link', { name: 'Refused' }).click();
    await expect(page).toHaveURL(/\/history\?show=refused$/);
    await expect(items).toHaveCount(1);
    await expect(items.getByTestId('history-message')).toHaveText(message);
    await shot(page, 'history-refused');
    await filter.getByRole('link', { name: 'Answered' }).click();
    await expect(items).toHaveCount(1);
    await expect(page.getByTestId('history-question')).toHaveText('How many open wounds are there by clinic?');
  });

  test('an administrator sees the feedback figures, and each verified question’s votes', async ({ page }) => {
    await login(page, 'admin', 'clarion-admin');
    const answer = await askViaApi(page.request, 'show me serious wounds', { pick: /^Infected/ });
    const down = await page.request.put(`/api/v1/history/${answer.history_id}/feedback`, {
      data: { rating: 'down', reason: 'too_many_questions' },
    });
    expect(down.status()).toBe(200);
    const clear = await askViaApi(page.request, 'How many open wounds are there by clinic?');
    expect((await page.request.put(`/api/v1/history/${clear.history_id}/feedback`, { data: { rating: 'up' } })).status()).toBe(200);
    const round = await (await page.request.post('/api/v1/query', { data: { question: 'show me serious wounds' } })).json();
    expect((await page.request.put(`/api/v1/clarifications/${round.clarification_id}/feedback`, { data: { helpful: false } })).status()).toBe(200);

    // A verified question, answered for someone and voted on.
    const name = `Open wounds by clinic ${Date.now()}`;
    const verified = await page.request.post('/api/v1/admin/verified', {
      data: { history_id: clear.history_id, name },
    });
    expect(verified.status()).toBe(201);
    const viaVerified = await askViaApi(page.request, 'How many open wounds are there by clinic?');
    expect(viaVerified.verified).toContain(name);
    expect((await page.request.put(`/api/v1/history/${viaVerified.history_id}/feedback`, { data: { rating: 'up' } })).status()).toBe(200);

    await page.goto('/analytics');
    await hydrated(page);
    const card = page.getByTestId('feedback-card');
    await expect(card).toBeVisible();
    expect(Number(await card.getByTestId('feedback-up').textContent())).toBeGreaterThanOrEqual(2);
    expect(Number(await card.getByTestId('feedback-down').textContent())).toBeGreaterThanOrEqual(1);
    await expect(card.getByTestId('feedback-ratio')).toHaveText(/^\d+%$/);
    await expect(card.getByTestId('feedback-helpful')).toHaveText(/^\d+ \/ [1-9]\d*$/);
    const tooMany = card.getByTestId('feedback-reasons').locator('li').filter({ hasText: 'Too many questions' });
    expect(Number(await tooMany.getByTestId('feedback-reason-count').textContent())).toBeGreaterThanOrEqual(1);
    const row = page.getByTestId('verified-uses').locator('tr').filter({ hasText: name });
    await expect(row.getByTestId('verified-up')).toHaveText('1');
    await expect(row.getByTestId('verified-down')).toHaveText('0');
    await shot(page, 'analytics-feedback');
    if (SHOTS) await card.screenshot({ path: `${SHOTS}/loop-analytics-feedback.png` });
    // Retired again: the other specs share this server and expect their own verified questions only.
    const id = (await verified.json()).id;
    expect((await page.request.delete(`/api/v1/admin/verified/${id}`)).status()).toBe(204);
  });
});
