/**
 * The bridge's demo chat page: talks to Eve's HTTP session API (`/eve/v1`, stream version 26).
 *
 * - The first message creates a session (`POST /session`); later ones are follow-ups
 *   (`POST /session/:id`), which steer a running turn.
 * - One follow stream per session, over a WebSocket (`GET /session/:id/ws`, subprotocol `eve.v1`,
 *   one event per text frame): when it closes (a restart, or 4008 for a reader that fell behind),
 *   it reconnects from the cursor (events seen) unless the session ended. Only when the WebSocket
 *   cannot be opened does it read one NDJSON response (`GET /session/:id/stream`, leased with
 *   `streamControlVersion=1`) instead, then tries the WebSocket again.
 * - Every event is rendered from the stream, in order, with `textContent` only: event text is untrusted.
 * - `#token=<value>` in the address gives a bearer token for every request; the fragment is then removed.
 *   A WebSocket cannot carry headers: the token goes as a `bearer.<token>` subprotocol (never echoed
 *   back), or as `access_token` when it is not a valid protocol name.
 */

// Beside this script, so that the page works wherever the bridge is mounted.
const API_BASE = new URL('eve/v1', import.meta.url).pathname;
const TERMINAL_EVENTS = new Set(['session.completed', 'session.failed']);
/** The server sends a heartbeat at least every 10 s; a silent connection this long is dead. */
const STREAM_IDLE_TIMEOUT_MS = 30_000;
const WEBSOCKET_PROTOCOL = 'eve.v1';
/** The server closes a reader that fell too far behind with this code; resume from the cursor. */
const SLOW_READER_CLOSE_CODE = 4008;
/** RFC 6455 subprotocols are HTTP tokens; other tokens go in the query. */
const PROTOCOL_TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

const ui = {
  transcript: document.getElementById('transcript'),
  form: document.getElementById('composer'),
  message: document.getElementById('message'),
  send: document.getElementById('send'),
  cancel: document.getElementById('cancel'),
  newSession: document.getElementById('new-session'),
  status: document.getElementById('status'),
};

const bearerToken = takeTokenFromAddress();

/** The session on screen; replaced by "New session", which also stops the old one's stream. */
let session = null;

function newSessionState(id) {
  return {
    id,
    cursor: 0,
    lastEvent: undefined,
    stop: new AbortController(),
    openAssistantText: null,
    openReasoning: null,
    toolBoxes: new Map(),
    inputRequests: new Map(),
  };
}

function takeTokenFromAddress() {
  const token = new URLSearchParams(location.hash.slice(1)).get('token');
  if (token === null) return undefined;
  history.replaceState(null, '', location.pathname + location.search);
  return token;
}

function requestHeaders(extra = {}) {
  return bearerToken ? { ...extra, authorization: `Bearer ${bearerToken}` } : extra;
}

async function postJson(path, body) {
  const response = await fetch(API_BASE + path, {
    method: 'POST',
    headers: requestHeaders({ 'content-type': 'application/json' }),
    body: JSON.stringify(body),
  });
  const payload = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(payload.error ? `${payload.error} (${payload.code})` : `HTTP ${response.status}`);
  return payload;
}

const sessionPath = (id, suffix = '') => `/session/${encodeURIComponent(id)}${suffix}`;

// ---------------------------------------------------------------- the follow stream

async function followStream(current) {
  let retryDelayMs = 500;
  let tryWebSocket = typeof WebSocket === 'function';
  while (!current.stop.signal.aborted && !TERMINAL_EVENTS.has(current.lastEvent?.type)) {
    try {
      if (tryWebSocket) {
        const { opened, code, reason } = await readWebSocketOnce(current);
        if (!opened) {
          tryWebSocket = false; // read one NDJSON response instead (it also reports why, e.g. a 401)
          continue;
        }
        retryDelayMs = 500;
        if (current.stop.signal.aborted || TERMINAL_EVENTS.has(current.lastEvent?.type)) return;
        if (code === SLOW_READER_CLOSE_CODE) continue; // resume from the cursor at once
        if (code !== 1000) throw new Error(reason || `the connection closed (${code})`);
        await sleep(250);
        continue;
      }
      const leaseEnded = await readStreamOnce(current);
      tryWebSocket = typeof WebSocket === 'function';
      retryDelayMs = 500;
      if (!leaseEnded) await sleep(250);
    } catch (error) {
      if (current.stop.signal.aborted) return;
      if (error.permanent) return renderClientError(`Stream: ${error.message}`);
      setStatus('reconnecting', `Reconnecting… (${error.message})`);
      await sleep(retryDelayMs);
      retryDelayMs = Math.min(retryDelayMs * 2, 10_000);
      tryWebSocket = typeof WebSocket === 'function';
    }
  }
}

