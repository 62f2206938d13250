import { APIRequestContext, Browser, expect, Page, test } from '@playwright/test';
import { readFileSync } from 'fs';
import { holdWasm, hydrated, login, shot, watchConsole } from './helpers';

// The Ask page against the real server on the seeded demo data. Questions were chosen
// with `server ask` / the API: each reliably triggers the behaviour its test is about.
// `demo` (clinician) asks most questions; `admin` is used where a test changes
// settings or remembers a choice, so no other test sees the change.

const DEMO = ['demo', 'clarion-demo'] as const;
const ADMIN = ['admin', 'clarion-admin'] as const;
/** A clear question whose answer is a list longer than one page. */
const LONG_LIST = 'list open wounds at Lakeview';

async function open(page: Page, user: readonly [string, string] = DEMO) {
  await login(page, user[0], user[1]);
  await hydrated(page);
}

/** Types a question and presses Enter; returns the milliseconds until `until` is visible. */
async function askAndTime(page: Page, question: string, until: 'answer' | 'clarification-panel') {
  const box = page.getByLabel('Your question');
  await box.fill(question);
  const t0 = Date.now();
  await box.press('Enter');
  await expect(page.getByTestId(until).last()).toBeVisible();
  const ms = Date.now() - t0;
  console.log(`Enter → ${until} for "${question}": ${ms} ms`);
  return ms;
}

function panel(page: Page) {
  return page.getByTestId('clarification-panel');
}

async function setSensitivity(request: APIRequestContext, sensitivity: string) {
  const r = await request.put('/api/v1/settings', {
    data: { skip_clarifications: false, sensitivity },
  });
  expect(r.status()).toBe(200);
}

