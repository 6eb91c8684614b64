/**
 * `<swarm-arms-table>`: a comparison's two arms prompt by prompt (as promptfoo shows providers): a
 * row per prompt with each arm's answer and latency, virtualized like the results (10,000 prompts
 * cost what 40 do). Enter opens a row: the prompt and both answers in full, side by side. Text only.
 */
import type { Arm } from '../../src/panel/protocol.ts';
import type { ArmCell, ArmPair } from '../lib/arm-pairs.ts';
import { ms, oneLine } from '../lib/format.ts';
import { el, VirtualList } from './virtual-list.ts';

export interface ArmsTableData {
  pairs: readonly ArmPair[];
  /** Changes whenever `pairs` does. */
  version: string;
}

const ROW_HEIGHT = 26;
const ARMS: readonly Arm[] = ['batched', 'individual'];
/** Heading, cell class. */
const COLUMNS: ReadonlyArray<[string, string]> = [
  ['#', 'idx'],
  ['Prompt', 'prompt'],
  ['batched', 'a-batched'],
  ['ms', 'l-batched'],
  ['individual', 'a-individual'],
  ['ms', 'l-individual'],
];

const answerText = (c: ArmCell | null) => (c ? oneLine(c.text) || (c.status === 'ok' ? '(empty)' : c.status) : '—');

export class ArmsTable extends HTMLElement {
  private list: VirtualList | null = null;
  private data: ArmsTableData = { pairs: [], version: '' };
  private lastVersion = '';
  private openIndex = -1;

  set tableData(data: ArmsTableData) {
    this.data = data;
    if (this.isConnected) this.refresh();
  }

  connectedCallback(): void {
    if (!this.list) this.build();
    this.refresh();
  }

  private build(): void {
    this.classList.add('at');
    const head = el('div', 'at-head at-cells');
    head.setAttribute('role', 'row');
    head.setAttribute('aria-rowindex', '1');
    for (const [name, cls] of COLUMNS) {
      const c = el('div', `at-th c-${cls}`, name);
      c.setAttribute('role', 'columnheader');
      if (name === 'ms') c.title = `End-to-end latency of the ${cls.slice(2)} arm's answer`;
      head.append(c);
    }
    const scroller = el('div', 'at-scroll');
    scroller.setAttribute('role', 'grid');
    scroller.setAttribute('aria-label', 'Both arms prompt by prompt. Arrow keys move, Enter opens a row.');
    scroller.setAttribute('aria-colcount', String(COLUMNS.length));
    scroller.setAttribute('aria-readonly', 'true');
    this.append(scroller);
    this.list = new VirtualList(scroller, {
      rowHeight: ROW_HEIGHT,
      idPrefix: 'at-row',
      rowIndexOffset: 1,
      header: head,
      renderer: { create: () => this.createRow(), fill: (row, pos, expanded) => this.fillRow(row, pos, expanded) },
      onToggle: (pos) => {
        const index = this.data.pairs[pos]?.index ?? -1;
        this.openIndex = this.openIndex === index ? -1 : index;
        this.list?.setExpanded(this.openIndex < 0 ? -1 : pos);
      },
    });
  }

  private refresh(): void {
    if (!this.list) return;
    const changed = this.data.version !== this.lastVersion;
    this.lastVersion = this.data.version;
    this.list.update(this.data.pairs.length, changed);
    const pos = this.openIndex < 0 ? -1 : this.data.pairs.findIndex((p) => p.index === this.openIndex);
    if (pos !== this.list.expanded) this.list.setExpanded(pos);
    this.dataset.count = String(this.data.pairs.length);
  }

  private createRow(): HTMLElement {
    const row = el('div');
    const cells = el('div', 'at-cells');
    for (const [, cls] of COLUMNS) {
      const c = el('div', `at-td c-${cls}`);
      c.setAttribute('role', 'gridcell');
      cells.append(c);
    }
    row.append(cells);
    return row;
  }

  private fillRow(row: HTMLElement, pos: number, expanded: boolean): void {
    const p = this.data.pairs[pos];
    const [idx, prompt, ...rest] = Array.from(row.firstElementChild!.children) as HTMLElement[];
    idx!.textContent = p ? String(p.index + 1) : '';
    prompt!.textContent = p ? oneLine(p.prompt) : '';
    row.classList.toggle('differ', Boolean(p?.differ));
    row.dataset.prompt = p ? String(p.index) : '';
    ARMS.forEach((arm, k) => {
      const c = p?.arms[arm] ?? null;
      const [answer, latency] = [rest[2 * k]!, rest[2 * k + 1]!];
      answer.textContent = answerText(c);
      answer.dataset.status = c?.status ?? 'missing';
      answer.title = c ? `${arm}: ${c.status}${c.endpoint ? ` on ${c.endpoint}` : ''}` : `${arm}: not in its kept round`;
      latency.textContent = c ? ms(c.latencyMs) : '';
    });
    const detail = row.querySelector('.vl-detail');
    if (expanded && p) {
      detail?.remove();
      row.append(this.detail(p));
    } else detail?.remove();
  }

  private detail(p: ArmPair): HTMLElement {
    const d = el('div', 'vl-detail at-detail');
    d.append(el('div', 'vl-label', 'Prompt'), el('pre', 'vl-text', p.prompt));
    const both = el('div', 'at-both');
    for (const arm of ARMS) {
      const c = p.arms[arm];
      const side = el('div', `at-side arm-${arm}`);
      const pre = el('pre', `vl-text${c && c.status !== 'ok' ? ' error' : ''}`, c ? c.text : '');
      pre.tabIndex = 0;
      side.append(el('div', 'vl-label', c ? `${arm} · ${c.status}` : `${arm} · not in its kept round`));
      if (c) side.append(el('div', 'vl-meta', `${ms(c.latencyMs)}${c.endpoint ? ` · ${c.endpoint}` : ''}`));
      side.append(pre);
      both.append(side);
    }
    d.append(both);
    return d;
  }
}

customElements.define('swarm-arms-table', ArmsTable);

declare global {
  interface HTMLElementTagNameMap {
    'swarm-arms-table': ArmsTable;
  }
}
