import { execFileSync } from 'child_process';
import { APIRequestContext, expect } from '@playwright/test';
import * as path from 'path';

/** The workspace root (the server runs from there, on end2end/.tmp). */
const ROOT = path.resolve(__dirname, '..', '..');

/**
 * Creates an account of its own for a test, through the real command line on the
 * test server's database, so what the test changes (settings, password, history)
 * is seen by no other test. Names are unique per run.
 */
export function createUser(prefix: string, name: string, password: string, admin = false): string {
  const username = `${prefix}-${Date.now().toString(36)}${Math.floor(Math.random() * 1e4)}`;
  const args = ['user', 'add', '--username', username, '--name', name];
  if (admin) args.push('--admin');
  const server = process.env.CLARION_E2E_SERVER ?? path.join(ROOT, 'target', 'clarion-server');
  const dataDir = process.env.CLARION_E2E_DATA_DIR ?? 'end2end/.tmp';
  execFileSync(server, args, {
    cwd: ROOT,
    env: { ...process.env, CLARION_DATA_DIR: dataDir, RUST_LOG: 'warn' },
    input: `${password}\n`,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  return username;
}

/**
 * Asks a question through the JSON API (the page's session cookie signs it in) and,
 * when Clarion asks back, answers every question with `pick` (an option label
 * pattern) or the best guess. Returns the final answer.
 */
export async function askViaApi(
  request: APIRequestContext,
  question: string,
  opts: { pick?: RegExp; remember?: boolean } = {},
) {
  const r = await request.post('/api/v1/query', { data: { question } });
  expect([200, 202]).toContain(r.status());
  let body = await r.json();
  for (let round = 0; body.status === 'needs_clarification' && round < 3; round++) {
    const answers = body.questions.map((q: any) => {
      const chosen = (opts.pick && q.options.find((o: any) => opts.pick!.test(o.label))) ||
        q.options.find((o: any) => o.default);
      return { question_id: q.id, option_id: chosen.id, remember: opts.remember ?? false };
    });
    const c = await request.post('/api/v1/query/clarify', {
      data: { clarification_id: body.clarification_id, answers },
    });
    expect([200, 202]).toContain(c.status());
    body = await c.json();
  }
  expect(body.status).toBe('answered');
  return body;
}
