import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { expect, test } from '@jest/globals';
import { useDemoWithBrowser } from './support/demo-with-browser.ts';
import { answerSignIn } from './support/sign-in.ts';

/**
 * Eve's own non-interactive client, `eve remote invoke`, against the bridge: a tool behind a
 * sign-in stops it with `authorization-required`; the person signs in; `--resume` picks the same
 * turn up. Eve 0.80.1's resume parser is stricter than Eve's own event: it refuses the step's
 * coordinates and ids Eve's `authorization.required` carries, so those (and only those) are taken
 * out of the saved result, as they must be for Eve's own server too. Anything else the bridge put
 * in the event would still make the resume fail.
 */
const demo = useDemoWithBrowser();
const EVE_CLI = join(dirname(createRequire(import.meta.url).resolve('eve/package.json')), 'bin', 'eve.js');
/** Keys of Eve's `authorization.required` data that eve 0.80.1's `--resume` schema does not accept. */
const KEYS_EVE_RESUME_REFUSES = ['attemptId', 'candidateId', 'principalId', 'sequence', 'stepIndex', 'taskId', 'turnId'];

interface Invoked {
  code: number;
  result: { status: string; authorizations?: Record<string, unknown>[]; outcome?: { status: string; message?: string }; resume?: unknown };
  stderr: string;
}

function invoke(args: string[], stdin?: string): Promise<Invoked> {
  return new Promise((resolve, reject) => {
    const child = execFile(process.execPath, [EVE_CLI, 'remote', 'invoke', '--url', demo.bridge.url, ...args], { timeout: 60_000 }, (error, stdout, stderr) => {
      try {
        resolve({ code: error ? Number(error.code) : 0, result: JSON.parse(stdout) as Invoked['result'], stderr });
      } catch {
        reject(new Error(`eve remote invoke printed no JSON (exit ${error?.code}): ${stdout}${stderr}`));
      }
    });
    if (stdin !== undefined) child.stdin!.end(stdin);
  });
}

test('eve remote invoke: a sign-in stops it, the person signs in, --resume finishes the same turn', async () => {
  const first = await invoke(['/tool connection__demo__whoami {}']);
  expect(first.code).toBe(3);
  expect(first.result.status).toBe('authorization-required');
  const [authorization] = first.result.authorizations!;
  expect(authorization).toMatchObject({ name: 'demo', description: 'Authorization required for demo', authorization: { url: expect.stringMatching(/\/eve\/v1\/oauth\/start\/att_/) } });

  const page = await answerSignIn(demo.browser, (authorization!.authorization as { url: string }).url, 'Approve');
  expect(page.text).toContain('You are signed in');

  const saved = {
    ...first.result,
    authorizations: first.result.authorizations!.map((entry) => Object.fromEntries(Object.entries(entry).filter(([key]) => !KEYS_EVE_RESUME_REFUSES.includes(key)))),
  };
  const resumed = await invoke(['--resume'], JSON.stringify(saved));
  expect(resumed.stderr).toBe('');
  expect(resumed.result).toMatchObject({ status: 'ready', outcome: { status: 'completed', message: 'Tool connection__demo__whoami returned: demo-user' } });
  expect(resumed.code).toBe(0);
}, 120_000);
