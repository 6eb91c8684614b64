/**
 * `<swarm-prompt-list>`: the prompt set being composed, virtualized like the results (imports of
 * 100,000 prompts stay light). Arrow keys pick the prompt the editor below shows; Delete removes it.
 */
import type { PromptRow } from '../../src/panel/protocol.ts';
import { oneLine } from '../lib/format.ts';
import { VirtualList } from './virtual-list.ts';

export interface PromptListData {
  prompts: readonly PromptRow[];
  selected: number;
  version: number;
}

export interface PromptListActions {
  select(pos: number): void;
  remove(pos: number): void;
  edit(pos: number): void;
}

export class PromptList extends HTMLElement {
  actions: PromptListActions | null = null;
  private list: VirtualList | null = null;
  private data: PromptListData = { prompts: [], selected: -1, version: 0 };
  private lastVersion = -1;

  set listData(data: PromptListData) {
    this.data = data;
    if (this.isConnected) this.refresh();
  }

  connectedCallback(): void {
    if (!this.list) this.build();
    this.refresh();
  }

  focusList(): void {
    this.list?.scroller.focus();
  }

  private build(): void {
    this.classList.add('pl');
    const scroller = document.createElement('div');
    scroller.className = 'pl-scroll';
    scroller.setAttribute('role', 'grid');
    scroller.setAttribute('aria-label', 'Prompts. Arrow keys pick, Enter edits, Delete removes.');
    this.append(scroller);
    this.list = new VirtualList(scroller, {
      rowHeight: 24,
      idPrefix: 'pl-row',
      renderer: {
        create: () => {
          const row = document.createElement('div');
          const cells = document.createElement('div');
          cells.className = 'pl-cells';
          for (const name of ['idx', 'text', 'input']) {
            const c = document.createElement('div');
            c.className = `pl-td c-${name}`;
            c.setAttribute('role', 'gridcell');
            cells.append(c);
          }
          const del = document.createElement('vscode-icon');
          del.setAttribute('name', 'trash');
          del.setAttribute('action-icon', '');
          del.setAttribute('label', 'Delete prompt');
          del.setAttribute('title', 'Delete prompt');
          del.tabIndex = -1;
          del.dataset.action = 'delete';
          cells.append(del);
          row.append(cells);
          return row;
        },
        fill: (row, pos) => {
          const p = this.data.prompts[pos];
          const [idx, text, input] = Array.from(row.firstElementChild!.children) as HTMLElement[];
          idx!.textContent = String(pos + 1);
          text!.textContent = p ? oneLine(p.prompt) || '(empty)' : '';
          text!.classList.toggle('empty', !p?.prompt.trim());
          const keys = p?.input ? Object.keys(p.input) : [];
          input!.textContent = keys.length ? keys.join(', ') : '';
          row.classList.toggle('selected', pos === this.data.selected);
        },
      },
      onActive: (pos) => this.actions?.select(pos),
      onToggle: (pos) => this.actions?.edit(pos),
      onKey: (e, pos) => {
        if ((e.key === 'Delete' || e.key === 'Backspace') && pos >= 0) {
          this.actions?.remove(pos);
          return true;
        }
        return false;
      },
    });
    scroller.addEventListener('click', (e) => {
      const target = (e.target as HTMLElement).closest<HTMLElement>('[data-action="delete"]');
      const row = target?.closest<HTMLElement>('.vl-row');
      if (row) this.actions?.remove(Number(row.dataset.index));
    });
  }

  private refresh(): void {
    if (!this.list) return;
    const changed = this.data.version !== this.lastVersion;
    this.lastVersion = this.data.version;
    if (this.list.active !== this.data.selected && this.data.selected >= 0 && this.data.selected < this.data.prompts.length) {
      this.list.update(this.data.prompts.length, true);
      this.list.setActive(this.data.selected);
    } else this.list.update(this.data.prompts.length, changed);
    this.dataset.count = String(this.data.prompts.length);
  }
}

customElements.define('swarm-prompt-list', PromptList);

declare global {
  interface HTMLElementTagNameMap {
    'swarm-prompt-list': PromptList;
  }
}
