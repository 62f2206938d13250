import { defineConfig } from '@playwright/test';

// Runs against the real release build (`.ci/dev build`) on a fresh SQLite
// database, in Debian's Chromium. Never `npx playwright install`.
const PORT = Number(process.env.CLARION_E2E_PORT ?? 3123);
const BASE = `http://127.0.0.1:${PORT}`;
const LLM_PORT = Number(process.env.CLARION_E2E_LLM_PORT ?? 3124);
const STAND_IN_PORT = Number(process.env.LLM_STAND_IN_PORT ?? 3125);

export default defineConfig({
  testDir: './tests',
  outputDir: './test-results',
  fullyParallel: false,
  workers: 1,
  retries: 0,
  timeout: 30_000,
  expect: { timeout: 10_000 },
  reporter: [['list']],
  use: {
    baseURL: BASE,
    viewport: { width: 1280, height: 800 },
    trace: 'retain-on-failure',
    launchOptions: {
      executablePath: '/usr/bin/chromium',
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    },
  },
  webServer: [
    {
      cwd: '..',
      command:
        `rm -rf end2end/.tmp && mkdir -p end2end/.tmp && ` +
        `CLARION_DATA_DIR=end2end/.tmp CLARION_ADDR=127.0.0.1:${PORT} LEPTOS_SITE_ROOT=target/site ` +
        `target/clarion-server serve`,
      url: `${BASE}/healthz`,
      reuseExistingServer: false,
      timeout: 60_000,
      stdout: 'pipe',
      stderr: 'pipe',
    },
    // The optional language model (llm.spec.ts): a stand-in OpenAI-compatible endpoint
    // (the one external service we cannot run here) and a second release server using it.
    {
      cwd: '..',
      command: `LLM_STAND_IN_PORT=${STAND_IN_PORT} node end2end/llm-stand-in.mjs`,
      url: `http://127.0.0.1:${STAND_IN_PORT}/healthz`,
      reuseExistingServer: false,
      timeout: 30_000,
      stdout: 'pipe',
      stderr: 'pipe',
    },
    {
      cwd: '..',
      command:
        `rm -rf end2end/.tmp-llm && mkdir -p end2end/.tmp-llm && ` +
        `CLARION_DATA_DIR=end2end/.tmp-llm CLARION_ADDR=127.0.0.1:${LLM_PORT} LEPTOS_SITE_ROOT=target/site ` +
        `CLARION_LLM_URL=http://127.0.0.1:${STAND_IN_PORT}/v1 CLARION_LLM_MODEL=stand-in-7b ` +
        `target/clarion-server serve`,
      url: `http://127.0.0.1:${LLM_PORT}/healthz`,
      reuseExistingServer: false,
      timeout: 60_000,
      stdout: 'pipe',
      stderr: 'pipe',
    },
  ],
});