/**
 * Follows the stream over one WebSocket from the cursor until it closes. Resolves with whether it
 * opened, and the close code and reason. Frames are event lines; `$eve` control frames are skipped.
 */
function readWebSocketOnce(current) {
  return new Promise((resolve) => {
    const url = new URL(API_BASE + sessionPath(current.id, '/ws'), location.href);
    url.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
    url.searchParams.set('startIndex', String(current.cursor));
    const protocols = [WEBSOCKET_PROTOCOL];
    if (bearerToken !== undefined) {
      if (PROTOCOL_TOKEN.test(bearerToken)) protocols.push(`bearer.${bearerToken}`);
      else url.searchParams.set('access_token', bearerToken);
    }
    let socket;
    try {
      socket = new WebSocket(url, protocols);
    } catch {
      resolve({ opened: false });
      return;
    }
    let opened = false;
    const stop = () => socket.close(1000, 'done');
    const settle = (outcome) => {
      current.stop.signal.removeEventListener('abort', stop);
      resolve(outcome);
    };
    current.stop.signal.addEventListener('abort', stop, { once: true });
    socket.addEventListener('open', () => {
      opened = true;
      if (ui.status.dataset.state === 'reconnecting') updateStatusFromLastEvent(current);
    });
    socket.addEventListener('message', (message) => {
      const record = JSON.parse(message.data);
      if (typeof record.$eve !== 'string' && !current.stop.signal.aborted) handleEvent(current, record);
    });
    // A refused upgrade or a blocked connection errors before opening (Chromium fires no close
    // for a connection its CSP blocks): that socket cannot be opened.
    socket.addEventListener('error', () => {
      if (opened) return;
      socket.close();
      settle({ opened: false });
    });
    socket.addEventListener('close', (event) => settle({ opened, code: event.code, reason: event.reason }));
  });
}

/** Reads one response of the stream; true when the server ended it with a lease-ended line. */
async function readStreamOnce(current) {
  const idle = new AbortController();
  let idleTimer;
  const resetIdleTimer = () => {
    clearTimeout(idleTimer);
    idleTimer = setTimeout(() => idle.abort(new Error('the stream went silent')), STREAM_IDLE_TIMEOUT_MS);
  };
  resetIdleTimer();
  try {
    const query = `?startIndex=${current.cursor}&streamControlVersion=1`;
    const response = await fetch(API_BASE + sessionPath(current.id, '/stream') + query, {
      headers: requestHeaders({ accept: 'application/x-ndjson' }),
      signal: AbortSignal.any([current.stop.signal, idle.signal]),
      cache: 'no-store',
    });
    if (!response.ok) {
      const payload = await response.json().catch(() => ({}));
      const error = new Error(payload.error ?? `HTTP ${response.status}`);
      error.permanent = [401, 403, 404, 410].includes(response.status);
      throw error;
    }
    if (ui.status.dataset.state === 'reconnecting') updateStatusFromLastEvent(current);
    let leaseEnded = false;
    await readLines(response.body, resetIdleTimer, (line) => {
      const record = JSON.parse(line);
      if (typeof record.$eve === 'string') leaseEnded ||= record.$eve === 'stream.lease-ended';
      else if (!current.stop.signal.aborted) handleEvent(current, record);
    });
    return leaseEnded;
  } catch (error) {
    throw idle.signal.aborted ? idle.signal.reason : error;
  } finally {
    clearTimeout(idleTimer);
  }
}

/** Calls onLine for each complete, non-blank line; a partial last line is dropped (re-read from the cursor). */
async function readLines(body, onChunk, onLine) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    onChunk();
    buffered += decoder.decode(value, { stream: true });
    const lines = buffered.split('\n');
    buffered = lines.pop();
    for (const line of lines) if (line.trim() !== '') onLine(line);
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------- rendering events

function handleEvent(current, event) {
  if (typeof event.streamIndex === 'number') {
    if (event.streamIndex < current.cursor) return; // already seen
    current.cursor = event.streamIndex + 1;
  } else {
    current.cursor += 1;
  }
  current.lastEvent = event;
  const data = event.data ?? {};
  const render = renderers[event.type];
  if (render) render(current, data, event.type);
  updateStatusFromLastEvent(current);
}

