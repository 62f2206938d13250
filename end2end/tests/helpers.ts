import { expect, Page } from '@playwright/test';

/** Waits until the wasm bundle has hydrated the page (App sets the marker). */
export async function hydrated(page: Page) {
  await expect(page.locator('body')).toHaveAttribute('data-hydrated', 'true');
}

/** Saves a full-page screenshot under end2end/test-results/screenshots. */
export async function shot(page: Page, name: string) {
  await page.screenshot({ path: `end2end/test-results/screenshots/${name}.png`, fullPage: true });
}

/** Collects console errors and failed requests so a test can assert there were none. */
export function watchConsole(page: Page): string[] {
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') problems.push(`${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  return problems;
}

/**
 * Signs in through the real form (works before hydration: a plain POST) and
 * waits until the app is back on `next` (default `/`).
 */
export async function login(page: Page, username: string, password: string, next = '/') {
  await page.goto(next === '/' ? '/login' : `/login?next=${encodeURIComponent(next)}`);
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page).toHaveURL((url) => url.pathname === next);
}

/**
 * Holds the wasm bundle back so the page stays server HTML (as on a slow connection)
 * until the returned function is called. Routing also bypasses the HTTP cache.
 */
export async function holdWasm(page: Page): Promise<() => void> {
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  await page.route('**/pkg/*.wasm', async (route) => {
    await held;
    await route.continue();
  });
  return release;
}
