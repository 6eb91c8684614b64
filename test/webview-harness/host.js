// The host's side of the panel protocol, in the page: what VS Code's webview runtime and the
// extension's panel host do, reduced to what a test drives. `acquireVsCodeApi()` works once, like
// VS Code's; messages the panel posts are structured-cloned into `__host.sent`; `__host.post(msg)`
// delivers a HostMessage as a window message event, as the webview runtime does; the state
// survives reloads (sessionStorage), as VS Code keeps it for the webview serializer.
(() => {
  'use strict';
  const sent = [];
  const violations = [];
  let acquired = false;
  let state;
  /** The state's JSON not yet written to sessionStorage (null: written). */
  let kept = null;
  let hiding = false;
  const KEEP_AT_ONCE_CHARS = 64 * 1024;
  const keep = () => {
    if (kept !== null) sessionStorage.setItem('swarm-harness-state', kept);
    kept = null;
  };
  // Registered before the panel's own pagehide save, which then writes at once (hiding).
  window.addEventListener('pagehide', () => {
    hiding = true;
    keep();
  });
  window.addEventListener('pageshow', () => {
    hiding = false;
  });
  try {
    const kept = sessionStorage.getItem('swarm-harness-state');
    state = kept === null ? undefined : JSON.parse(kept);
  } catch {
    state = undefined;
  }
  document.addEventListener('securitypolicyviolation', (e) => {
    violations.push({ directive: e.violatedDirective, blocked: e.blockedURI, sample: e.sample, source: e.sourceFile, line: e.lineNumber });
  });

  window.acquireVsCodeApi = () => {
    if (acquired) throw new Error('An instance of the VS Code API has already been acquired');
    acquired = true;
    return Object.freeze({
      postMessage(message) {
        const copy = structuredClone(message);
        copy.__at = performance.now();
        sent.push(copy);
      },
      getState() {
        return state;
      },
      // As VS Code's: the state kept as given, posted out of the frame as JSON. The copy that outlives
      // a reload is written now when small, else when the page goes (sessionStorage's write of a
      // megabyte costs the page's thread ~100 ms, which VS Code's webview never pays).
      setState(next) {
        state = next;
        kept = JSON.stringify(next);
        if (hiding || kept.length <= KEEP_AT_ONCE_CHARS) keep();
        return next;
      },
    });
  };

  const words = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet'];
  /** ResultRows like the core makes: `n` rows from `from`, every `failEvery`-th failed. */
  function makeRows(n, opts = {}) {
    const from = opts.from ?? 0;
    const endpoints = opts.endpoints ?? ['gpu01:8000', 'gpu02:8000', 'gpu03:8000', 'gpu04:8000'];
    const failEvery = opts.failEvery ?? 0;
    const rows = new Array(n);
    for (let k = 0; k < n; k++) {
      const i = from + k;
      const failed = failEvery > 0 && i % failEvery === failEvery - 1;
      const sent = 5 + (i % 97);
      rows[k] = {
        index: i,
        status: failed ? 'failed' : 'ok',
        ok: !failed,
        text: failed ? '' : `answer ${i}: ${words[i % 10]} ${words[(i * 7) % 10]} ${'lorem ipsum '.repeat(1 + (i % 5))}`,
        reasoning: null,
        error: failed ? `HTTP 500 from server: out of KV cache blocks (request ${i})` : null,
        endpoint: endpoints[i % endpoints.length],
        finishReason: failed ? null : 'stop',
        promptTokens: failed ? null : 12 + (i % 13),
        completionTokens: failed ? null : 20 + (i % 40),
        attempts: failed ? 3 : 1,
        timings: { queuedMs: 1, sentMs: sent, firstByteMs: sent + 10, doneMs: sent + 40 + (i % 300) },
        input: {},
        prompt: `prompt ${i}: tell me about ${words[i % 10]}`,
      };
    }
    return rows;
  }

  /** Rows as OpenedRun carries them: JSONL. */
  const jsonl = (rows) => rows.map((r) => JSON.stringify(r)).join('\n');

  /** Resolves after the next frame has painted. */
  const painted = () => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));

  /**
   * Posts `message`, then waits until `done()` holds, polling each frame; resolves the milliseconds
   * from the post to the frame painted after that.
   */
  async function timeUntil(message, done, timeoutMs = 30000) {
    const t0 = performance.now();
    window.postMessage(message, '*');
    for (;;) {
      await new Promise((r) => requestAnimationFrame(r));
      if (done()) break;
      if (performance.now() - t0 > timeoutMs) throw new Error('timed out');
    }
    await painted();
    return performance.now() - t0;
  }

  /** When the compose view is first in the DOM and a frame has painted it (ms since navigation). */
  const composePainted = new Promise((resolve) => {
    const seen = () => {
      if (!document.getElementById('compose')) return false;
      requestAnimationFrame(() => setTimeout(() => resolve(performance.now()), 0));
      return true;
    };
    const mo = new MutationObserver(() => seen() && mo.disconnect());
    mo.observe(document, { childList: true, subtree: true });
  });

  /**
   * The bench: `n` rows shown through showRun, then through one runProgress; for each, the ms from
   * the post to the frame painted with the table full (its row count, row 0's answer, the label).
   */
  async function benchRows(n, record) {
    const rows = makeRows(n);
    const shown = (label) =>
      document.querySelector('#results-table')?.getAttribute('data-count') === String(n) &&
      document.querySelector('#run-status .run-label')?.textContent === label &&
      !!document.querySelector('#results-table .vl-row:not([hidden]) .c-resp')?.textContent?.startsWith('answer 0');
    const show = await timeUntil({ type: 'showRun', record: { ...record, label: 'bench: showRun' }, resultsJsonl: jsonl(rows) }, () => shown('bench: showRun'));
    window.postMessage({ type: 'runStarted', runId: 'bench', kind: 'single', pattern: 'scatter', total: n, rounds: 1, label: 'bench: runProgress', startedAt: new Date().toISOString(), context: { hostfile: null, endpoints: 4, model: null, params: { batch: true, tags: [] } } }, '*');
    await painted();
    const progress = await timeUntil(
      { type: 'runProgress', runId: 'bench', done: n, ok: n, failed: 0, total: n, elapsedMs: 1000, resultsJsonl: jsonl(rows) },
      () => shown('bench: runProgress') && document.querySelector('#progress-done')?.textContent === n.toLocaleString('en-US'),
    );
    // What the message itself costs (structured clone out and back), with no table behind it.
    const t0 = performance.now();
    const transfer = await new Promise((resolve) => {
      window.addEventListener('message', function probe(e) {
        if (e.data?.type !== 'bench-probe') return;
        window.removeEventListener('message', probe);
        resolve(e.data.results.length && performance.now() - t0);
      });
      window.postMessage({ type: 'bench-probe', results: rows }, '*');
    });
    return { show, progress, transfer };
  }

  /**
   * The longest gap between animation frames (and between a frame and the end), measured in the
   * page: start() begins a requestAnimationFrame loop, stop() ends it and gives the longest gap, ms.
   */
  const frameGaps = (() => {
    let running = false;
    let last = 0;
    let longest = 0;
    const tick = (t) => {
      if (!running) return;
      longest = Math.max(longest, t - last);
      last = t;
      requestAnimationFrame(tick);
    };
    return {
      start() {
        running = true;
        longest = 0;
        last = performance.now();
        requestAnimationFrame(tick);
      },
      stop() {
        running = false;
        return Math.max(longest, performance.now() - last);
      },
    };
  })();

  window.__host = {
    frameGaps,
    composePainted,
    benchRows,
    sent,
    violations,
    post(message) {
      window.postMessage(message, '*');
    },
    get state() {
      return state;
    },
    makeRows,
    jsonl,
    painted,
    timeUntil,
  };
})();