test.describe('Ask: answers', () => {
  test('text typed before the page is live is kept, and sent once it is', async ({ page }) => {
    await login(page, DEMO[0], DEMO[1]);
    // Hold the wasm back: the page stays server HTML while the clinician types.
    const release = await holdWasm(page);
    await page.goto('/');
    const box = page.getByLabel('Your question');
    const question = 'How many open wounds are there by clinic?';
    await box.fill(question);
    await expect(page.locator('body')).not.toHaveAttribute('data-hydrated', 'true');
    release();
    await hydrated(page);
    await expect(box).toHaveValue(question);
    await expect(page.getByRole('button', { name: 'Send' })).toBeEnabled();
    await box.press('Enter');
    await expect(page.getByTestId('answer')).toBeVisible();
    await expect(page.getByTestId('exchange-question')).toHaveText(question);
  });

  test('a clear question is answered with a table, a bar chart, the SQL and follow-ups', async ({ page }) => {
    const problems = watchConsole(page);
    await open(page);
    await askAndTime(page, 'How many open wounds are there by clinic?', 'answer');
    const answer = page.getByTestId('answer');
    await expect(answer.getByTestId('restatement')).toHaveText('Counting wounds with status Open, by clinic.');
    await expect(answer.getByTestId('row-count')).toHaveText('12 rows');
    await expect(answer.locator('tbody tr')).toHaveCount(12);
    // numbers right-aligned
    await expect(answer.locator('tbody tr').first().locator('td').last()).toHaveClass(/text-right/);
    const chart = answer.getByTestId('chart');
    await expect(chart.getByRole('img')).toBeVisible();
    await expect(chart.locator('rect')).toHaveCount(12);
    // which clinic groups the wounds (treating, or the patient's registered one) is shown,
    // changeable, rather than settled silently
    await expect(answer.getByTestId('assumption').filter({ hasText: 'The clinic treating the wound' })).toHaveCount(1);
    await expect(answer.getByTestId('confidence')).toContainText('Moderate confidence');
    const sql = answer.getByTestId('sql');
    await expect(sql).not.toHaveAttribute('open', '');
    await sql.locator('summary').click();
    await expect(sql.locator('pre')).toContainText('SELECT');
    await expect(answer.getByRole('link', { name: 'Download CSV' })).toBeVisible();
    const pills = answer.getByTestId('suggestion');
    expect(await pills.count()).toBeGreaterThanOrEqual(2);
    expect(await pills.count()).toBeLessThanOrEqual(3);
    // The thread is addressable now.
    await expect(page).toHaveURL(/\/threads\/[0-9a-f]{32}$/);
    await shot(page, 'ask-answer');
    await page.setViewportSize({ width: 768, height: 1024 });
    await shot(page, 'ask-answer-tablet');
    expect(problems).toEqual([]);
  });

  test('long results page by 50 and the CSV download holds every row', async ({ page }) => {
    await open(page);
    await askAndTime(page, LONG_LIST, 'answer');
    const answer = page.getByTestId('answer');
    const range = answer.getByTestId('row-range');
    await expect(range).toContainText(/^Rows 1–50 of [\d,]+/);
    const total = Number((await range.textContent())!.match(/of ([\d,]+)/)![1].replace(/,/g, ''));
    expect(total).toBeGreaterThan(50);
    await expect(answer.getByTestId('row-count')).toHaveText(`${total.toLocaleString('en-US')} rows`);
    await expect(answer.locator('tbody tr')).toHaveCount(50);
    await expect(answer.getByRole('button', { name: 'Previous' })).toBeDisabled();
    await answer.getByRole('button', { name: 'Next' }).click();
    const to = Math.min(100, total);
    await expect(range).toContainText(`Rows 51–${to} of`);
    await expect(answer.locator('tbody tr')).toHaveCount(to - 50);
    await shot(page, 'ask-paged');
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      answer.getByRole('link', { name: 'Download CSV' }).click(),
    ]);
    expect(download.suggestedFilename()).toMatch(/^clarion-[0-9a-f]+\.csv$/);
    const text = readFileSync((await download.path())!, 'utf8');
    const lines = text.split('\r\n').filter((l) => l.length > 0);
    expect(lines).toHaveLength(total + 1);
    // The header names the table's columns.
    const headers = await answer.locator('thead th').allInnerTexts();
    expect(lines[0].toLowerCase()).toBe(headers.map((h) => h.trim().toLowerCase()).join(','));
  });

  test('an extreme said for each record is one row per record, its unit said once', async ({ page }) => {
    await open(page);
    await askAndTime(page, "each open VLU's highest pain score ever", 'answer');
    const answer = page.getByTestId('answer');
    await expect(answer.getByTestId('restatement')).toContainText('by wound id');
    const headers = (await answer.locator('thead th').allInnerTexts()).map((h) => h.trim().toLowerCase());
    expect(headers[0]).toContain('wound id');
    const metric = headers.find((h) => h.includes('pain score'));
    expect(metric).toBeDefined();
    // the label already ends with the unit: it is not said twice
    expect(metric!.match(/\(points\)/g)).toHaveLength(1);
    // one row per open venous leg ulcer, more than one page of them
    await expect(answer.getByTestId('row-range')).toContainText(/^Rows 1–50 of [\d,]+/);
    await shot(page, 'ask-each-record');
  });

  test('a trend is drawn as a line', async ({ page }) => {
    await open(page);
    await askAndTime(page, 'trend of new wounds per month', 'answer');
    const answer = page.getByTestId('answer');
    await expect(answer.getByTestId('chart').locator('polyline')).toBeVisible();
    await expect(answer.getByTestId('assumption')).toContainText(['trend = Last 12 months']);
  });

  test('a refused question shows why and keeps the text in the composer', async ({ page }) => {
    await open(page);
    const box = page.getByLabel('Your question');
    await box.fill('delete all wounds');
    await box.press('Enter');
    await expect(page.getByTestId('ask-error')).toContainText("I can't change or delete data");
    await expect(box).toHaveValue('delete all wounds');
    await expect(page.getByTestId('exchange')).toHaveCount(0);
  });

  test('a suggestion pill puts its text in the composer and sends it', async ({ page }) => {
    await open(page);
    await askAndTime(page, 'How many open wounds are there by clinic?', 'answer');
    const pill = page.getByTestId('suggestion').first();
    const text = (await pill.textContent())!.trim();
    await pill.click();
    await expect(page.getByTestId('exchange-question')).toHaveText([
      'How many open wounds are there by clinic?',
      text,
    ]);
    await expect(page.getByTestId('exchange').nth(1).getByTestId('answer')).toBeVisible();
    await shot(page, 'ask-follow-up');
  });
});

