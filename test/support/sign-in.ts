import type { Browser } from 'playwright-core';

/** Opens a sign-in link in a fresh browser context and presses `button` on the provider's page. */
export async function answerSignIn(browser: Browser, url: string, button: 'Approve' | 'Deny'): Promise<{ finalUrl: string; text: string }> {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await page.goto(url);
    await Promise.all([page.waitForURL(/\/eve\/v1\/oauth\/result\//), page.getByRole('button', { name: button, exact: true }).click()]);
    return { finalUrl: page.url(), text: (await page.textContent('#result')) ?? '' };
  } finally {
    await context.close();
  }
}
