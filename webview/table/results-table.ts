/**
 * `<swarm-results-table>`: the run's responses in input order, virtualized (VirtualList). Every
 * prompt and answer goes in with textContent: model output is text, never markup.
 */
import { promptLatencies } from '../../src/core/run/summary.ts';
import type { ResultRow } from '../../src/panel/protocol.ts';
import { int, ms, oneLine } from '../lib/format.ts';
import { metricHelp } from '../lib/latency.ts';
import { listPosition, requestSentText, type SentContext } from '../lib/request-sent.ts';
import { latencyMs, type ResultsStore, type SortKey } from '../lib/results.ts';
import { el, VirtualList } from './virtual-list.ts';

export interface ResultsTableData {
  store: ResultsStore;
  /** Input indexes to show, in order; null: every row (pending ones too). */
  view: Int32Array | null;
  /** Changes whenever the rows or the view change. */
  version: string;
  /** The run the rows belong to: the open row is one of its prompts, closed when another run comes. */
  run: string;
  sort: SortKey;
  desc: boolean;
  /** The run was streamed: TTFT and TPOT columns show. */
  streamed: boolean;
  /** How its requests were made, for an open row's "Request sent". */
  sent: SentContext;
}

export interface ResultsTableActions {
  copy(text: string): void;
  open(text: string, language?: string): void;
  /** A heading was clicked: sort by its column (again: the other way; a third time: input order). */
  sort(key: SortKey): void;
  /** The rows at these input indices whole (they came cut: see RowCut); resolves once the store has them. */
  whole(indices: number[]): Promise<void>;
}

const ROW_HEIGHT = 26;
/** Heading, cell class, sort key ('' : the column does not sort); '#' sorts back to input order. */
const COLUMNS: Array<[string, string, SortKey | null]> = [
  ['#', 'idx', ''],
  ['Prompt', 'prompt', null],
  ['Response', 'resp', null],
  ['Endpoint', 'ep', 'endpoint'],
  ['Status', 'status', 'status'],
  ['Latency', 'lat', 'latency'],
  // Streamed runs only (CSS hides them otherwise). Per-prompt ITL would equal TPOT: the core keeps
  // inter-token gaps as the run's distribution (the summary's ITL), not per prompt.
  ['TTFT', 'ttft', 'ttft'],
  ['TPOT', 'tpot', 'tpot'],
  ['Tokens', 'tok', 'tokens'],
];
/** Columns the user may drag wider or narrower (Response takes what is left). */
const RESIZABLE = new Set(['idx', 'prompt', 'ep', 'status', 'lat', 'ttft', 'tpot', 'tok']);
const MIN_COLUMN_PX = 32;

function button(label: string, action: string, icon: string): HTMLElement {
  const b = document.createElement('vscode-button');
  b.setAttribute('secondary', '');
  b.setAttribute('icon', icon);
  b.dataset.action = action;
  b.textContent = label;
  return b;
}

/** `host:port` in two parts: the host may be cut with an ellipsis, the port always shows. */
function setEndpoint(cell: HTMLElement, endpoint: string): void {
  const m = /^(.*?)(:\d+)$/.exec(endpoint);
  const [host, port] = [cell.children[0] as HTMLElement, cell.children[1] as HTMLElement];
  host.textContent = m ? m[1]! : endpoint;
  port.textContent = m ? m[2]! : '';
  cell.title = endpoint;
}

export class ResultsTable extends HTMLElement {
  actions: ResultsTableActions | null = null;
  private list: VirtualList | null = null;
  private data: ResultsTableData | null = null;
  private lastVersion = '';
  /** The open row, by input index (so it stays open through filtering). */
  private openIndex = -1;
  private run = '';
  /** Rows in view that came without their answer's start, asked for whole once per store (a failed ask is not repeated at each frame). */
  private asked = { store: undefined as ResultsStore | undefined, indices: new Set<number>(), next: [] as number[] };
  /** What each closed row element shows (its store, input index and row), so an unchanged one is not written again. */
  private readonly drawnAs = new WeakMap<HTMLElement, { row: ResultRow | undefined; store: ResultsStore | undefined; index: number }>();

  set tableData(data: ResultsTableData) {
    this.data = data;
    if (this.isConnected) this.refresh();
  }

  connectedCallback(): void {
    if (!this.list) this.build();
    this.refresh();
  }

  /** Rows in the DOM now (what virtualization keeps small). */
  get renderedRows(): number {
    return this.list?.renderedRows ?? 0;
  }

  private indexAt(pos: number): number {
    const view = this.data?.view;
    return view ? view[pos]! : pos;
  }