test.describe('Clarification panel', () => {
  test('an ambiguous question opens the panel; the chosen option’s count is the answer’s row count', async ({ page }) => {
    const problems = watchConsole(page);
    await open(page);
    await askAndTime(page, 'show me serious wounds', 'clarification-panel');
    const p = panel(page);
    await expect(p).toBeFocused();
    await expect(p.getByRole('heading', { name: 'A quick question before I answer' })).toBeVisible();
    await expect(p.getByTestId('understood-so-far')).not.toBeEmpty();
    // a wrong guess about "serious" changes the cohort: the question says so
    await expect(p.getByTestId('question-priority')).toHaveText('critical');
    await expect(p.getByTestId('question-priority')).toHaveCSS('text-transform', 'capitalize');
    await expect(p).toContainText('It looks like you mean Full-thickness depth — is that right?');
    // Nothing (the composer pinned to the bottom) covers the panel's Submit when it sits
    // at the bottom edge of the view.
    const submitButton = p.getByRole('button', { name: 'Submit' });
    await submitButton.evaluate((el) => el.scrollIntoView({ block: 'end' }));
    const hit = await submitButton.evaluate((el) => {
      const r = el.getBoundingClientRect();
      return document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2)?.closest('button') === el;
    });
    expect(hit).toBe(true);
    const best = p.getByRole('radio', { name: /Full-thickness depth/ });
    await expect(best).toBeChecked();
    await expect(p.getByTestId('clarification-option').filter({ hasText: 'Full-thickness depth' })).toContainText('Best guess');
    const infected = p.getByTestId('clarification-option').filter({ hasText: 'Signs of infection at the latest assessment' });
    const countText = (await infected.getByTestId('option-count').textContent())!; // "36 wounds"
    const count = Number(countText.replace(/[^0-9]/g, ''));
    const fullText = (await p.getByTestId('clarification-option').filter({ hasText: 'Full-thickness depth' }).getByTestId('option-count').textContent())!;
    const fullCount = Number(fullText.replace(/[^0-9]/g, ''));
    expect(countText).toMatch(/^[\d,]+ wounds?$/);
    await expect(p.getByRole('button', { name: 'Submit' })).toBeEnabled();
    await shot(page, 'ask-panel');
    await page.setViewportSize({ width: 768, height: 1024 });
    await shot(page, 'ask-panel-tablet');
    await page.setViewportSize({ width: 1280, height: 800 });

    await infected.click();
    await p.getByRole('button', { name: 'Submit' }).click();
    const answer = page.getByTestId('answer');
    await expect(answer).toBeVisible();
    await expect(answer.getByTestId('row-count')).toHaveText(count === 1 ? '1 row' : `${count} rows`);
    // the one assumption left is the status scope (any status, or open wounds only)
    await expect(answer.locator('[data-testid=assumption][data-source=Default]')).toHaveCount(1);
    await expect(answer.locator('[data-testid=assumption][data-source=Default]')).toContainText('Any status');
    // the choice itself is a badge: changed on the answer, with each option's count (F29)
    const choice = answer.locator('[data-testid=assumption][data-source=Chosen]');
    await expect(choice).toContainText('You chose: serious = Infected');
    await shot(page, 'ask-panel-answer');
    await choice.getByRole('button').click();
    const full = choice.getByTestId('assumption-option').filter({ hasText: 'Full-thickness depth' });
    await expect(full).toContainText(fullText);
    await shot(page, 'ask-chosen-badge-open');
    await full.click();
    const revised = page.getByTestId('answer').last();
    await expect(revised.locator('[data-testid=assumption][data-source=Chosen]')).toContainText('serious = Full-thickness depth');
    // (an answer lists at most 1,000 rows)
    const listed = Math.min(fullCount, 1000);
    await expect(revised.getByTestId('row-count')).toHaveText(listed === 1 ? '1 row' : `${listed.toLocaleString('en-US')} rows`);
    expect(problems).toEqual([]);
  });

  test('"patients with large wounds" is asked, not guessed: best guess preselected, a count per reading', async ({ page }) => {
    await open(page);
    await askAndTime(page, 'patients with large wounds', 'clarification-panel');
    const p = panel(page);
    // not critical, but each reading is another cohort: an important question
    await expect(p.getByTestId('question-priority')).toHaveText('important');
    await expect(p.getByRole('radio', { name: /Larger than 10 cm²/ }).first()).toBeChecked();
    const counts = await p.getByTestId('option-count').allTextContents();
    expect(counts.length).toBeGreaterThanOrEqual(3);
    for (const c of counts) expect(c).toMatch(/^[\d,]+ (patients?|wounds?)$/);
    // the readings really differ: not every option matches the same records
    expect(new Set(counts).size).toBeGreaterThan(1);
    await shot(page, 'ask-large-wounds-panel');
  });

  test('a bad custom value gets an inline error and the round stays answerable', async ({ page }) => {
    await open(page);
    await askAndTime(page, 'show me wounds larger than average', 'clarification-panel');
    const p = panel(page);
    const custom = p.getByLabel('Another value', { exact: true }).and(p.getByRole('textbox'));
    await custom.fill('quite big');
    await expect(p.getByRole('radio', { name: 'Another value' })).toBeChecked();
    await p.getByRole('button', { name: 'Submit' }).click();
    await expect(p.getByTestId('custom-error').first()).toContainText('"quite big" is not a number');
    await expect(custom).toHaveValue('quite big');
    await expect(custom).toHaveAttribute('aria-invalid', 'true');
    await shot(page, 'ask-custom-error');
    await custom.fill('15');
    await p.getByRole('button', { name: 'Submit' }).click();
    await expect(page.getByTestId('restatement')).toContainText('15 cm²');
  });

  test('"I don\'t know" applies the best guess and shows it as an assumption badge', async ({ page }) => {
    await open(page);
    await askAndTime(page, 'show me serious wounds', 'clarification-panel');
    const p = panel(page);
    await p.getByRole('radio', { name: "I don't know — use your best judgment" }).check();
    await p.getByRole('button', { name: 'Submit' }).click();
    const badges = page.getByTestId('answer').getByTestId('assumption');
    await expect(badges).toHaveCount(2);
    await expect(badges.filter({ hasText: 'Any status' })).toHaveCount(1);
    const badge = badges.filter({ hasText: 'serious' });
    await expect(badge).toHaveCount(1);
    await expect(badge).toContainText('serious = Full-thickness depth');
    await expect(badge).toHaveAttribute('data-source', 'Default');
  });

  test('a word Clarion does not know is asked about, never dropped', async ({ page }) => {
    await open(page);
    await askAndTime(page, 'show me the stalling wounds', 'clarification-panel');
    const p = panel(page);
    await expect(p).toContainText('I don\'t know what "stalling" means for wounds');
    const ignore = p.getByRole('radio', { name: /Ignore this word/ });
    await expect(ignore).toBeChecked();
    // the nearest dictionary word is offered too, with its count
    await expect(p.getByTestId('clarification-option').filter({ hasText: 'stalled' })).toHaveCount(1);
    await shot(page, 'ask-unknown-word');
    await p.getByRole('button', { name: 'Submit' }).click();
    const answer = page.getByTestId('answer');
    await expect(answer).toBeVisible();
    await expect(answer.locator('[data-testid=assumption][data-source=Chosen]')).toContainText('You chose: stalling');
    await shot(page, 'ask-unknown-word-answer');
  });

  test('an unknown word offers what words about those records usually mean; the pick is applied', async ({ page }) => {
    await open(page);
    await askAndTime(page, 'list the crusty VLUs', 'clarification-panel');
    const p = panel(page);
    await expect(p).toContainText('I don\'t know what "crusty" means for wounds');
    // nothing is spelled like it: leaving it out stays the best guess
    await expect(p.getByRole('radio', { name: /Ignore this word/ })).toBeChecked();
    const sloughy = p.getByTestId('clarification-option').filter({ hasText: '"sloughy"' });
    await expect(sloughy).toHaveCount(1);
    await expect(p.getByTestId('clarification-option').filter({ hasText: '"necrotic"' })).toHaveCount(1);
    const countText = (await sloughy.getByTestId('option-count').textContent())!;
    const count = Number(countText.replace(/[^0-9]/g, ''));
    expect(count).toBeGreaterThan(0);
    await shot(page, 'ask-unknown-word-terms');
    await sloughy.click();
    await p.getByRole('button', { name: 'Submit' }).click();
    const answer = page.getByTestId('answer');
    await expect(answer).toBeVisible();
    await expect(answer.getByTestId('row-count')).toHaveText(count === 1 ? '1 row' : `${count.toLocaleString('en-US')} rows`);
    await expect(answer.locator('[data-testid=assumption][data-source=Chosen]')).toContainText('crusty');
  });

  test('two counts of the same records under different conditions are two columns, restated as such', async ({ page }) => {
    await open(page);
    await askAndTime(page, 'one row per etiology with the number of open wounds and the number of healed wounds', 'answer');
    const answer = page.getByTestId('answer');
    await expect(answer).toContainText('Counting open wounds and healed wounds');
    await expect(answer.getByRole('columnheader', { name: 'Open wounds' })).toBeVisible();
    await expect(answer.getByRole('columnheader', { name: 'Healed wounds' })).toBeVisible();
    // one row per etiology of the demo data, each with both figures
    const rows = answer.getByRole('row');
    await expect(rows.nth(1).getByRole('cell')).toHaveCount(3);
  });

  test('two figures side by side are both charted: a bar each per group, a legend, a name saying both', async ({ page }) => {
    await open(page);
    await askAndTime(page, 'one row per etiology with the number of open wounds and the number of healed wounds', 'answer');
    const answer = page.getByTestId('answer');
    const rows = answer.locator('tbody tr');
    await expect(rows.first()).toBeVisible();
    const groups = await rows.count();
    expect(groups).toBeGreaterThanOrEqual(2);
    // the headers as the table shows them (textContent: the header row is uppercased by CSS)
    const headers = (await answer.locator('thead th').allTextContents()).map((h) => h.trim());
    expect(headers.slice(1)).toEqual(['Open wounds', 'Healed wounds']);
    const chart = answer.getByTestId('chart');
    const img = chart.getByRole('img');
    await expect(img).toHaveAccessibleName(/^Open wounds and healed wounds by /);
    await expect(chart.locator('figcaption')).toHaveText(/^Open wounds and healed wounds by /);
    await expect(chart.getByTestId('chart-legend').getByTestId('chart-legend-item')).toHaveText(headers.slice(1));
    // one bar per figure in every group
    await expect(img.locator('rect')).toHaveCount(2 * groups);
    // each bar's tooltip says its group, its figure and the value the table shows
    const cells = (await rows.first().locator('td').allTextContents()).map((c) => c.trim());
    await expect(img.locator('rect > title').nth(0)).toHaveText(`${cells[0]} — Open wounds: ${cells[1]}`);
    await expect(img.locator('rect > title').nth(1)).toHaveText(`${cells[0]} — Healed wounds: ${cells[2]}`);
    await shot(page, 'ask-two-figures-chart');
  });

  test('a key after "then by" is said in the restatement and the list keeps every row', async ({ page }) => {
    await open(page);
    await askAndTime(page, 'list the open wounds sorted by onset date, oldest first, then by wound id', 'answer');
    const answer = page.getByTestId('answer');
    await expect(answer).toContainText('sorted by onset date, oldest first, then by id, lowest first');
    await expect(answer).not.toContainText('Counting');
  });

  test('an average of a measurement is answered with the mean shown as an assumption', async ({ page }) => {
    await open(page);
    await askAndTime(page, 'avg bmi of pts with diabetes', 'answer');
    const answer = page.getByTestId('answer');
    const badge = answer.locator('[data-testid=assumption][data-source=Default]').filter({ hasText: 'Mean' });
    await expect(badge).toHaveCount(1);
    await badge.getByRole('button').click();
    await badge.getByTestId('assumption-option').filter({ hasText: 'Median' }).click();
    const revised = page.getByTestId('answer').last();
    await expect(revised.locator('[data-testid=assumption][data-source=Chosen]')).toContainText('Median');
    await expect(revised).toContainText('Median bmi');
  });

  test('"stage" of pressure injuries is a badge for their stage, the depth a click away', async ({ page }) => {
    await open(page);
    await askAndTime(page, 'stage breakdown for open PIs', 'answer');
    const answer = page.getByTestId('answer');
    await expect(panel(page)).toHaveCount(0);
    const badge = answer.locator('[data-testid=assumption][data-source=Default]').filter({ hasText: 'Pressure-injury stage' });
    await expect(badge).toHaveCount(1);
    await badge.getByRole('button').click();
    await expect(badge.getByTestId('assumption-option').filter({ hasText: 'Depth category' })).toBeVisible();
  });

  test('a clinic name one typo off is answered as that clinic, with a badge to undo it', async ({ page }) => {
    await open(page);
    await askAndTime(page, 'open wounds at lakeveiw', 'answer');
    const answer = page.getByTestId('answer');
    await expect(panel(page)).toHaveCount(0);
    await expect(answer.getByTestId('restatement')).toContainText('Lakeview Community Wound Care');
    const badge = answer.locator('[data-testid=assumption]').filter({ hasText: 'lakeveiw' });
    await expect(badge).toHaveCount(1);
    await badge.getByRole('button').click();
    await expect(badge.getByTestId('assumption-option').filter({ hasText: 'Leave "lakeveiw" out' })).toBeVisible();
  });

  test('counts of records named by values are columns side by side', async ({ page }) => {
    await open(page);
    await askAndTime(page, 'one row per mobility level with the number of smokers and the number of non-smokers', 'answer');
    const answer = page.getByTestId('answer');
    await expect(answer.getByTestId('restatement')).toContainText('Counting smokers and non-smokers by mobility');
    const headers = (await answer.locator('thead th').allTextContents()).map((h) => h.trim());
    expect(headers.slice(1)).toEqual(['Smokers', 'Non-smokers']);
    const rows = answer.locator('tbody tr');
    expect(await rows.count()).toBeGreaterThanOrEqual(2);
    // every mobility level has both figures (had been 0 rows: patients both and neither)
    const first = (await rows.first().locator('td').allTextContents()).map((c) => Number(c.trim().replace(/,/g, '')));
    expect(first[1] + first[2]).toBeGreaterThan(0);
  });

  test('ties at the cut are kept when the question says so, and only then', async ({ page }) => {
    await open(page);
    const figures = async () => {
      const answer = page.getByTestId('answer').last();
      const rows = answer.locator('tbody tr');
      const out: number[] = [];
      for (let i = 0; i < (await rows.count()); i++) {
        const cells = (await rows.nth(i).locator('td').allTextContents()).map((c) => c.trim());
        out.push(Number(cells[1].replace(/,/g, '')));
      }
      return out;
    };
    await askAndTime(page, 'the 3 patients with the most wounds', 'answer');
    expect(await figures()).toHaveLength(3);
    // the cut falls inside a tie (many patients have the most wounds): said, not silent
    await expect(page.getByTestId('answer').last().getByTestId('answer-notice')).toContainText(
      'tie with the last one shown',
    );
    await askAndTime(page, 'the 3 patients with the most wounds, ties included', 'answer');
    await expect(page.getByTestId('answer')).toHaveCount(2);
    const answer = page.getByTestId('answer').last();
    await expect(answer.getByTestId('restatement')).toContainText('and any tied with the last one');
    const tied = await figures();
    expect(tied.length).toBeGreaterThanOrEqual(3);
    // every row after the third ties with it, and the order holds
    for (const f of tied.slice(3)) expect(f).toBe(tied[2]);
    await expect(answer.getByTestId('answer-notice')).toHaveCount(0);
    for (let i = 1; i < tied.length; i++) expect(tied[i]).toBeLessThanOrEqual(tied[i - 1]);
  });

  test('a change asked in words is refused as read-only, and the text is kept', async ({ page }) => {
    await open(page);
    const box = page.getByLabel('Your question');
    await box.fill('mark wound 12 as healed');
    await box.press('Enter');
    await expect(page.getByTestId('ask-error')).toContainText("I can't change or delete data");
    await expect(page.getByTestId('exchange')).toHaveCount(0);
    await expect(box).toHaveValue('mark wound 12 as healed');
  });

  test('Cancel and Escape close the panel without running anything', async ({ page }) => {
    await open(page);
    await askAndTime(page, 'show me serious wounds', 'clarification-panel');
    await page.keyboard.press('Escape');
    await expect(panel(page)).toHaveCount(0);
    await expect(page.getByTestId('cancelled')).toBeVisible();
    await expect(page.getByLabel('Your question')).toBeFocused();
  });

  // FIXME(issue 6): a focus assertion fails in the release build; written but not yet passing.
  test('keyboard only: Enter, arrow keys in the radio group, Tab to Submit', async ({ page }) => {
    await open(page);
    const box = page.getByLabel('Your question');
    await box.focus();
    await page.keyboard.type('show me serious wounds');
    await page.keyboard.press('Enter');
    const p = panel(page);
    await expect(p).toBeFocused();
    await page.keyboard.press('Tab');
    await expect(p.getByRole('radio', { name: /Full-thickness depth/ })).toBeFocused();
    await page.keyboard.press('ArrowDown');
    const infected = p.getByRole('radio', { name: /^Infected/ });
    await expect(infected).toBeChecked();
    await expect(infected).toBeFocused();
    const submit = p.getByRole('button', { name: 'Submit' });
    for (let i = 0; i < 12; i++) {
      if (await submit.evaluate((el) => el === document.activeElement)) break;
      await page.keyboard.press('Tab');
    }
    await expect(submit).toBeFocused();
    await shot(page, 'ask-panel-keyboard');
    await page.keyboard.press('Enter');
    await expect(page.getByTestId('answer')).toBeVisible();
    await expect(page.locator('[data-testid=assumption][data-source=Chosen]')).toContainText('serious = Infected');
    await expect(box).toBeFocused();
  });

  test('a second round says "One more question", then Clarion answers', async ({ page }) => {
    await open(page, ADMIN);
    try {
      await setSensitivity(page.request, 'balanced');
      await askAndTime(page, 'trend of serious wounds', 'clarification-panel');
      // "More questions" before answering round 1 makes the trend's period a new question.
      await setSensitivity(page.request, 'more');
      await panel(page).getByRole('button', { name: 'Submit' }).click();
      const p = panel(page);
      await expect(p.getByRole('heading', { name: 'One more question' })).toBeVisible();
      await expect(p).toContainText('Round 2 of 2');
      await expect(p).toBeFocused();
      await expect(p.getByTestId('understood-so-far')).toContainText(/full.thickness/i);
      await shot(page, 'ask-round-2');
      await p.getByRole('button', { name: 'Submit' }).click();
      const answer = page.getByTestId('answer');
      await expect(answer).toBeVisible();
      await expect(answer.getByTestId('chart').locator('polyline')).toBeVisible();
    } finally {
      await setSensitivity(page.request, 'balanced');
    }
  });

  test('remember my choice: the next question is resolved with a saved-definition badge', async ({ page }) => {
    await open(page, ADMIN);
    try {
      await askAndTime(page, 'show me serious wounds', 'clarification-panel');
      const p = panel(page);
      await p.getByRole('radio', { name: /^Infected/ }).check();
      await p.getByLabel('Remember my choice').check();
      await p.getByRole('button', { name: 'Submit' }).click();
      await expect(page.getByTestId('answer')).toBeVisible();

      await askAndTime(page, 'how many serious wounds are there', 'answer');
      await expect(panel(page)).toHaveCount(0);
      const badge = page
        .getByTestId('exchange')
        .last()
        .getByTestId('assumption')
        .filter({ hasText: 'Your saved definition' });
      await expect(badge).toHaveCount(1);
      await expect(badge).toContainText('serious = Infected');
      await expect(badge).toHaveAttribute('data-source', 'SavedDefinition');
      // a saved definition is changeable on the answer like any assumption
      const change = badge.getByRole('button', { name: /serious = Infected/ });
      await change.click();
      await expect(change).toHaveAttribute('aria-expanded', 'true');
      await expect(badge.getByTestId('assumption-option').filter({ hasText: 'Full-thickness depth' })).toBeVisible();
      await shot(page, 'ask-saved-definition');
    } finally {
      const prefs = await (await page.request.get('/api/v1/preferences')).json();
      for (const pref of prefs) await page.request.delete(`/api/v1/preferences/${pref.id}`);
    }
  });

  test('editing an assumption re-runs and keeps the other choices', async ({ page }) => {
    await open(page);
    await askAndTime(page, 'show me infected wounds in elderly patients', 'clarification-panel');
    const p = panel(page);
    await p.getByRole('radio', { name: /Ever diagnosed with an infection/ }).check();
    await p.getByRole('button', { name: 'Submit' }).click();
    const answer = page.getByTestId('answer');
    await expect(answer.getByTestId('restatement')).toContainText('infected: yes');
    await expect(answer.getByTestId('restatement')).toContainText('age ≥ 65');
    const badge = answer.getByRole('button', { name: /elderly = 65 or older/ });
    await badge.click();
    await expect(badge).toHaveAttribute('aria-expanded', 'true');
    await shot(page, 'ask-assumption-open');
    await answer.getByTestId('assumption-option').filter({ hasText: '75 or older' }).click();
    await expect(answer.getByTestId('restatement')).toContainText('age ≥ 75');
    // the clarified choice ("ever infected") is kept
    await expect(answer.getByTestId('restatement')).toContainText('infected: yes');
    await expect(answer.getByTestId('restatement')).not.toContainText('latest infection signs');
  });
});