const renderers = {
  'message.received': (current, data, type) => addItem(current, type, 'user', data.message),
  'message.appended': (current, data, type) => {
    current.openAssistantText ??= addItem(current, type, 'assistant streaming');
    current.openAssistantText.textContent += data.messageDelta;
    current.openAssistantText.scrollIntoView({ block: 'end' });
  },
  'message.completed': (current, data, type) => {
    const bubble = current.openAssistantText ?? addItem(current, type, 'assistant');
    bubble.textContent = data.message;
    finishStreaming(bubble, type);
    current.openAssistantText = null;
  },
  'reasoning.appended': (current, data, type) => {
    current.openReasoning ??= addReasoning(current, type);
    current.openReasoning.querySelector('.reasoning-text').textContent += data.reasoningDelta;
  },
  'reasoning.completed': (current, data, type) => {
    const details = current.openReasoning ?? addReasoning(current, type);
    details.querySelector('.reasoning-text').textContent = data.reasoning;
    details.dataset.eventType = type;
    current.openReasoning = null;
  },
  'actions.requested': (current, data, type) => {
    for (const action of data.actions ?? []) current.toolBoxes.set(action.callId, addToolBox(current, type, action));
  },
  'action.result': (current, data, type) => {
    const { result = {}, status, error } = data;
    const box = current.toolBoxes.get(result.callId) ?? addToolBox(current, 'actions.requested', result, { showInput: false });
    const failed = result.isError === true || status !== 'completed';
    const output = element('div', failed ? 'tool-result error' : 'tool-result');
    output.dataset.eventType = type;
    output.dataset.toolResult = status ?? '';
    output.append(element('span', 'label', failed ? `Result (${status})` : 'Result'), element('pre', '', outputText(result.output)));
    if (error) output.append(element('p', 'error-detail', `${error.code}: ${error.message}`));
    box.append(output);
  },
  'input.requested': (current, data, type) => {
    for (const request of data.requests ?? []) current.inputRequests.set(request.requestId, addInputRequest(current, type, request));
  },
  'input.resolved': (current, data) => {
    for (const { requestId, outcome } of data.resolutions ?? []) {
      const box = current.inputRequests.get(requestId);
      if (!box) continue;
      box.dataset.inputOutcome = outcome;
      for (const control of box.querySelectorAll('button, input')) control.disabled = true;
      box.append(element('p', 'outcome', `Answer: ${outcome}`));
    }
  },
  'authorization.required': (current, data, type) => {
    const item = addItem(current, type, 'auth');
    const challenge = data.authorization ?? {};
    const label = `Sign in to ${challenge.displayName || data.name}`;
    const url = safeHttpUrl(challenge.url);
    if (url) {
      const link = element('a', 'sign-in', label);
      Object.assign(link, { href: url, target: '_blank', rel: 'noopener noreferrer' });
      link.dataset.signIn = data.name;
      item.append(link);
    } else {
      item.append(element('span', 'sign-in', label));
    }
    if (challenge.userCode) item.append(element('p', '', `Code: ${challenge.userCode}`));
    if (challenge.instructions) item.append(element('p', '', challenge.instructions));
  },
  'authorization.completed': (current, data, type) => {
    const authorized = data.outcome === 'authorized';
    const text = authorized ? `${data.name}: Connected` : `${data.name}: ${data.outcome}${data.reason ? ` — ${data.reason}` : ''}`;
    const item = addItem(current, type, authorized ? 'auth done' : 'auth error', text);
    item.dataset.authorizationOutcome = data.outcome;
  },
  'step.failed': (current, data, type) => addItem(current, type, 'error', `Step failed: ${data.code} — ${data.message}`),
  'turn.failed': (current, data, type) => addItem(current, type, 'error', `Turn failed: ${data.code} — ${data.message}`),
  'turn.cancelled': (current, data, type) => addItem(current, type, 'notice', 'Turn cancelled.'),
  'context.cleared': (current, data, type) => addItem(current, type, 'notice', 'Context cleared.'),
  'session.completed': (current, data, type) => addItem(current, type, 'notice', 'Session ended.'),
  'session.failed': (current, data, type) => addItem(current, type, 'error', `Session failed: ${data.code} — ${data.message}`),
  'step.completed': (current) => closeOpenItems(current),
  'turn.completed': (current) => closeOpenItems(current),
};

function element(tag, className = '', text = '') {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text) node.textContent = text;
  return node;
}

/** Appends a transcript item, which ends the text or reasoning in progress. */
function addItem(current, eventType, className, text = '') {
  closeOpenItems(current);
  const item = element('div', `item ${className}`, text);
  item.dataset.eventType = eventType;
  ui.transcript.append(item);
  item.scrollIntoView({ block: 'end' });
  return item;
}

function closeOpenItems(current) {
  if (current.openAssistantText) finishStreaming(current.openAssistantText);
  current.openAssistantText = null;
  current.openReasoning = null;
}