  private posOf(index: number): number {
    const view = this.data?.view;
    if (!view) return index;
    if (this.data?.sort) return view.indexOf(index); // not in input order: no binary search
    let lo = 0;
    let hi = view.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (view[mid] === index) return mid;
      if (view[mid]! < index) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  private build(): void {
    this.classList.add('rt');
    const head = el('div', 'rt-head rt-cells');
    head.setAttribute('role', 'row');
    head.setAttribute('aria-rowindex', '1');
    for (const [name, cls, key] of COLUMNS) {
      const c = el('div', `rt-th c-${cls}`);
      c.setAttribute('role', 'columnheader');
      c.dataset.col = cls;
      c.title = metricHelp(name) || name; // a narrow column cuts its heading; a metric says what it means
      if (key !== null) {
        const b = el('button', 'rt-sort', name);
        b.type = 'button';
        b.dataset.sort = key;
        b.title = key ? `Sort by ${name.toLowerCase()}` : 'Input order';
        c.append(b);
      } else {
        c.append(el('span', '', name));
      }
      if (RESIZABLE.has(cls)) {
        const grip = el('div', 'rt-grip');
        grip.setAttribute('aria-hidden', 'true');
        c.append(grip);
      }
      head.append(c);
    }
    head.addEventListener('click', (e) => {
      const b = (e.target as HTMLElement).closest<HTMLElement>('[data-sort]');
      if (b) this.actions?.sort(b.dataset.sort as SortKey);
    });
    head.addEventListener('pointerdown', (e) => this.startResize(e));
    const scroller = el('div', 'rt-scroll');
    scroller.setAttribute('role', 'grid');
    scroller.setAttribute('aria-label', 'Responses in input order. Arrow keys move, Enter opens a row.');
    scroller.setAttribute('aria-colcount', String(COLUMNS.length));
    scroller.setAttribute('aria-readonly', 'true');
    this.append(scroller);
    this.list = new VirtualList(scroller, {
      rowHeight: ROW_HEIGHT,
      idPrefix: 'rt-row',
      rowIndexOffset: 1,
      header: head,
      renderer: { create: () => this.createRow(), fill: (row, pos, expanded) => this.fillRow(row, pos, expanded) },
      onToggle: (pos) => this.toggle(pos),
      onKey: (e, pos) => {
        if ((e.key === 'c' || e.key === 'C') && !e.ctrlKey && !e.metaKey && pos >= 0) {
          void this.wholeRow(this.indexAt(pos)).then((r) => r && this.actions?.copy(r.ok ? r.text : (r.error ?? r.text)));
          return true;
        }
        return false;
      },
    });
    scroller.addEventListener('click', (e) => {
      const b = (e.target as HTMLElement).closest<HTMLElement>('[data-action]');
      if (!b) return;
      const row = b.closest<HTMLElement>('.vl-row');
      if (row) void this.wholeRow(this.indexAt(Number(row.dataset.index))).then((r) => r && this.act(b.dataset.action, r));
    });
  }

  /** The row at input index `index`, whole: a cut one is asked for first (copy, open and JSON take all of it). */
  private async wholeRow(index: number): Promise<ResultRow | undefined> {
    if (this.data?.store.rows[index]?.cut) await this.actions?.whole([index]);
    return this.data?.store.rows[index];
  }

  private act(action: string | undefined, r: ResultRow): void {
    const answer = r.ok ? r.text : (r.error ?? r.text);
    const a = this.actions;
    const acts: Record<string, () => void> = {
      'copy-prompt': () => a?.copy(r.prompt),
      'copy-response': () => a?.copy(answer),
      'open-prompt': () => a?.open(r.prompt),
      'open-response': () => a?.open(answer),
      'open-json': () => a?.open(JSON.stringify(r, null, 2), 'json'),
    };
    if (action) acts[action]?.();
  }

  private toggle(pos: number): void {
    const index = this.indexAt(pos);
    this.openIndex = this.openIndex === index ? -1 : index;
    this.list?.setExpanded(this.openIndex < 0 ? -1 : pos);
  }

  private refresh(): void {
    if (!this.list || !this.data) return;
    const { store, view, version, run, sort, desc, streamed } = this.data;
    this.classList.toggle('streamed', streamed);
    for (const th of this.querySelectorAll<HTMLElement>('.rt-th')) {
      const key = th.querySelector<HTMLElement>('[data-sort]')?.dataset.sort;
      th.setAttribute('aria-sort', key && key === sort ? (desc ? 'descending' : 'ascending') : key === '' && !sort ? 'ascending' : 'none');
    }
    if (run !== this.run) {
      this.run = run;
      this.openIndex = -1;
    }
    const changed = version !== this.lastVersion;
    this.lastVersion = version;
    const count = view ? view.length : store.length;
    this.list.update(count, changed);
    const pos = this.openIndex < 0 ? -1 : this.posOf(this.openIndex);
    if (pos !== this.list.expanded) this.list.setExpanded(pos);
    this.setAttribute('aria-busy', 'false');
    this.dataset.count = String(count);
    if (changed) this.fitEndpointColumn(store.endpoints());
  }

  /**
   * The Endpoint column is as wide as the longest `host:port` the run has (within bounds), so
   * endpoints that differ only in their port can be told apart; narrower than that, the cell cuts
   * the host and keeps the port (see setEndpoint).
   */
  private fitEndpointColumn(endpoints: readonly string[]): void {
    const longest = endpoints.reduce((n, e) => Math.max(n, e.length), 0);
    const width = `${Math.min(24, Math.max(10, longest + 1))}ch`;
    if (this.style.getPropertyValue('--rt-ep') !== width) this.style.setProperty('--rt-ep', width);
  }

  /** Drags a heading's right edge: that column takes a width in px (kept while the panel lives). */
  private startResize(e: PointerEvent): void {
    const grip = (e.target as HTMLElement).closest<HTMLElement>('.rt-grip');
    const th = grip?.parentElement;
    const col = th?.dataset.col;
    if (!grip || !th || !col) return;
    e.preventDefault();
    const startX = e.clientX;
    const startWidth = th.getBoundingClientRect().width;
    grip.setPointerCapture(e.pointerId);
    const move = (m: PointerEvent) => this.style.setProperty(`--w-${col}`, `${Math.max(MIN_COLUMN_PX, Math.round(startWidth + m.clientX - startX))}px`);
    const up = () => {
      grip.removeEventListener('pointermove', move);
      grip.removeEventListener('pointerup', up);
      grip.removeEventListener('pointercancel', up);
    };
    grip.addEventListener('pointermove', move);
    grip.addEventListener('pointerup', up);
    grip.addEventListener('pointercancel', up);
  }

  private createRow(): HTMLElement {
    const row = el('div');
    const cells = el('div', 'rt-cells');
    for (const [, name] of COLUMNS) {
      const c = el('div', `rt-td c-${name}`);
      c.setAttribute('role', 'gridcell');
      if (name === 'ep') c.append(el('span', 'ep-host'), el('span', 'ep-port'));
      cells.append(c);
    }
    row.append(cells);
    return row;
  }

  private fillRow(row: HTMLElement, pos: number, expanded: boolean): void {
    const index = this.indexAt(pos);
    const store = this.data?.store;
    const r = store?.rows[index];
    // A closed row showing this very row already is left as it is: a run's progress changes the
    // store on every message, mostly rows out of view, and rewriting the rows in view each time made
    // the page lay them all out again (a fifth of a frame at 10,000 prompts).
    const was = this.drawnAs.get(row);
    if (!expanded && was && was.row === r && was.store === store && was.index === index) return;
    if (expanded) this.drawnAs.delete(row);
    else this.drawnAs.set(row, { row: r, store, index });
    const c = row.firstElementChild!.children;
    const [idx, prompt, resp, ep, status, lat, ttft, tpot, tok] = [c[0]!, c[1]!, c[2]!, c[3]!, c[4]!, c[5]!, c[6]!, c[7]!, c[8]!] as HTMLElement[];
    // Prompts are numbered from 1 in every view (Compose, Results, the reduce tree).
    idx.textContent = r?.level !== undefined && r.level > 0 ? `${index + 1} · L${r.level}` : String(index + 1);
    row.classList.remove('s-ok', 's-failed', 's-cancelled', 's-pending');
    if (!r) {
      row.classList.add('s-pending');
      prompt.textContent = oneLine(this.data?.store.prompts[index] ?? '');
      resp.textContent = '…';
      setEndpoint(ep, '');
      status.textContent = 'pending';
      lat.textContent = '';
      ttft.textContent = '';
      tpot.textContent = '';
      tok.textContent = '';
      row.title = '';
    } else {
      row.classList.add(`s-${r.status}`);
      prompt.textContent = oneLine(r.prompt);
      resp.textContent = oneLine(r.ok ? r.text : (r.error ?? r.text) || r.status) + (r.cut?.text ? '…' : '');
      if (r.ok && r.cut?.text && !r.text) this.askWhole(r.index);
      setEndpoint(ep, r.endpoint ?? '—');
      status.textContent = r.status;
      lat.textContent = ms(latencyMs(r));
      const l = promptLatencies(r);
      ttft.textContent = ms(l.ttft);
      tpot.textContent = ms(l.tpot);
      tok.textContent = r.completionTokens === null ? '—' : int(r.completionTokens);
      // A batched request's usage covers its whole list: per prompt, only streaming counts tokens.
      tok.title = r.completionTokens === null ? 'Not reported per prompt (batched usage covers the whole request); stream to count each prompt' : `prompt ${r.promptTokens ?? '—'} · completion ${r.completionTokens}`;
    }
    const detail = row.querySelector('.vl-detail');
    if (expanded && r) row.append(this.detail(r, detail));
    else detail?.remove();
  }

  /**
   * A row in view came without its answer's start (a message of many rows leaves them out): it is
   * asked for whole, with the others drawn in the same pass, in one request.
   */
  private askWhole(index: number): void {
    const store = this.data?.store;
    const a = this.asked;
    if (a.store !== store) this.asked = { store, indices: new Set(), next: [] };
    if (this.asked.indices.has(index)) return;
    this.asked.indices.add(index);
    if (this.asked.next.push(index) > 1) return;
    queueMicrotask(() => {
      const indices = this.asked.next;
      this.asked.next = [];
      void this.actions?.whole(indices);
    });
  }

  private detail(r: ResultRow, old: Element | null): HTMLElement {
    old?.remove();
    const d = el('div', 'vl-detail');
    const section = (label: string, text: string, cls = '') => {
      const h = el('div', 'vl-label', label);
      const pre = el('pre', `vl-text ${cls}`, text);
      pre.tabIndex = 0;
      d.append(h, pre);
    };
    // A live row came cut (RowCut): its start shows while the rest is asked for; the row is drawn again whole.
    if (r.cut) {
      void this.actions?.whole([r.index]);
      d.append(el('div', 'vl-label muted', 'Loading the whole answer…'));
    }
    section('Prompt', r.prompt);
    if (r.ok) section('Response', r.cut?.text ? `${r.text}…` : r.text);
    else section(r.status === 'cancelled' ? 'Cancelled' : 'Server message', r.error ?? '(no message)', 'error');
    if (!r.ok && r.text) section('Partial response', r.text);
    if (r.reasoning) section('Reasoning', r.reasoning);
    const t = r.timings;
    const meta = [
      `status ${r.status}`,
      `endpoint ${r.endpoint ?? '—'}`,
      `latency ${ms(latencyMs(r))}`,
      `first byte ${t.firstByteMs === null || t.sentMs === null ? '—' : ms(t.firstByteMs - t.sentMs)}`,
      ...(t.firstTokenMs === null ? [] : [`TTFT ${ms(promptLatencies(r).ttft)} · TPOT ${ms(promptLatencies(r).tpot)}`]),
      `queued ${ms(t.queuedMs)} · sent ${ms(t.sentMs)} · done ${ms(t.doneMs)} (since start)`,
      `tokens ${r.promptTokens ?? '—'} in · ${r.completionTokens ?? '—'} out`,
      `finish ${r.finishReason ?? '—'}`,
      `attempts ${r.attempts}`,
    ];
    d.append(el('div', 'vl-meta', meta.join('  ·  ')));
    if (Object.keys(r.input).length) d.append(el('div', 'vl-label', 'Input'), el('pre', 'vl-text', JSON.stringify(r.input, null, 2)));
    if (this.data) {
      const sent = el('details', 'vl-sent');
      sent.open = old?.querySelector('details.vl-sent')?.hasAttribute('open') ?? false; // a redraw keeps it as the user left it
      const place = this.data.sent.batched ? listPosition(this.data.store.rows, r) : null;
      sent.append(el('summary', 'vl-label', 'Request sent'), el('pre', 'vl-text', requestSentText(r, this.data.sent, place)));
      d.append(sent);
    }
    const bar = el('div', 'vl-actions');
    bar.append(
      button('Copy prompt', 'copy-prompt', 'copy'),
      button(r.ok ? 'Copy response' : 'Copy message', 'copy-response', 'copy'),
      button('Open prompt', 'open-prompt', 'go-to-file'),
      button(r.ok ? 'Open response' : 'Open message', 'open-response', 'go-to-file'),
      button('Open as JSON', 'open-json', 'json'),
    );
    d.append(bar);
    return d;
  }
}

customElements.define('swarm-results-table', ResultsTable);

declare global {
  interface HTMLElementTagNameMap {
    'swarm-results-table': ResultsTable;
  }
}
