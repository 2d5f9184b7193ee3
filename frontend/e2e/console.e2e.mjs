// End-to-end test of the console in headless Chromium (the Debian chromium package, driven by playwright-core):
// it starts the real eventbridge binary (../bin/eventbridge, built by `make build`) on free loopback ports with
// a fresh data directory and reads the user admin's password and the instance administrator's API key that the
// first start writes there. On the sign-in screen it is refused with a wrong password, throttled (429) after
// failures of another user name, and signs in as admin with the password: a session cookie that the page cannot
// read, and a CSRF token on every change. With that session it builds a channel bus → filter → HTTP target by drag
// and drop and adds a bus target with the keyboard; the save (one PUT of the channel API) is refused by the server for
// that target's bus, which does not exist, with the problem on its node and nothing stored; it deletes the node with
// the Delete key, undoes the deletion (Ctrl+Z), deletes it again and saves, checks the channel through the API,
// reloads it (the session survives the reload), is asked before leaving unsaved changes (Stay, then Leave), sends an event from
// the console and sees it arrive at a receiver of its own, pauses and resumes the target's connector on the
// runtime page (each state offering only the actions it allows), stops it only once the stop is confirmed (a
// cancelled stop or restart sends nothing), opens the target's detail page, creates a connection and an API
// destination with the resource forms, and switches to another account and back. On the access pages it creates an
// API key with a role and a bus (its secret shown once, copied, working as a bearer token, refused once revoked),
// adds a member and changes its role, and filters the audit log by operation. A target at a closed port shows its
// failing health and last failure on its rule's page and the runtime page; its dead letter, filtered for on the
// dead-letter page and redriven to the still-failing target, is reported dead-lettered again with a link to the new
// one, and the old one's page says it is gone and offers no Redrive. At 390×844 and 768×1024 it
// reaches every page through the navigation's burger and checks that each has its h1 in view and no sideways
// scrolling, and that the builder is read-only on the phone. On the Account security page it lists its sessions,
// ends another one, is refused a password change with a wrong current password and changes it (every session
// ends); it sees a session ended elsewhere send it back to the sign-in screen (signed in again, it is back on the
// page and in the account it was in), and signs out, after which the old
// cookie is refused. Last, it signs in with an API key (a wrong one first) and is sent back to the sign-in screen
// when that key is revoked (a viewer's key is told it may not manage API keys). It writes docs/console-builder.png, docs/console-runtime.png, docs/console-security.png, docs/console-dashboard.png, docs/console-trace.png and docs/console-phone.png.
// Run: npm run e2e (EB_BINARY overrides the binary, CHROMIUM_PATH the browser).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
const frontend = resolve(here, '..');
const repo = resolve(frontend, '..');
const binary = process.env.EB_BINARY ?? join(repo, 'bin/eventbridge');
const chromiumPath = process.env.CHROMIUM_PATH ?? process.env.CHROMIUM ?? '/usr/bin/chromium';
const docs = join(repo, 'docs');
const WAIT = 60_000;

const cleanups = [];
const log = (...a) => console.log('[e2e]', ...a);

function freePort() {
  return new Promise((ok, fail) => {
    const s = net.createServer();
    s.once('error', fail);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => ok(port));
    });
  });
}