function finishStreaming(bubble, eventType) {
  bubble.classList.remove('streaming');
  if (eventType) bubble.dataset.eventType = eventType;
}

function addReasoning(current, eventType) {
  const details = element('details', 'item reasoning');
  details.dataset.eventType = eventType;
  details.append(element('summary', '', 'Reasoning'), element('p', 'reasoning-text'));
  closeOpenItems(current);
  ui.transcript.append(details);
  return details;
}

function addToolBox(current, eventType, action, { showInput = true } = {}) {
  const box = addItem(current, eventType, 'tool');
  box.dataset.toolName = action.toolName;
  const title = element('p', 'tool-title', 'Tool ');
  title.append(element('code', '', action.toolName));
  box.append(title);
  if (showInput) box.append(element('pre', 'tool-input', JSON.stringify(action.input ?? null, null, 2)));
  return box;
}

function addInputRequest(current, eventType, request) {
  const box = addItem(current, eventType, 'input-request');
  box.dataset.requestId = request.requestId;
  box.append(element('p', '', request.prompt));
  const answer = (response) => {
    for (const control of box.querySelectorAll('button, input')) control.disabled = true;
    postJson(sessionPath(current.id), { inputResponses: [{ requestId: request.requestId, ...response }] }).catch((error) => {
      for (const control of box.querySelectorAll('button, input')) control.disabled = false;
      renderClientError(`Answer: ${error.message}`);
    });
  };
  const actions = element('div', 'input-actions');
  for (const option of request.options ?? []) {
    const button = element('button', `option ${option.style ?? 'default'}`, option.label);
    button.type = 'button';
    button.dataset.optionId = option.id;
    button.addEventListener('click', () => answer({ optionId: option.id }));
    actions.append(button);
  }
  box.append(actions);
  return box;
}

function renderClientError(text) {
  const item = element('div', 'item error', text);
  item.dataset.clientError = '';
  ui.transcript.append(item);
}

/** Tool output as text: strings as they are, MCP `content` text parts joined, anything else as JSON. */
function outputText(output) {
  if (typeof output === 'string') return output;
  const parts = Array.isArray(output?.content) ? output.content : null;
  if (parts?.every((part) => part?.type === 'text')) return parts.map((part) => part.text).join('\n');
  return JSON.stringify(output ?? null, null, 2);
}

function safeHttpUrl(value) {
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.href : null;
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------- status and controls

function updateStatusFromLastEvent(current) {
  const type = current.lastEvent?.type;
  if (TERMINAL_EVENTS.has(type)) setStatus('ended', 'Session ended. Start a new session to continue.');
  else if (type === 'turn.waiting' && current.lastEvent.data?.on === 'input') setStatus('input', 'Waiting for your answer…');
  else if (type === 'session.waiting' || type === undefined || type === 'session.started') setStatus('idle', 'Idle');
  else setStatus('working', 'Working…');
}

function setStatus(state, text) {
  ui.status.dataset.state = state;
  ui.status.textContent = text;
  const turnRunning = state === 'working' || state === 'input';
  ui.cancel.hidden = !turnRunning;
  ui.transcript.setAttribute('aria-busy', String(state === 'working'));
  ui.send.disabled = state === 'ended';
}

async function sendMessage() {
  const message = ui.message.value;
  if (message.trim() === '' || ui.send.disabled) return;
  ui.send.disabled = true;
  try {
    if (session) {
      await postJson(sessionPath(session.id), { message });
    } else {
      const { sessionId } = await postJson('/session', { message });
      session = newSessionState(sessionId);
      followStream(session);
    }
    ui.message.value = '';
  } catch (error) {
    renderClientError(`Send failed: ${error.message}`);
  } finally {
    ui.send.disabled = ui.status.dataset.state === 'ended';
    ui.message.focus();
  }
}

async function cancelTurn() {
  if (!session) return;
  ui.cancel.disabled = true;
  try {
    await postJson(sessionPath(session.id, '/cancel'), {});
  } catch (error) {
    renderClientError(`Cancel failed: ${error.message}`);
  } finally {
    ui.cancel.disabled = false;
  }
}

function startOver() {
  session?.stop.abort();
  session = null;
  ui.transcript.replaceChildren();
  setStatus('idle', 'Idle');
  ui.message.value = '';
  ui.message.focus();
}

ui.form.addEventListener('submit', (event) => {
  event.preventDefault();
  sendMessage();
});
ui.message.addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    sendMessage();
  }
});
ui.cancel.addEventListener('click', cancelTurn);
ui.newSession.addEventListener('click', startOver);