test.describe('Threads', () => {
  async function newUserPage(browser: Browser, user: readonly [string, string]) {
    const ctx = await browser.newContext();
    const page = await ctx.newPage();
    await open(page, user);
    return page;
  }

  test('a thread survives a reload; another user gets not-found', async ({ page, browser }) => {
    await open(page);
    await askAndTime(page, 'How many open wounds are there by clinic?', 'answer');
    await expect(page).toHaveURL(/\/threads\/[0-9a-f]{32}$/);
    const url = page.url();
    const firstRow = await page.getByTestId('answer').locator('tbody tr').first().locator('td').allInnerTexts();
    // The rows and chart as they were shown come back with the thread, in the server's
    // HTML; opening it runs nothing (server/tests/http.rs checks the audit log).
    const html = await (await page.request.get(url)).text();
    expect(html).toContain('Rows as they were when asked');
    await page.reload();
    await expect(page.getByTestId('exchange-question')).toHaveText(['How many open wounds are there by clinic?']);
    await expect(page.getByTestId('restatement')).toHaveText('Counting wounds with status Open, by clinic.');
    const restored = page.getByTestId('restored-answer');
    await expect(restored.getByTestId('rows-note')).toContainText('Rows as they were when asked');
    await expect(restored.getByTestId('chart').locator('rect')).toHaveCount(12);
    await expect(restored.locator('tbody tr')).toHaveCount(12);
    expect(await restored.locator('tbody tr').first().locator('td').allInnerTexts()).toEqual(firstRow);
    await hydrated(page);
    // Running it again is explicit: today's rows, and one more audited statement.
    await restored.getByTestId('run-again').click();
    await expect(restored.getByTestId('rows-note')).toContainText('Rows as of now (12)');
    await expect(restored.locator('tbody tr')).toHaveCount(12);
    // A follow-up goes into the same thread.
    await askAndTime(page, 'only the diabetic ones', 'clarification-panel');
    await panel(page).getByRole('button', { name: 'Submit' }).click();
    await expect(page.getByTestId('answer')).toBeVisible();
    await expect(page.getByTestId('answer').getByTestId('restatement')).toContainText('Diabetic foot ulcer');
    await expect(page).toHaveURL(url);
    await shot(page, 'ask-thread-reloaded');

    const other = await newUserPage(browser, ADMIN);
    await other.goto(url);
    await expect(other.getByTestId('thread-not-found')).toBeVisible();
    await expect(other.getByText('How many open wounds are there by clinic?')).toHaveCount(0);
    await shot(other, 'ask-thread-not-found');
    await other.context().close();
  });
});