async function until(what, f, timeout = WAIT) {
  const end = Date.now() + timeout;
  let last;
  while (Date.now() < end) {
    try {
      const v = await f();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`timed out waiting for ${what}${last ? ': ' + last.message : ''}`);
}

function start(cmd, args, opts) {
  const p = spawn(cmd, args, { ...opts, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let out = '';
  p.stdout.on('data', (d) => (out += d));
  p.stderr.on('data', (d) => (out += d));
  cleanups.push(() => {
    try {
      process.kill(-p.pid, 'SIGTERM');
    } catch {
      /* already gone */
    }
  });
  return { p, output: () => out };
}

// adminKey is the instance administrator's API key, read from the data directory once the binary is ready;
// adminPassword the password of the user admin, read likewise.
let adminKey;
let adminPassword;

/** api calls the control plane as the instance administrator (init.headers may add X-Account-Id or replace it). */
async function api(base, path, init = {}) {
  const res = await fetch(base + '/api/v1' + path, {
    ...init,
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${adminKey}`, ...(init.headers ?? {}) },
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/**
 * signInFromNode signs a user in as a program would (POST /api/v1/session) and returns the status, the session's
 * id, its cookie and its CSRF token: a session of the same user in another "browser".
 */
async function signInFromNode(base, username, password) {
  const res = await fetch(base + '/api/v1/session', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'User-Agent': 'e2e-other-browser/1.0' },
    body: JSON.stringify({ username, password }),
  });
  const body = await res.json();
  const cookie = /eb_session=([^;]+)/.exec(res.headers.get('set-cookie') ?? '')?.[1];
  return { status: res.status, id: body.id, cookie, csrf: body.csrfToken, body };
}

/** withCookie calls the API with a session cookie (and, for a change, its CSRF token and this origin). */
async function withCookie(base, path, cookie, { method = 'GET', csrf, body } = {}) {
  const headers = { Cookie: `eb_session=${cookie}` };
  if (method !== 'GET') Object.assign(headers, { 'X-CSRF-Token': csrf ?? '', Origin: base });
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(base + '/api/v1' + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/** openUserMenu opens the header's user menu (under the name of who is signed in). */
async function openUserMenu(page) {
  await page.getByTestId('user-menu').click();
  await page.getByRole('menu').waitFor();
}

/** positions reads every node's flow position from React Flow's transform, keyed by kind and name. */
async function positions(page) {
  return page.$$eval('.react-flow__node', (els) =>
    Object.fromEntries(
      els.map((el) => {
        const inner = el.querySelector('[data-node-name]');
        const key = `${inner?.getAttribute('data-testid')}:${inner?.getAttribute('data-node-name')}`;
        const m = /translate\(([-\d.]+)px,\s*([-\d.]+)px\)/.exec(el.style.transform);
        return [key, m ? [Math.round(+m[1]), Math.round(+m[2])] : null];
      }),
    ),
  );
}

/** connect drags an edge between two nodes, each named by its test id (node-bus) or a CSS selector ([data-node-name="x"]). */
async function connect(page, from, to) {
  const sel = (n) => (n.startsWith('[') ? n : `[data-testid="${n}"]`);
  const a = await page.locator(`${sel(from)} .react-flow__handle.source`).boundingBox();
  const b = await page.locator(`${sel(to)} .react-flow__handle.target`).boundingBox();
  await page.mouse.move(a.x + a.width / 2, a.y + a.height / 2);
  await page.mouse.down();
  await page.mouse.move((a.x + b.x) / 2, (a.y + b.y) / 2, { steps: 5 });
  await page.mouse.move(b.x + b.width / 2, b.y + b.height / 2, { steps: 5 });
  await page.mouse.up();
}

async function drop(page, paletteId, x, y) {
  const canvas = page.getByTestId('canvas');
  await page.getByTestId(paletteId).dragTo(canvas, { targetPosition: { x, y } });
}

/**
 * fitsTheScreen waits for the page's heading and for the data it shows to load (the loaders of hidden tabs do not
 * count: they load when shown), then checks that the page has one h1, that it is in view, and that nothing is
 * wider than the screen (no sideways scrolling of the page).
 */
async function fitsTheScreen(page, heading) {
  const h1 = page.locator('h1');
  await until(`the page "${heading}" and its data`, async () => (await h1.count()) === 1 && (await h1.innerText()).startsWith(heading) && (await page.locator('[aria-label="Loading"]:visible').count()) === 0, 20_000);
  const box = await h1.boundingBox();
  const [scrollWidth, innerWidth] = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
  assert.ok(box && box.x >= 0 && box.x + box.width <= innerWidth && box.y >= 0, `the h1 of "${heading}" is out of view: ${JSON.stringify(box)}`);
  assert.ok(scrollWidth <= innerWidth, `"${heading}" is ${scrollWidth}px wide on a ${innerWidth}px screen`);
  await audit(page, heading);
}

// axe-core, the accessibility engine of Deque's axe tools, runs on every page the test checks (each once per
// viewport width): the serious and critical violations fail the run at its end, each with its page, rule and
// elements. It is evaluated in the page through the DevTools protocol, which the console's Content-Security-Policy
// does not govern.
const axeSource = readFileSync(join(frontend, 'node_modules/axe-core/axe.min.js'), 'utf8');
const axeFindings = [];
const audited = new Set();
async function audit(page, label) {
  const key = `${label} at ${page.viewportSize()?.width}px`;
  if (audited.has(key)) return;
  audited.add(key);
  if (!(await page.evaluate(() => typeof window.axe !== 'undefined'))) await page.evaluate(axeSource);
  const result = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
  for (const v of result.violations) {
    if (v.impact !== 'serious' && v.impact !== 'critical') continue;
    const nodes = v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join('; ');
    // color-contrast says what it measured: the first element's colours and ratio.
    const d = v.nodes[0]?.any[0]?.data;
    const measured = d?.contrastRatio ? ` [${d.fgColor} on ${d.bgColor}: ${d.contrastRatio}:1]` : '';
    axeFindings.push(`${key}: ${v.impact} ${v.id} (${v.help}), ${v.nodes.length} elements${measured}: ${nodes}`);
  }
}

/** toastsGone waits until the toasts of the last actions have closed by themselves (a few seconds). */
async function toastsGone(page) {
  await until('the toasts to close', async () => (await page.locator('.mantine-Notification-root').count()) === 0, 10_000);
  await page.waitForTimeout(500); // and the tooltip fades out
}

/** colorScheme is the scheme the console shows: Mantine's attribute on <html>, "light" or "dark". */
const colorScheme = (page) => page.evaluate(() => document.documentElement.getAttribute('data-mantine-color-scheme'));

async function main() {
  assert.ok(existsSync(binary), `${binary} does not exist: run \`make build\` first (or set EB_BINARY)`);
  const dataDir = mkdtempSync(join(tmpdir(), 'eb-e2e-'));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));

  // The receiver of the HTTP target.
  const received = [];
  const receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      // An event marked flaky fails its first attempt (503), so that its trace shows a failure, then the success.
      const flaky = body.includes('"flaky"') && received.filter((r) => r.headers['ce-id'] === req.headers['ce-id']).length === 1;
      res.writeHead(flaky ? 503 : 204).end();
    });
  });
  await new Promise((r) => receiver.listen(0, '127.0.0.1', r));
  cleanups.push(() => receiver.close());
  const receiverURL = `http://127.0.0.1:${receiver.address().port}/hook`;

  const apiPort = await freePort();
  const workerPort = await freePort();
  const apiBase = `http://127.0.0.1:${apiPort}`;
  const eb = start(
    binary,
    ['--http-addr', `127.0.0.1:${apiPort}`, '--worker-addr', `127.0.0.1:${workerPort}`, '--data-dir', dataDir, '--allow-private-targets'],
    { cwd: dataDir },
  );
  let exited = false;
  eb.p.on('exit', () => (exited = true));
  await until('the control plane to be ready', async () => {
    if (exited) throw new Error('the binary exited');
    return (await fetch(apiBase + '/readyz')).ok;
  }).catch((e) => {
    throw new Error(e.message + '\n' + eb.output());
  });
  adminKey = readFileSync(join(dataDir, 'admin-api-key'), 'utf8').trim();
  assert.match(adminKey, /^ebk_[a-z2-7]+_[A-Za-z0-9_-]+$/);
  adminPassword = readFileSync(join(dataDir, 'admin-password'), 'utf8').trim();
  assert.ok(adminPassword.length >= 8, 'the bootstrap wrote no password for admin');
  const anonymous = await fetch(apiBase + '/api/v1/buses');
  assert.equal(anonymous.status, 401, 'the API answers a call without a key');
  await until('the runtime to list its plugins', async () => (await api(apiBase, '/runtime/plugins')).status === 200);

  // The console: served by the binary at /, or (a binary built without it) by vite preview proxying to it.
  let base = apiBase;
  const index = await fetch(apiBase + '/builder');
  if (!(index.ok && (await index.text()).includes('id="root"'))) {
    assert.ok(existsSync(join(frontend, 'dist/index.html')), 'the binary serves no console and frontend/dist is not built: run npm run build');
    const previewPort = await freePort();
    log(`the binary serves no console; vite preview on ${previewPort}`);
    start(join(frontend, 'node_modules/.bin/vite'), ['preview', '--port', String(previewPort), '--strictPort', '--host', '127.0.0.1'], {
      cwd: frontend,
      env: { ...process.env, EB_API_URL: apiBase },
    });
    base = `http://127.0.0.1:${previewPort}`;
    await until('vite preview', async () => (await fetch(base + '/')).ok);
  }

  const browser = await chromium.launch({
    executablePath: chromiumPath,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-quic', '--no-first-run', '--disable-component-update', '--disable-sync'],
  });
  cleanups.unshift(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1600, height: 900 } });
  failurePage = page;
  page.setDefaultTimeout(20_000);
  page.on('pageerror', (e) => log('page error:', e.message));

  // What the page sends to the API: every change made with the session must carry the CSRF token.
  const requests = [];
  page.on('request', (r) => {
    if (new URL(r.url()).pathname.startsWith('/api/v1/')) requests.push({ method: r.method(), path: new URL(r.url()).pathname, headers: r.headers() });
  });

  // Sign in: the console asks for a user name and password, refuses a wrong one in words, says how long to wait
  // when a user name is throttled, and signs in with the right one.
  log('sign in: a wrong password, a throttled user name, then admin\'s password');
  await page.goto(base + '/builder');
  const userField = page.getByLabel('User name');
  const passwordField = page.getByLabel('Password', { exact: true });
  await userField.waitFor();
  await audit(page, 'Sign in');
  assert.ok(await userField.evaluate((el) => el === document.activeElement), 'the user name field is focused');
  assert.equal(await passwordField.evaluate((el) => el.type), 'password');
  await userField.fill('admin');
  await passwordField.fill('not-the-password');
  await passwordField.press('Enter');
  await page.getByTestId('sign-in-error').getByText('Invalid user name or password.').waitFor();
  // From one address a user name may fail 3 times; the next attempt that comes too soon is refused (429) with
  // Retry-After, which the screen turns into how long to wait. (Another name: admin's own count is not touched.)
  await userField.fill('nobody');
  await passwordField.fill('not-the-password');
  const throttled = await until(
    'a throttled sign-in',
    async () => {
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByTestId('sign-in-error').waitFor();
      await until('the attempt to end', async () => !(await page.getByRole('button', { name: 'Sign in', exact: true }).isDisabled()) && !(await page.locator('button[data-loading]').count()), 10_000);
      const text = await page.getByTestId('sign-in-error').innerText();
      return /Too many/.test(text) ? text : false;
    },
    30_000,
  );
  assert.match(throttled, /^Too many failed sign-ins for this user name from this address\. Wait \d+ seconds? before you try again\.$/);
  assert.equal(await page.getByTestId('palette-bus').count(), 0);
  await userField.fill('admin');
  await passwordField.fill(adminPassword);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByTestId('identity-name').getByText('admin', { exact: true }).waitFor();
  await page.getByTestId('instance-admin').waitFor();
  assert.equal(await page.getByTestId('identity-role').textContent(), 'admin');
  assert.equal(await page.getByRole('combobox', { name: 'Account' }).inputValue(), 'default');
  // The session is the HttpOnly cookie, which the page cannot read; the page stores nothing of it.
  const [cookie] = (await page.context().cookies()).filter((c) => c.name === 'eb_session');
  assert.ok(cookie?.httpOnly && cookie.sameSite === 'Lax', `the session cookie: ${JSON.stringify(cookie)}`);
  assert.deepEqual(
    await page.evaluate(() => [document.cookie.includes('eb_session'), sessionStorage.getItem('eb.apiKey'), localStorage.length]),
    [false, null, 0],
    'the page can read the session or stored a credential',
  );
  requests.length = 0; // from here on, requests made with the session

  // Build the channel (the sign-in kept the address asked for).
  log('builder: drag a bus, a filter and an http target');
  await page.getByTestId('palette-target-http').waitFor();
  await drop(page, 'palette-bus', 60, 220);
  await page.getByRole('combobox', { name: 'Bus name' }).fill('orders');
  await page.keyboard.press('Escape');
  await drop(page, 'palette-filter', 330, 120);
  await page.getByLabel('Event pattern').fill('{"type": ["order.created"]}');
  await page.getByLabel('Test event').fill('{"specversion": "1.0", "id": "1", "source": "shop", "type": "order.updated"}');
  await page.getByRole('button', { name: 'Test' }).click();
  await page.getByTestId('pattern-result').getByText('Does not match').waitFor();
  assert.match(await page.getByTestId('pattern-result').innerText(), /type/);
  await drop(page, 'palette-target-http', 600, 260);
  // A node just dropped shows no problem yet; once edited it shows what it lacks, on the node itself.
  assert.equal(await page.locator('[data-testid="node-target"] [data-testid="node-error"]').count(), 0, 'an untouched node shows problems');
  await page.getByLabel('Target name').fill('hook');
  await page.locator('[data-testid="node-target"] [data-testid="node-error"]').first().waitFor();
  await page.getByLabel(/^URL/).fill(receiverURL);
  await connect(page, 'node-bus', 'node-filter');
  await connect(page, 'node-filter', 'node-target');
  await page.getByLabel('Rule name').fill('created');

  // The keyboard adds a node too: Tab reaches the palette (a toolbar), the arrows its items, Enter adds one, and
  // the new node's first field takes the focus.
  log('builder: add a bus target with the keyboard');
  const nodeCount = await page.locator('.react-flow__node').count();
  await page.locator('[data-testid="palette"] [tabindex="0"]').focus();
  await until('the palette item "Bus" target to have the focus', async () => {
    if ((await page.evaluate(() => document.activeElement?.getAttribute('data-testid'))) === 'palette-target-bus') return true;
    await page.keyboard.press('ArrowDown');
    return false;
  }, 10_000);
  await page.keyboard.press('Enter');
  await until('the new node', async () => (await page.locator('.react-flow__node').count()) === nodeCount + 1, 5000);
  const targetName = page.getByTestId('side-panel').getByLabel('Target name');
  await until('the new node\'s first field to have the focus', () => targetName.evaluate((el) => el === document.activeElement), 5000);
  // A bus target to a bus that does not exist: no check of the page knows, the server's does.
  await page.keyboard.type('forward');
  await page.getByTestId('side-panel').getByRole('textbox', { name: 'Bus', exact: true }).fill('nowhere');
  const forward = page.locator('[data-node-name="forward"]');
  await connect(page, 'node-filter', '[data-node-name="forward"]');
  await until('the nodes to have no problem', async () => (await page.getByTestId('node-error').count()) === 0, 10_000);
  assert.equal(await page.locator('.react-flow__edge').count(), 3);

  // Saved, the server's check puts its problem on the node and under its field; nothing is stored.
  log('builder: a problem only the server finds');
  await page.getByRole('button', { name: 'Save' }).click();
  await forward.getByTestId('node-error').getByText('Bus "nowhere" does not exist').waitFor();
  assert.equal(await page.getByRole('alert').filter({ hasText: 'Not saved' }).count(), 0, 'a problem placed on its node is said again above the canvas');
  assert.equal(await page.getByTestId('error-count').innerText(), '1 problem to fix');
  assert.ok(new URL(page.url()).pathname.endsWith('/builder'), page.url());
  assert.equal((await api(apiBase, '/buses/orders')).status, 404, 'a refused channel created its bus');
  await forward.click();
  await page.getByTestId('side-panel').getByText('Bus "nowhere" does not exist').waitFor();

  // Delete removes the selected node; Ctrl+Z brings it back with its edge. Deleted again, the channel saves.
  log('builder: delete a node, undo, delete it again');
  await page.keyboard.press('Delete');
  await until('the node to be deleted', async () => (await forward.count()) === 0 && (await page.locator('.react-flow__edge').count()) === 2, 5000);
  await page.keyboard.press('Control+z');
  await forward.waitFor();
  await until('the node\'s edge to be back', async () => (await page.locator('.react-flow__edge').count()) === 3, 5000);
  await forward.click();
  await page.keyboard.press('Delete');
  await until('the node to be deleted again', async () => (await forward.count()) === 0 && (await page.locator('.react-flow__edge').count()) === 2, 5000);
  await page.getByTestId('unsaved').waitFor();
  const before = await positions(page);
  log('positions before saving', JSON.stringify(before));
  await page.getByRole('button', { name: 'Save' }).click();
  await page.waitForURL('**/builder/orders/created');
  await page.getByTestId('saved').waitFor();
  assert.deepEqual(
    [await page.getByTestId('graph-errors').count(), await page.getByTestId('error-count').count(), await page.getByTestId('unsaved').count()],
    [0, 0, 0],
    'problems or unsaved changes after the save',
  );

  // The rule and its target exist through the API; the deleted one does not.
  const rule = await api(apiBase, '/buses/orders/rules/created');
  assert.equal(rule.status, 200, JSON.stringify(rule.body));
  assert.deepEqual(rule.body.eventPattern, { type: ['order.created'] });
  const target = await api(apiBase, '/buses/orders/rules/created/targets/hook');
  assert.equal(target.status, 200, JSON.stringify(target.body));
  assert.equal(target.body.type, 'http');
  assert.equal(target.body.config.url, receiverURL);
  assert.equal((await api(apiBase, '/buses/orders/rules/created/targets/forward')).status, 404);

  // Each save was one PUT of the channel API, made with the session: cookie and CSRF token, no API key.
  const saves = requests.filter((r) => r.method !== 'GET');
  assert.deepEqual(
    saves.filter((r) => r.path.startsWith('/api/v1/buses/')).map((r) => `${r.method} ${r.path}`),
    ['PUT /api/v1/buses/orders/channels/created', 'PUT /api/v1/buses/orders/channels/created'],
    'the saves',
  );
  for (const r of saves) {
    assert.ok(r.headers['x-csrf-token'], `${r.method} ${r.path} without X-CSRF-Token`);
    assert.equal(r.headers.authorization, undefined, `${r.method} ${r.path} with an Authorization header`);
  }

  // Reloaded, the graph is the same, at the same positions (the page asks GET /api/v1/session for the CSRF
  // token again: the cookie outlived the reload, the token in memory did not).
  await page.reload();
  await page.locator('[data-testid="node-target"]').waitFor();
  assert.equal(await page.locator('.react-flow__edge').count(), 2);
  const after = await positions(page);
  assert.deepEqual(after, before, 'the reloaded graph differs');

  // Leaving unsaved changes asks first: Stay keeps them, Leave goes.
  log('builder: leave with unsaved changes');
  await page.getByLabel('Description').fill('orders just created');
  await page.getByTestId('unsaved').waitFor();
  const runtimeLink = page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Runtime', exact: true });
  const leaveDialog = page.getByRole('dialog', { name: 'Leave without saving?' });
  await runtimeLink.click();
  await leaveDialog.getByText('Your changes to this channel will be lost.').waitFor();
  await leaveDialog.getByRole('button', { name: 'Stay' }).click();
  await leaveDialog.waitFor({ state: 'hidden' });
  assert.ok(page.url().endsWith('/builder/orders/created'), page.url());
  assert.equal(await page.getByLabel('Description').inputValue(), 'orders just created');
  await runtimeLink.click();
  await leaveDialog.getByRole('button', { name: 'Leave' }).click();
  await page.waitForURL('**/runtime');
  assert.equal((await api(apiBase, '/buses/orders/rules/created')).body.description, '', 'a change left unsaved was saved');

  // Send an event from the console; it arrives at the receiver.
  log('send an event');
  await page.goto(base + '/send');
  await page.getByPlaceholder('Choose a bus').click();
  await page.getByRole('option', { name: 'orders' }).click();
  await page.getByRole('textbox', { name: 'Event data' }).fill('{"id": 42, "amount": 120}');
  // Before sending, the event is tested against every rule of the bus: it matches created.
  await page.getByRole('button', { name: 'Test against every rule' }).click();
  await page.locator('[data-testid="verdict"][data-rule="created"][data-match="true"]').waitFor();
  await page.getByRole('button', { name: 'Send', exact: true }).click();
  await page.getByTestId('put-results').getByText('1 accepted, 0 failed').waitFor();
  const got = await until('the event at the receiver', async () => received.find((r) => r.headers['ce-type'] === 'order.created'));
  assert.deepEqual(JSON.parse(got.body), { id: 42, amount: 120 });

  // The builder shows the target's counters.
  await page.goto(base + '/builder/orders/created');
  await until('the target node to count the delivery', async () => {
    const s = page.getByTestId('target-status');
    if ((await s.count()) > 0 && /delivered 1/.test(await s.innerText())) return true;
    await page.reload();
    await page.getByTestId('node-target').waitFor();
    return false;
  });
  await page.locator('[data-testid="node-filter"]').click();
  await page.getByTestId('side-panel').waitFor();
  await page.screenshot({ path: join(docs, 'console-builder.png') });

  // Pause and resume the target's connector on the runtime page; each state offers only the actions it allows.
  log('runtime: pause and resume');
  await page.goto(base + '/runtime');
  const row = page.getByTestId('connector-eb.default.orders.created.hook');
  const state = row.getByTestId('state');
  const action = (name) => row.getByRole('button', { name, exact: true });
  /** offered lists the connector's actions that are not disabled. */
  const offered = async () => {
    const out = [];
    for (const a of ['Pause', 'Resume', 'Stop', 'Restart']) if ((await action(a).getAttribute('aria-disabled')) !== 'true') out.push(a);
    return out;
  };
  await until('the connector to run', async () => (await state.innerText()) === 'RUNNING');
  assert.deepEqual(await offered(), ['Pause', 'Stop', 'Restart'], 'what a running connector offers');
  // The state badges say their state in full, never cut short ("RUNNI…").
  const cut = await page.$$eval('[data-testid="state"], [data-testid="task-state"]', (els) =>
    els.filter((el) => [el, ...el.querySelectorAll('*')].some((e) => e.scrollWidth > e.clientWidth + 1)).map((el) => el.textContent),
  );
  assert.deepEqual(cut, [], 'state badges cut short');
  await action('Pause').click();
  await until('the connector to be paused', async () => (await state.innerText()) === 'PAUSED');
  // The outcome is told in a toast too (polite: role status).
  await page.getByRole('status').getByText('Target hook of rule created on bus orders paused').waitFor();
  await until('a paused connector to offer resume and stop', async () => JSON.stringify(await offered()) === '["Resume","Stop"]');
  await action('Resume').click();
  await until('the connector to run again', async () => (await state.innerText()) === 'RUNNING');

  // Stop and restart ask first. Cancelled, nothing is sent and the connector runs on; confirmed, it stops, and
  // then offers only resume.
  log('runtime: stop asks for confirmation');
  const sent = (verb) => requests.filter((r) => r.method === 'POST' && r.path === `/api/v1/runtime/connectors/eb.default.orders.created.hook/${verb}`).length;
  const confirmDialog = page.getByRole('dialog');
  await until('the connector to offer stop again', async () => (await offered()).includes('Stop'));
  await action('Restart').click();
  await confirmDialog.getByTestId('confirm-question').getByText(/^Restart target hook of rule created on bus orders\?/).waitFor();
  await confirmDialog.getByRole('button', { name: 'Cancel' }).click();
  await action('Stop').click();
  await confirmDialog.getByTestId('confirm-question').getByText(/^Stop target hook of rule created on bus orders\? Its tasks end/).waitFor();
  await confirmDialog.getByRole('button', { name: 'Cancel' }).click();
  await confirmDialog.waitFor({ state: 'hidden' });
  await page.waitForTimeout(2500); // one refresh of the page at least
  assert.equal(await state.innerText(), 'RUNNING', 'a cancelled stop stopped the connector');
  assert.deepEqual([sent('stop'), sent('restart')], [0, 0], 'a cancelled action was sent');
  await action('Stop').click();
  await confirmDialog.getByRole('button', { name: 'Stop', exact: true }).click();
  await confirmDialog.waitFor({ state: 'hidden' });
  await until('the connector to be stopped', async () => (await state.innerText()) === 'STOPPED');
  assert.equal(sent('stop'), 1);
  await until('a stopped connector to offer resume only', async () => JSON.stringify(await offered()) === '["Resume"]');
  await action('Resume').click();
  await until('the connector to run after the stop', async () => (await state.innerText()) === 'RUNNING');
  await page.mouse.move(0, 0); // no tooltip in the picture (it fades out)
  await toastsGone(page); // nor the toasts of the actions
  await page.screenshot({ path: join(docs, 'console-runtime.png'), fullPage: true });

  // Resource pages: the rule's page leads to the target's detail page with its tasks' counters (counted since the
  // task started: the resume above restarted them).
  log('resources: target detail, connection and API destination forms');
  await page.goto(base + '/buses/orders');
  await page.getByRole('link', { name: 'created', exact: true }).click();
  await page.getByRole('link', { name: 'hook', exact: true }).click();
  await page.waitForURL('**/buses/orders/rules/created/targets/hook');
  await until('the target page to show the task counters', async () => /^\d+$/.test(await page.getByTestId('delivered-0').innerText()));
  await page.getByText('RUNNING').first().waitFor();

  // A connection made with the form: the fields follow the authorization type, the secret is never shown.
  await page.goto(base + '/connections');
  await page.getByRole('button', { name: 'Create connection' }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByLabel(/^Name/).fill('crm');
  await dialog.getByLabel(/^Authorization/).click();
  await page.getByRole('option', { name: 'Basic (username and password)' }).click();
  await dialog.getByLabel(/^Username/).waitFor();
  await dialog.getByLabel(/^Authorization/).click();
  await page.getByRole('option', { name: 'API key (a header)' }).click();
  await dialog.getByRole('button', { name: 'Create' }).click();
  await dialog.getByText('The key is required.').waitFor();
  await dialog.getByLabel(/^Header name/).fill('X-Api-Key');
  await dialog.getByLabel(/^API key/).fill('k-secret-1');
  await dialog.getByRole('button', { name: 'Create' }).click();
  await page.getByRole('link', { name: 'crm', exact: true }).click();
  await page.getByText('stored (never shown)').waitFor();
  assert.ok(!(await page.content()).includes('k-secret-1'), 'the connection page shows the secret');
  const conn = await api(apiBase, '/connections/crm');
  assert.equal(conn.status, 200, JSON.stringify(conn.body));
  assert.equal(conn.body.authParameters.apiKeyAuthParameters.apiKeyName, 'X-Api-Key');

  // An API destination with the connection picked from the list; the connection's page lists it.
  await page.goto(base + '/api-destinations');
  await page.getByRole('button', { name: 'Create API destination' }).click();
  await dialog.getByLabel(/^Name/).fill('crm-orders');
  await dialog.getByLabel(/^Connection/).click();
  await page.getByRole('option', { name: 'crm', exact: true }).click();
  await dialog.getByLabel(/^Endpoint/).fill(`http://127.0.0.1:${receiver.address().port}/orders`);
  await dialog.getByLabel(/^Rate limit/).fill('10');
  await dialog.getByRole('button', { name: 'Create' }).click();
  await page.getByRole('link', { name: 'crm-orders', exact: true }).waitFor();
  const dest = await api(apiBase, '/api-destinations/crm-orders');
  assert.equal(dest.status, 200, JSON.stringify(dest.body));
  assert.equal(dest.body.connection, 'crm');
  assert.equal(dest.body.invocationRateLimitPerSecond, 10);
  await page.goto(base + '/connections/crm');
  await page.getByRole('link', { name: 'crm-orders', exact: true }).waitFor();

  // Deauthorize asks first, then the connection says DEAUTHORIZED; given its key again, it is AUTHORIZED.
  log('connections: deauthorize, then authorize again');
  assert.equal(await page.getByTestId('connection-state').innerText(), 'AUTHORIZED');
  await page.getByRole('button', { name: 'Deauthorize' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Deauthorize' }).click();
  await until('the connection to say DEAUTHORIZED', async () => (await page.getByTestId('connection-state').innerText()) === 'DEAUTHORIZED');
  await page.getByText('dropped (deauthorized)').waitFor();
  await page.getByRole('status').getByText('Connection crm deauthorized').waitFor();
  assert.equal((await api(apiBase, '/connections/crm')).body.state, 'DEAUTHORIZED');
  const again = await api(apiBase, '/connections/crm', {
    method: 'PATCH',
    body: JSON.stringify({ authParameters: { apiKeyAuthParameters: { apiKeyName: 'X-Api-Key', apiKeyValue: 'k-secret-2' } } }),
  });
  assert.equal(again.body.state, 'AUTHORIZED', JSON.stringify(again.body));

  // Accounts: the selector lists every account for the instance administrator; choosing one shows its resources
  // (X-Account-Id), choosing the key's own again shows the first account's.
  log('accounts: switch to shop and back');
  assert.equal((await api(apiBase, '/accounts', { method: 'POST', body: JSON.stringify({ id: 'shop' }) })).status, 201);
  const billing = await api(apiBase, '/buses', { method: 'POST', headers: { 'X-Account-Id': 'shop' }, body: JSON.stringify({ name: 'billing' }) });
  assert.equal(billing.status, 201, JSON.stringify(billing.body));
  await page.goto(base + '/buses');
  await page.getByRole('link', { name: 'orders', exact: true }).waitFor();
  const accountSelect = page.getByRole('combobox', { name: 'Account' });
  await accountSelect.click();
  await page.getByRole('option', { name: 'shop', exact: true }).click();
  await page.getByRole('link', { name: 'billing', exact: true }).waitFor();
  assert.equal(await page.getByRole('link', { name: 'orders', exact: true }).count(), 0, 'the buses of default show in shop');
  assert.equal(await page.evaluate(() => sessionStorage.getItem('eb.account')), 'shop');
  await page.reload();
  await page.getByRole('link', { name: 'billing', exact: true }).waitFor();
  await accountSelect.click();
  await page.getByRole('option', { name: 'default', exact: true }).click();
  await page.getByRole('link', { name: 'orders', exact: true }).waitFor();
  assert.equal(await page.evaluate(() => sessionStorage.getItem('eb.account')), null, 'the key\'s own account is sent as X-Account-Id');

  // Access: an API key made on its page with a role and a bus, its secret shown once (and copied) and working as a
  // bearer token with that role, then revoked after a confirmation (refused from then on); a user added as a
  // member and its role changed; the audit log filtered by operation shows the key's creation.
  log('access: create an API key with a role, use it, revoke it');
  const consoleNav = page.getByRole('navigation', { name: 'Console' });
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
  await consoleNav.getByRole('link', { name: 'API keys', exact: true }).click();
  await page.getByRole('heading', { level: 1, name: 'API keys' }).waitFor();
  await page.getByRole('button', { name: 'Create API key' }).click();
  await dialog.getByLabel(/^Name/).fill('e2e-publisher');
  await dialog.getByLabel(/^Role/).click();
  await page.getByRole('option', { name: 'publisher', exact: true }).click();
  await dialog.getByLabel(/^Buses/).fill('orders');
  await dialog.getByLabel(/^Buses/).press('Enter');
  await dialog.getByRole('button', { name: 'Create key' }).click();
  const newSecret = page.getByTestId('new-secret');
  await newSecret.waitFor();
  const secret = (await newSecret.innerText()).trim();
  assert.match(secret, /^ebk_[a-z2-7]+_[A-Za-z0-9_-]+$/);
  await dialog.getByText('You will not see it again').waitFor();
  await dialog.getByRole('button', { name: 'Copy API key' }).click();
  await dialog.getByRole('button', { name: 'Copied API key' }).waitFor();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), secret, 'the copy button copied something else');
  const asKey = async (path, init = {}) => {
    const res = await fetch(apiBase + '/api/v1' + path, { ...init, headers: { Authorization: `Bearer ${secret}`, ...(init.headers ?? {}) } });
    return { status: res.status, body: await res.json().catch(() => undefined) };
  };
  const keyMe = await asKey('/me');
  assert.equal(keyMe.status, 200, JSON.stringify(keyMe.body));
  assert.deepEqual([keyMe.body.kind, keyMe.body.name, keyMe.body.role, keyMe.body.buses], ['apiKey', 'e2e-publisher', 'publisher', ['orders']]);
  const put = await asKey('/buses/orders/events', {
    method: 'POST',
    headers: { 'Content-Type': 'application/cloudevents+json' },
    body: JSON.stringify({ specversion: '1.0', id: 'e2e-key-1', source: 'e2e', type: 'e2e.key-check' }),
  });
  assert.ok(put.status >= 200 && put.status < 300, `the publisher's key put no event: ${put.status} ${JSON.stringify(put.body)}`);
  assert.equal((await asKey('/buses')).status, 403, 'a publisher\'s key reads buses');
  await dialog.getByRole('button', { name: 'I have stored the key' }).click();
  await dialog.waitFor({ state: 'hidden' });
  const keyRow = page.locator('[data-testid="api-keys"] tr[data-name="e2e-publisher"]');
  await keyRow.waitFor();
  assert.match(await keyRow.innerText(), /publisher[\s\S]*orders[\s\S]*in 90 days/);
  assert.ok(!(await page.content()).includes(secret), 'the secret is still on the page');
  await keyRow.getByRole('button', { name: 'Revoke' }).click();
  await dialog.getByText(`Revoke API key e2e-publisher?`).waitFor();
  await dialog.getByRole('button', { name: 'Revoke' }).click();
  await keyRow.waitFor({ state: 'detached' });
  await until('the revoked key to be refused', async () => (await asKey('/me')).status === 401, 5000);

  log('access: add a member, change its role');
  const alice = await api(apiBase, '/users', { method: 'POST', body: JSON.stringify({ username: 'e2e-alice', password: 'e2e-alice-password' }) });
  assert.equal(alice.status, 201, JSON.stringify(alice.body));
  await consoleNav.getByRole('link', { name: 'Members and roles', exact: true }).click();
  await page.getByRole('heading', { level: 1, name: 'Members and roles' }).waitFor();
  const addForm = page.getByRole('form', { name: 'Add a member' });
  await addForm.getByLabel(/^User name/).fill('e2e-alice');
  await addForm.getByLabel(/^User name/).press('Escape');
  await addForm.getByLabel(/^Role/).click();
  await page.getByRole('option', { name: 'viewer', exact: true }).click();
  await addForm.getByRole('button', { name: 'Add member' }).click();
  await page.getByTestId('members-notice').getByText('e2e-alice is now a member of account default with the role viewer.').waitFor();
  const roleOf = async (user) => (await api(apiBase, '/accounts/default/members')).body.members.find((m) => m.username === user)?.role;
  assert.equal(await roleOf('e2e-alice'), 'viewer');
  await page.getByRole('combobox', { name: 'Role of e2e-alice' }).click();
  await page.getByRole('option', { name: 'operator', exact: true }).click();
  await page.getByTestId('members-notice').getByText('e2e-alice now has the role operator in account default.').waitFor();
  assert.equal(await roleOf('e2e-alice'), 'operator');

  log('access: the audit log, filtered by operation');
  await consoleNav.getByRole('link', { name: 'Audit log', exact: true }).click();
  await page.getByRole('heading', { level: 1, name: 'Audit log' }).waitFor();
  await page.getByLabel('Operation').fill('apiKeys.create');
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await page.waitForURL(/[?&]operation=apiKeys\.create/);
  const entries = page.getByTestId('audit-entry');
  await until('the key\'s creation in the filtered audit log', async () => {
    const ops = await entries.evaluateAll((els) => els.map((e) => e.dataset.operation));
    return ops.length >= 1 && ops.every((o) => o === 'apiKeys.create');
  });
  assert.match(await entries.first().innerText(), /User admin[\s\S]*apiKeys\.create[\s\S]*api-keys\/[\s\S]*Success \(201\)/);

  // Health and dead letters. A target at a port where nothing listens, on a rule of its own (the steps above and
  // the pages below keep what they expect of rule created), fails and looks failing: its rule's page and the runtime
  // page show its health and last failure. Without retries its event is a dead letter at once; redriven from the
  // dead-letter page to the still-failing target, it is reported dead-lettered again with a link to the new dead
  // letter, and the old one's page knows it is gone and offers no Redrive.
  log('health: a target at a closed port; dead letters: a redrive that fails again');
  const closedURL = `http://127.0.0.1:${await freePort()}/x`;
  const downRule = await api(apiBase, '/buses/orders/rules', { method: 'POST', body: JSON.stringify({ name: 'down', eventPattern: { type: ['order.down'] } }) });
  assert.equal(downRule.status, 201, JSON.stringify(downRule.body));
  const refused = await api(apiBase, '/buses/orders/rules/down/targets/refused', {
    method: 'PUT',
    body: JSON.stringify({ type: 'http', config: { url: closedURL }, retryPolicy: { maximumRetryAttempts: 0, maximumEventAgeInSeconds: 86400 } }),
  });
  assert.ok(refused.status < 300, JSON.stringify(refused.body));
  const downConnector = 'eb.default.orders.down.refused';
  await until('the failing target\'s connector to run', async () =>
    (await api(apiBase, '/runtime/connectors')).body?.connectors?.some((c) => c.name === downConnector && c.state === 'RUNNING' && (c.tasks ?? []).some((t) => t.state === 'RUNNING')),
  );
  const putDown = await api(apiBase, '/buses/orders/events', {
    method: 'POST',
    headers: { 'Content-Type': 'application/cloudevents+json' },
    body: JSON.stringify({ specversion: '1.0', id: 'e2e-down-1', source: 'e2e', type: 'order.down', data: { n: 1 } }),
  });
  assert.ok(putDown.status < 300, JSON.stringify(putDown.body));
  await page.goto(base + '/buses/orders/rules/down');
  const refusedRow = page.getByTestId('target-refused');
  await until('the rule page to show the target dead-lettering', async () => (await refusedRow.getByTestId('health').innerText()) === 'DEAD LETTERING');
  assert.match(await refusedRow.getByTestId('last-failure').innerText(), /^Last failure (just now|\d+ s ago) \(attempt 1\): connection refused; no success since the task started\n+.*connection refused/);
  await until('the rule page to count the dead letter', async () => /read 1 · dead-lettered 1/.test(await refusedRow.getByTestId('counters').innerText()), 15_000);
  await page.goto(base + '/runtime');
  const downRow = page.getByTestId(`connector-${downConnector}`);
  await until('the runtime page to show the connector dead-lettering', async () => (await downRow.getByTestId('health').innerText()) === 'DEAD LETTERING');
  assert.equal(await downRow.getByTestId('state').innerText(), 'RUNNING');
  assert.match(await downRow.getByTestId('last-failure').innerText(), /^Last failure (just now|\d+ s ago) \(attempt 1\): connection refused/);

  // The dashboard, the home page, lists what needs attention first: the target dead-lettering, with its failure
  // and a link to it; and a card per bus with its charts (loaded lazily).
  log('dashboard: the failing target first');
  await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Dashboard', exact: true }).click();
  await page.getByRole('heading', { level: 1, name: 'Dashboard' }).waitFor();
  const firstAttention = page.getByTestId('attention-item').first();
  await until('the dashboard to list the failing target first', async () => (await firstAttention.count()) > 0 && (await firstAttention.getAttribute('data-connector')) === downConnector, 20_000);
  assert.match(await firstAttention.innerText(), /DEAD LETTERING[\s\S]*connection refused/);
  await page.getByTestId('bus-card').first().waitFor();
  await until('the dashboard\'s charts', async () => (await page.locator('[data-testid="bus-card"] figure').count()) > 0, 20_000);
  await audit(page, 'Dashboard');
  // The README's pictures of the dashboard, on a laptop's screen and on a phone.
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.screenshot({ path: join(docs, 'console-dashboard.png') });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.getByTestId('attention-item').first().waitFor();
  await page.screenshot({ path: join(docs, 'console-phone.png') });
  await page.setViewportSize({ width: 1600, height: 900 });
  await firstAttention.getByRole('link').first().click();
  await page.getByRole('heading', { level: 1, name: 'Target refused' }).waitFor();

  // Events: with the bus logging at TRACE, an event whose first delivery fails is found by a search, and its trace
  // shows the rule it matched, the rule it did not with why, and the target's failed then successful attempts.
  log('events: search, then the trace of an event delivered on its second attempt');
  const logged = await api(apiBase, '/buses/orders', { method: 'PATCH', body: JSON.stringify({ logConfig: { level: 'TRACE' } }) });
  assert.equal(logged.status, 200, JSON.stringify(logged.body));
  const flaky = await api(apiBase, '/buses/orders/events', {
    method: 'POST',
    headers: { 'Content-Type': 'application/cloudevents+json' },
    body: JSON.stringify({ specversion: '1.0', id: 'e2e-flaky-1', source: 'e2e', type: 'order.created', data: { flaky: true, amount: 5 } }),
  });
  assert.ok(flaky.status < 300, JSON.stringify(flaky.body));
  await until('the flaky event delivered on its second attempt', async () => received.filter((r) => r.headers['ce-id'] === 'e2e-flaky-1').length >= 2, 30_000);
  await page.goto(base + '/buses/orders');
  await page.getByRole('link', { name: 'Search events' }).click();
  await page.getByRole('heading', { level: 1, name: 'Events of orders' }).waitFor();
  const flakyRow = page.locator('[data-testid="event-row"][data-id="e2e-flaky-1"]');
  await flakyRow.waitFor();
  await audit(page, 'Events of orders');
  await flakyRow.getByRole('link', { name: 'e2e-flaky-1' }).click();
  await page.getByRole('heading', { level: 1, name: 'Event e2e-flaky-1' }).waitFor();
  const hookTrace = page.locator('[data-testid="matched-rule"][data-rule="created"] [data-testid="target-trace"][data-target="hook"]');
  await until('the trace to show the attempts', async () => {
    if ((await hookTrace.count()) > 0 && (await hookTrace.getAttribute('data-state')) === 'recovered') return true;
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Event e2e-flaky-1' }).waitFor();
    return false;
  }, 30_000);
  assert.equal(await page.getByTestId('matched-rule').count(), 1, 'one rule matched');
  const attempts = await hookTrace.getByTestId('attempt').evaluateAll((els) => els.map((e) => e.getAttribute('data-type')));
  assert.deepEqual(attempts, ['INVOCATION_ATTEMPT_RETRYABLE_FAILURE', 'INVOCATION_ATTEMPT_SUCCESS'], 'a failed, then a successful attempt');
  const downVerdict = page.locator('[data-testid="not-matched-rule"][data-rule="down"]');
  assert.match(await downVerdict.innerText(), /type/, 'the rule that did not match says why');
  await audit(page, 'Event e2e-flaky-1');
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.screenshot({ path: join(docs, 'console-trace.png') });
  await page.setViewportSize({ width: 1600, height: 900 });

  // The live tail shows an event put while it is open; the bus log lists what happened to the flaky event.
  log('live tail and bus log');
  await page.goto(base + '/buses/orders');
  await page.getByRole('link', { name: 'Live tail' }).click();
  await page.getByRole('heading', { level: 1, name: 'Live tail of orders' }).waitFor();
  await page.getByRole('button', { name: 'Start', exact: true }).click();
  await until('the tail to listen', async () => (await page.getByTestId('tail-status').getAttribute('data-state')) === 'listening', 15_000);
  const tailed = await api(apiBase, '/buses/orders/events', {
    method: 'POST',
    headers: { 'Content-Type': 'application/cloudevents+json' },
    body: JSON.stringify({ specversion: '1.0', id: 'e2e-tail-1', source: 'e2e', type: 'order.tailed', data: { n: 1 } }),
  });
  assert.ok(tailed.status < 300, JSON.stringify(tailed.body));
  await page.locator('[data-testid="tail-event"][data-event-id="e2e-tail-1"]').waitFor({ timeout: 15_000 });
  await audit(page, 'Live tail of orders');
  await page.getByRole('button', { name: 'Stop', exact: true }).click();
  await page.goto(base + '/buses/orders/log');
  await page.getByRole('heading', { level: 1, name: 'Log of orders' }).waitFor();
  await page.locator('[data-testid="bus-log-record"][data-event-id="e2e-flaky-1"]').first().waitFor({ timeout: 15_000 });
  const flakyTypes = await page.locator('[data-testid="bus-log-record"][data-event-id="e2e-flaky-1"]').evaluateAll((els) => els.map((e) => e.getAttribute('data-type')));
  assert.ok(flakyTypes.includes('INVOCATION_ATTEMPT_RETRYABLE_FAILURE') && flakyTypes.includes('INVOCATION_ATTEMPT_SUCCESS'), JSON.stringify(flakyTypes));
  await audit(page, 'Log of orders');

  // Archives and replays: an archive made on the bus's page keeps what is put from then on; a replay of it started
  // from its row runs to COMPLETED.
  log('archives and replays');
  await page.goto(base + '/buses/orders');
  await page.getByRole('link', { name: 'Archives', exact: true }).click();
  await page.getByRole('heading', { level: 1, name: 'Archives of orders' }).waitFor();
  await page.getByRole('button', { name: 'New archive' }).click();
  await page.getByRole('dialog').getByLabel(/^Name/).fill('all-orders');
  await page.getByRole('dialog').getByRole('button', { name: 'Create archive' }).click();
  const archiveRow = page.locator('[data-testid="archive-row"][data-name="all-orders"]');
  await archiveRow.waitFor();
  const archived = await api(apiBase, '/buses/orders/events', {
    method: 'POST',
    headers: { 'Content-Type': 'application/cloudevents+json' },
    body: JSON.stringify({ specversion: '1.0', id: 'e2e-archived-1', source: 'e2e', type: 'order.archived', data: { n: 1 } }),
  });
  assert.ok(archived.status < 300, JSON.stringify(archived.body));
  await until('the archive to keep the event', async () => (await api(apiBase, '/buses/orders/archives/all-orders')).body?.eventCount >= 1, 20_000);
  await until('the dialog to close', async () => (await page.getByRole('dialog').count()) === 0, 10_000);
  await toastsGone(page);
  await audit(page, 'Archives of orders');
  await archiveRow.getByRole('button', { name: 'Replay', exact: true }).click();
  await page.getByRole('dialog').getByLabel(/^Name/).fill('replay-1');
  await page.getByRole('dialog').getByRole('button', { name: 'Start replay' }).click();
  await page.getByRole('heading', { level: 1, name: 'Replay replay-1' }).waitFor();
  await until('the replay to complete', async () => (await page.getByTestId('replay-state').first().getAttribute('data-state')) === 'COMPLETED', 60_000);
  await toastsGone(page);
  await audit(page, 'Replay replay-1');

  const firstDead = (await until('the event\'s dead letter', async () => (await api(apiBase, '/dead-letters?eventId=e2e-down-1')).body?.deadLetters?.[0])).id;
  await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Dead letters', exact: true }).click();
  await page.getByRole('heading', { level: 1, name: 'Dead letters' }).waitFor();
  const filters = page.getByRole('form', { name: 'Filters' });
  assert.ok(await filters.getByLabel('Rule', { exact: true }).isDisabled(), 'the rule filter is enabled without a bus');
  await filters.getByLabel('Bus', { exact: true }).click();
  await page.getByRole('option', { name: 'orders', exact: true }).click();
  await filters.getByLabel('Rule', { exact: true }).click();
  await page.getByRole('option', { name: 'down', exact: true }).click();
  await filters.getByLabel('Reason contains').fill('REFUSED');
  await filters.getByRole('button', { name: 'Apply filters' }).click();
  await page.waitForURL(/\?bus=orders&rule=down&reason=REFUSED$/);
  const deadRows = page.getByTestId('dead-letter');
  await until('the filtered list to hold the dead letter alone', async () => JSON.stringify(await deadRows.evaluateAll((els) => els.map((e) => e.dataset.id))) === JSON.stringify([firstDead]));
  await page.getByRole('checkbox', { name: `Select dead letter ${firstDead}` }).check();
  await page.getByTestId('selected-count').getByText('1 dead letter selected').waitFor();
  await page.getByRole('button', { name: 'Redrive selected (1)' }).click();
  await page.getByRole('dialog').getByText('Redrive 1 dead letter?').waitFor();
  await page.getByRole('dialog').getByRole('button', { name: 'Redrive selected (1)' }).click();
  const failedAgain = page.locator('[data-testid="redrive-outcome"][data-kind="again"]');
  await failedAgain.waitFor({ timeout: 15_000 });
  const newDead = (await failedAgain.getByTestId('new-dead-letter').innerText()).replace('dead letter ', '');
  assert.notEqual(newDead, firstDead, 'the new dead letter has the old id');
  assert.match(await failedAgain.innerText(), new RegExp(`^Dead letter ${firstDead} \\(event e2e-down-1\\): dead-lettered again as dead letter ${newDead} — .*connection refused`));
  const eventDead = (await api(apiBase, '/dead-letters?eventId=e2e-down-1')).body.deadLetters.map((d) => d.id);
  assert.deepEqual(eventDead, [newDead], 'the API lists other dead letters of the event');
  await page.getByTestId('redrive-results').getByText('1 redriven: 1 dead-lettered again.').waitFor();
  // The results (a red alert with a link in it) pass axe-core in both schemes.
  await audit(page, 'Dead letters (a redrive that failed again)');
  await page.getByRole('button', { name: 'Switch to dark mode' }).click();
  await until('the console to turn dark', async () => (await colorScheme(page)) === 'dark', 5000);
  await audit(page, 'Dead letters (a redrive that failed again) (dark)');
  await page.getByRole('button', { name: 'Switch to light mode' }).click();
  await until('the console to turn light', async () => (await colorScheme(page)) === 'light', 5000);
  await failedAgain.getByTestId('new-dead-letter').click();
  await page.getByRole('heading', { level: 1, name: `Dead letter ${newDead}` }).waitFor();
  await page.getByRole('button', { name: 'Redrive', exact: true }).waitFor();
  // The redriven dead letter's page, opened by its address: gone, nothing to redrive.
  await page.goto(base + `/dead-letters/${firstDead}`);
  await page.getByTestId('dead-letter-gone').waitFor();
  assert.equal(await page.getByRole('button', { name: 'Redrive', exact: true }).count(), 0, 'a dead letter that is gone offers Redrive');

  // Phones and tablets: the navigation hides behind the burger, which reaches every page; each page has one h1
  // in view and nothing wider than the screen (tables scroll in their own box). On a phone the builder shows
  // the channel read-only and says so.
  // [link, h1] of the navigation's pages, [path, h1] of pages reached by address.
  const navPages = [
    ['Dashboard', 'Dashboard', '/'],
    ['Buses', 'Buses', '/buses'],
    ['Builder', 'Channel builder', '/builder'],
    ['Send events', 'Send events', '/send'],
    ['Runtime', 'Runtime', '/runtime'],
    ['Dead letters', 'Dead letters', '/dead-letters'],
    ['Replays', 'Replays', '/replays'],
    ['Connections', 'Connections', '/connections'],
    ['API destinations', 'API destinations', '/api-destinations'],
    ['Members and roles', 'Members and roles', '/access/members'],
    ['API keys', 'API keys', '/access/api-keys'],
    ['AWS access keys', 'AWS access keys', '/access/access-keys'],
    ['Audit log', 'Audit log', '/access/audit-log'],
  ];
  const detailPages = [
    ['/buses/orders', 'Bus orders'],
    ['/buses/orders/rules/created', 'Rule created'],
    ['/buses/orders/rules/down', 'Rule down'],
    [`/dead-letters/${newDead}`, `Dead letter ${newDead}`],
    ['/buses/orders/rules/created/targets/hook', 'Target hook'],
    ['/buses/orders/events', 'Events of orders'],
    ['/buses/orders/tail', 'Live tail of orders'],
    ['/buses/orders/log', 'Log of orders'],
    ['/buses/orders/archives', 'Archives of orders'],
    ['/replays/replay-1', 'Replay replay-1'],
    ['/buses/orders/events/e2e-flaky-1?source=e2e', 'Event e2e-flaky-1'],
    ['/builder/orders/created', 'Channel builder'],
    ['/connections/crm', 'Connection crm'],
    ['/api-destinations/crm-orders', 'API destination crm-orders'],
    ['/account/security', 'Account security'],
    ['/no-such-page', 'Not found'],
  ];
  log('1600×900: every page, each audited by axe-core');
  for (const [path, h1] of [...navPages.map(([, h, p]) => [p, h]), ...detailPages]) {
    await page.goto(base + path);
    await fitsTheScreen(page, h1);
  }
  // The pages of what happened to events, on a laptop's screen too.
  log('1440×900: the dashboard and the pages of events, archives and replays');
  await page.setViewportSize({ width: 1440, height: 900 });
  for (const [path, h1] of [
    ['/', 'Dashboard'],
    ['/buses/orders/events', 'Events of orders'],
    ['/buses/orders/events/e2e-flaky-1?source=e2e', 'Event e2e-flaky-1'],
    ['/buses/orders/tail', 'Live tail of orders'],
    ['/buses/orders/log', 'Log of orders'],
    ['/buses/orders/archives', 'Archives of orders'],
    ['/replays', 'Replays'],
    ['/replays/replay-1', 'Replay replay-1'],
  ]) {
    await page.goto(base + path);
    await fitsTheScreen(page, h1);
  }
  await page.setViewportSize({ width: 1600, height: 900 });
  for (const [width, height] of [
    [390, 844],
    [768, 1024],
  ]) {
    log(`${width}×${height}: every page reachable`);
    await page.setViewportSize({ width, height });
    await page.goto(base + '/buses');
    const navbar = page.getByRole('navigation', { name: 'Console' });
    const navHidden = () => navbar.evaluate((el) => el.getBoundingClientRect().right <= 0 && el.hasAttribute('inert'));
    await until('the navigation to be out of sight', navHidden, 5000);
    for (const [link, h1] of navPages) {
      await page.getByRole('button', { name: 'Open the navigation' }).click();
      await navbar.getByRole('link', { name: link, exact: true }).click();
      await until(`the navigation to close after choosing ${link}`, navHidden, 5000);
      await fitsTheScreen(page, h1);
    }
    const builderNote = page.getByTestId('read-only');
    for (const [path, h1] of detailPages) {
      await page.goto(base + path);
      await fitsTheScreen(page, h1);
      if (path.startsWith('/builder/')) {
        await page.getByTestId('node-target').waitFor();
        assert.equal(await builderNote.isVisible(), width < 768, `the builder's read-only note at ${width}`);
        assert.equal(await page.getByTestId('palette').isVisible(), width >= 768, `the palette at ${width}`);
      }
    }
    await openUserMenu(page);
    await page.keyboard.press('Escape');
  }
  await page.setViewportSize({ width: 1600, height: 900 });

  // Dark mode: the console follows the system's scheme (Chromium's is light), and the header's toggle switches to
  // dark, kept in localStorage over reloads; every page passes axe-core in dark too (on a phone as well), and the
  // builder's canvas is dark. Switched back, the console follows the system again and stores nothing; Chromium's
  // emulated system scheme then turns it dark and light without the toggle.
  log('dark mode: the toggle, every page audited, then the system\'s scheme');
  await page.goto(base + '/buses');
  await fitsTheScreen(page, 'Buses');
  assert.equal(await colorScheme(page), 'light');
  await page.getByRole('button', { name: 'Switch to dark mode' }).click();
  await until('the console to turn dark', async () => (await colorScheme(page)) === 'dark', 5000);
  assert.equal(await page.evaluate(() => localStorage.getItem('eb.colorScheme')), 'dark');
  const darkPages = [...navPages.map(([, h, p]) => [p, h]), ...detailPages];
  for (const [width, height, pages] of [
    [1600, 900, darkPages],
    [390, 844, darkPages.filter(([p]) => ['/buses', '/buses/orders/rules/created', '/builder/orders/created', '/runtime'].includes(p))],
  ]) {
    await page.setViewportSize({ width, height });
    for (const [path, h1] of pages) {
      await page.goto(base + path);
      await fitsTheScreen(page, h1);
      assert.equal(await colorScheme(page), 'dark', `${path} after a reload`);
      if (path.startsWith('/builder/')) {
        await page.getByTestId('node-target').waitFor();
        assert.equal(await page.locator('.react-flow.dark').count(), 1, 'the builder\'s canvas is dark');
      }
      await audit(page, `${h1} (dark)`);
    }
  }
  await page.setViewportSize({ width: 1600, height: 900 });
  await page.getByRole('button', { name: 'Switch to light mode' }).click();
  await until('the console to turn light', async () => (await colorScheme(page)) === 'light', 5000);
  assert.equal(await page.evaluate(() => localStorage.getItem('eb.colorScheme')), null, 'the system\'s scheme is stored');
  await page.emulateMedia({ colorScheme: 'dark' });
  await until('the console to follow the system to dark', async () => (await colorScheme(page)) === 'dark', 5000);
  await page.getByRole('button', { name: 'Switch to light mode' }).waitFor();
  await page.emulateMedia({ colorScheme: 'light' });
  await until('the console to follow the system to light', async () => (await colorScheme(page)) === 'light', 5000);

  // Every change above was made with the session and its token.
  const changes = requests.filter((r) => r.method !== 'GET');
  assert.ok(changes.length >= 6, `only ${changes.length} changes were seen`);
  for (const r of changes) assert.ok(r.headers['x-csrf-token'] && !r.headers.authorization, `${r.method} ${r.path}: ${JSON.stringify(r.headers)}`);

  // Account security: the sessions of admin in every browser, this one marked; ending another one makes its
  // cookie worthless.
  log('account security: list sessions, end another one');
  const other = await signInFromNode(apiBase, 'admin', adminPassword);
  assert.equal(other.status, 201, JSON.stringify(other.body));
  assert.equal((await withCookie(apiBase, '/me', other.cookie)).status, 200);
  await openUserMenu(page);
  await page.getByRole('menuitem', { name: 'Account security' }).click();
  await page.waitForURL('**/account/security');
  const sessionRows = page.locator('[data-testid="sessions"] tbody tr');
  await until('both sessions to be listed', async () => (await sessionRows.count()) === 2);
  const mine = page.locator('[data-testid="sessions"] tr[data-current="true"]');
  assert.equal(await mine.count(), 1);
  assert.equal(await mine.getByTestId('session-address').innerText(), '127.0.0.1');
  assert.match(await mine.getByTestId('session-browser').innerText(), /Chrom/);
  const otherRow = page.getByTestId(`session-${other.id}`);
  assert.equal(await otherRow.getByTestId('session-browser').innerText(), 'e2e-other-browser/1.0');
  await page.screenshot({ path: join(docs, 'console-security.png') });
  await otherRow.getByRole('button', { name: 'End' }).click();
  await until('the other session to be gone', async () => (await sessionRows.count()) === 1);
  assert.equal((await withCookie(apiBase, '/me', other.cookie)).status, 401, 'an ended session still works');

  // Change the password: a wrong current one is refused on its field; the right one ends every session, this
  // one too, and the console says so on the sign-in screen.
  log('account security: change the password');
  const newPassword = 'e2e-new-password-' + Date.now();
  const oldCookie = (await page.context().cookies()).find((c) => c.name === 'eb_session').value;
  const third = await signInFromNode(apiBase, 'admin', adminPassword);
  await page.getByLabel('Current password').fill('not-the-password');
  await page.getByLabel('New password', { exact: true }).fill(newPassword);
  await page.getByLabel('Repeat the new password').fill(newPassword);
  await page.getByRole('button', { name: 'Change password' }).click();
  await page.getByText('The current password is wrong.').waitFor();
  await page.getByLabel('Current password').fill(adminPassword);
  await page.getByRole('button', { name: 'Change password' }).click();
  await page.getByTestId('sign-in-notice').getByText('Your password was changed and every session of yours ended').waitFor();
  await userField.waitFor();
  assert.equal((await withCookie(apiBase, '/me', oldCookie)).status, 401, 'this browser\'s session outlived the password change');
  assert.equal((await withCookie(apiBase, '/me', third.cookie)).status, 401, 'another session outlived the password change');
  assert.equal((await signInFromNode(apiBase, 'admin', adminPassword)).status, 401, 'the old password still signs in');

  // A session ended elsewhere (here: by the same user from another browser): the next call answers 401 and the
  // console goes back to the sign-in screen, saying why.
  log('a session ended elsewhere leads back to the sign-in screen');
  await userField.fill('admin');
  await passwordField.fill(newPassword);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByTestId('identity-name').getByText('admin', { exact: true }).waitFor();
  // It ends while the console acts in the account shop: signed in again, the user is back on that page and account.
  await page.getByRole('combobox', { name: 'Account' }).click();
  await page.getByRole('option', { name: 'shop', exact: true }).click();
  await until('the account shop to be chosen', async () => (await page.evaluate(() => sessionStorage.getItem('eb.account'))) === 'shop', 5000);
  const elsewhere = await signInFromNode(apiBase, 'admin', newPassword);
  assert.equal(elsewhere.status, 201, JSON.stringify(elsewhere.body));
  const listed = await withCookie(apiBase, '/me/sessions', elsewhere.cookie);
  const browserSession = listed.body.sessions.find((x) => !x.current);
  assert.ok(browserSession, JSON.stringify(listed.body));
  assert.equal((await withCookie(apiBase, `/me/sessions/${browserSession.id}`, elsewhere.cookie, { method: 'DELETE', csrf: elsewhere.csrf })).status, 204);
  await page.getByRole('link', { name: 'Runtime' }).click();
  await page.getByTestId('sign-in-notice').getByText('Your session ended; sign in again.').waitFor();
  await userField.waitFor();

  // Sign out: the session ends on the server (its cookie is refused from then on) and the sign-in screen comes
  // back, also after a reload.
  log('sign out');
  await userField.fill('admin');
  await passwordField.fill(newPassword);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByTestId('identity-name').getByText('admin', { exact: true }).waitFor();
  assert.equal(new URL(page.url()).pathname, '/runtime', 'signing in again did not return to the page the session ended on');
  await page.getByRole('heading', { level: 1, name: 'Runtime' }).waitFor();
  assert.equal(await page.getByRole('combobox', { name: 'Account' }).inputValue(), 'shop', 'signing in again did not return to the account');
  const signedIn = (await page.context().cookies()).find((c) => c.name === 'eb_session').value;
  assert.equal((await withCookie(apiBase, '/me', signedIn)).status, 200);
  await openUserMenu(page);
  await page.getByRole('menuitem', { name: 'Sign out' }).click();
  await page.getByTestId('sign-in-notice').getByText('You signed out.').waitFor();
  await userField.waitFor();
  assert.equal((await withCookie(apiBase, '/me', signedIn)).status, 401, 'the session outlived signing out');
  assert.equal((await page.context().cookies()).filter((c) => c.name === 'eb_session').length, 0, 'the browser kept the cookie');
  await page.reload();
  await userField.waitFor();

  // The alternative: an API key. A wrong key is refused in words; a viewer's key shows its role and only its own
  // account; revoked while in use, the next call answers 401 and the console goes back to the sign-in screen,
  // saying why.
  log('API key: a wrong key, then a viewer\'s key that is revoked');
  await page.getByRole('button', { name: 'Sign in with an API key instead' }).click();
  const keyField = page.getByLabel('API key');
  await keyField.waitFor();
  assert.ok(await keyField.evaluate((el) => el === document.activeElement && el.type === 'password'), 'the key field is a focused password field');
  await keyField.fill('ebk_aaaaaaaaaaaaaaaa_not-a-key');
  await keyField.press('Enter');
  await page.getByTestId('sign-in-error').getByText('This API key is not valid (unknown, revoked or expired).').waitFor();
  assert.equal(await page.evaluate(() => sessionStorage.getItem('eb.apiKey')), null, 'a refused key is stored');
  const viewer = await api(apiBase, '/api-keys', { method: 'POST', body: JSON.stringify({ name: 'e2e-viewer', role: 'viewer' }) });
  assert.equal(viewer.status, 201, JSON.stringify(viewer.body));
  await keyField.fill(viewer.body.secret);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByTestId('identity-name').getByText('e2e-viewer').waitFor();
  assert.equal(await page.getByTestId('identity-role').textContent(), 'viewer');
  assert.equal(await page.getByTestId('instance-admin').count(), 0);
  await page.getByRole('link', { name: 'Buses' }).click();
  await page.getByRole('link', { name: 'orders', exact: true }).waitFor();
  // The access pages say what a viewer may not do, rather than show the API's 403.
  await page.getByRole('link', { name: 'API keys', exact: true }).click();
  await page.getByTestId('no-access').getByText('Your role in account default is viewer, which may not manage API keys').waitFor();
  await audit(page, 'API keys (a viewer)');
  await openUserMenu(page);
  assert.equal(await page.getByRole('menuitem', { name: 'Account security' }).count(), 0, 'an API key is offered Account security');
  await page.keyboard.press('Escape');
  assert.equal((await api(apiBase, `/api-keys/${viewer.body.id}`, { method: 'DELETE' })).status, 204);
  await page.getByRole('link', { name: 'Runtime' }).click();
  await page.getByTestId('sign-in-notice').getByText('The server refused your API key').waitFor();
  await keyField.waitFor();
  assert.equal(await page.evaluate(() => sessionStorage.getItem('eb.apiKey')), null);
  await audit(page, 'Sign in (API key)');
  // The sign-in screen follows the system's scheme too.
  await page.emulateMedia({ colorScheme: 'dark' });
  await until('the sign-in screen to turn dark', async () => (await colorScheme(page)) === 'dark', 5000);
  await audit(page, 'Sign in (API key) (dark)');
  await page.emulateMedia({ colorScheme: 'light' });

  log(`axe-core: ${audited.size} pages audited, ${axeFindings.length} serious or critical violations`);
  assert.deepEqual(axeFindings, [], 'axe-core found serious or critical violations');
  log('ok');
}

let failed = false;
let failurePage;
try {
  await main();
} catch (e) {
  failed = true;
  console.error('[e2e] FAILED:', e);
  if (failurePage) {
    const shot = join(tmpdir(), 'eb-e2e-failure.png');
    await failurePage.screenshot({ path: shot }).catch(() => {});
    const alerts = await failurePage.getByRole('alert').allInnerTexts().catch(() => []);
    console.error(`[e2e] page at ${failurePage.url()}; screenshot ${shot}; alerts: ${JSON.stringify(alerts)}`);
  }
} finally {
  for (const c of cleanups) {
    try {
      await c();
    } catch {
      /* best effort */
    }
  }
}
process.exit(failed ? 1 : 0);
