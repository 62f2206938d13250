import base from './playwright.config';
import { defineConfig } from '@playwright/test';

// The measurements in end2end/measure/ against the same release server as the suite.
export default defineConfig({ ...base, testDir: './measure', outputDir: './test-results-measure' });
