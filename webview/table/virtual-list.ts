/**
 * A keyboard-driven, virtualized list of fixed-height rows (one may be expanded to any height), on
 * @tanstack/virtual-core: only the rows in view (plus a few) exist in the DOM, recycled as it scrolls,
 * so 100,000 rows cost what 40 do. The grid pattern: the scroller takes focus, arrows move the active
 * row (aria-activedescendant), Enter/Space toggles it open, Home/End/PageUp/PageDown jump.
 */
import { Virtualizer, elementScroll, observeElementOffset, observeElementRect } from '@tanstack/virtual-core';

/** An element with a class and text: what a table's cells are made of. */
export function el<K extends keyof HTMLElementTagNameMap>(tag: K, className?: string, text?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = text;
  return e;
}

export interface RowRenderer {
  /** A fresh row element (its cells), reused for other positions as the list scrolls. */
  create(): HTMLElement;
  /** Fills `el` with the row at `pos`; `expanded` when it is the open row. */
  fill(el: HTMLElement, pos: number, expanded: boolean): void;
}

export interface VirtualListOptions {
  rowHeight: number;
  renderer: RowRenderer;
  /** Prefix of row element ids (aria-activedescendant). */
  idPrefix: string;
  onActive?: (pos: number) => void;
  onToggle?: (pos: number) => void;
  onKey?: (e: KeyboardEvent, pos: number) => boolean;
  /** Rows whose index the aria-rowindex adds to (a header row above: 1). */
  rowIndexOffset?: number;
  /**
   * A header row kept in the list itself (first, sticky, one row high), so a grid's headings are
   * inside the grid for a screen reader and scroll sideways with the columns.
   */
  header?: HTMLElement;
}

export class VirtualList {
  readonly scroller: HTMLElement;
  private readonly sizer: HTMLElement;
  private readonly v: Virtualizer<HTMLElement, HTMLElement>;
  private readonly live = new Map<number, HTMLElement>();
  private readonly spare: HTMLElement[] = [];
  private count = 0;
  /** Bumped when the data behind positions changes: every live row is refilled. */
  private dataVersion = 0;
  private filled = new WeakMap<HTMLElement, string>();
  private drawing = false;
  private again = false;
  active = -1;
  expanded = -1;

  constructor(scroller: HTMLElement, private readonly opts: VirtualListOptions) {
    this.scroller = scroller;
    this.sizer = document.createElement('div');
    this.sizer.className = 'vl-sizer';
    if (opts.header) this.sizer.append(opts.header);
    scroller.append(this.sizer);
    const headerPx = opts.header ? opts.rowHeight : 0;
    scroller.tabIndex = 0;
    this.v = new Virtualizer<HTMLElement, HTMLElement>({
      count: 0,
      getScrollElement: () => this.scroller,
      estimateSize: () => opts.rowHeight,
      overscan: 8,
      // Rows start below the header, and a row scrolled to is not left under it.
      paddingStart: headerPx,
      scrollPaddingStart: headerPx,
      observeElementRect,
      observeElementOffset,
      scrollToFn: elementScroll,
      // Scroll and resize: draw at once (cheap: rows in view only), so no stale frame is painted.
      onChange: () => this.draw(),
    });
    this.v._didMount();
    this.v._willUpdate();
    scroller.addEventListener('keydown', (e) => this.onKeyDown(e));
    scroller.addEventListener('click', (e) => {
      if ((e.target as HTMLElement).closest('.vl-detail, button, vscode-button, vscode-icon, a')) return;
      const row = (e.target as HTMLElement).closest<HTMLElement>('.vl-row');
      if (!row) return;
      const pos = Number(row.dataset.index);
      this.setActive(pos, false);
      this.opts.onToggle?.(pos);
    });
  }

  /** New row count; `changed` when the rows behind positions changed (refill what is on screen). */
  update(count: number, changed: boolean): void {
    if (changed) this.dataVersion++;
    if (count !== this.count) {
      this.count = count;
      this.v.setOptions({ ...this.v.options, count });
      if (this.active >= count) this.active = count - 1;
      if (this.expanded >= count) this.expanded = -1;
    }
    this.draw();
  }

  /** Forget measured heights (the open row changed, or the filter did). */
  remeasure(): void {
    this.v.measure();
    this.dataVersion++;
    this.draw();
  }

  setExpanded(pos: number): void {
    if (pos === this.expanded) return;
    this.expanded = pos;
    this.remeasure();
    if (pos >= 0) this.v.scrollToIndex(pos, { align: 'auto' });
  }

  setActive(pos: number, scroll = true): void {
    if (!this.count) return;
    const next = Math.max(0, Math.min(this.count - 1, pos));
    if (next !== this.active) {
      this.active = next;
      this.opts.onActive?.(next);
    }
    if (scroll) this.v.scrollToIndex(next, { align: 'auto' });
    this.dataVersion++;
    this.draw();
  }

  scrollToIndex(pos: number): void {
    this.v.scrollToIndex(pos, { align: 'start' });
  }

  /**
   * Places the rows in view. The virtualizer may call back (onChange) while a draw measures the
   * open row: that asks for one more pass instead of drawing inside this one.
   */
  draw(): void {
    if (this.drawing) {
      this.again = true;
      return;
    }
    this.drawing = true;
    try {
      for (let pass = 0; pass < 3; pass++) {
        this.again = false;
        this.drawOnce();
        if (!this.again) break;
      }
    } finally {
      this.drawing = false;
    }
  }

  /** Places the rows in view; reuses elements that scrolled out. */
  private drawOnce(): void {
    // A hidden tab has no height, and a tab just shown has none yet for the virtualizer (until its
    // ResizeObserver reports): keep the rows as they are until it knows, rather than recycle them all.
    if (!this.scroller.clientHeight || !this.v.scrollRect?.height) return;
    const items = this.v.getVirtualItems();
    this.sizer.style.height = `${this.v.getTotalSize()}px`;
    const keep = new Set(items.map((i) => i.index));
    for (const [pos, el] of this.live) {
      if (!keep.has(pos)) {
        this.live.delete(pos);
        el.hidden = true;
        this.spare.push(el);
      }
    }
    const offset = this.opts.rowIndexOffset ?? 0;
    for (const item of items) {
      let el = this.live.get(item.index);
      if (!el) {
        el = this.spare.pop() ?? this.makeRow();
        el.hidden = false;
        this.live.set(item.index, el);
      }
      const expanded = item.index === this.expanded;
      const stamp = `${item.index}:${this.dataVersion}`;
      if (this.filled.get(el) !== stamp) {
        el.dataset.index = String(item.index);
        el.id = `${this.opts.idPrefix}-${item.index}`;
        el.setAttribute('aria-rowindex', String(item.index + 1 + offset));
        el.setAttribute('aria-selected', String(item.index === this.active));
        el.setAttribute('aria-expanded', String(expanded));
        el.classList.toggle('active', item.index === this.active);
        el.classList.toggle('expanded', expanded);
        this.opts.renderer.fill(el, item.index, expanded);
        this.filled.set(el, stamp);
      }
      el.style.transform = `translateY(${item.start}px)`;
      if (expanded) this.v.measureElement(el);
    }
    if (this.active >= 0 && this.live.has(this.active)) this.scroller.setAttribute('aria-activedescendant', `${this.opts.idPrefix}-${this.active}`);
    else this.scroller.removeAttribute('aria-activedescendant');
  }

  /** How many rows are on screen now (for tests and the bench). */
  get renderedRows(): number {
    return this.live.size;
  }

  private makeRow(): HTMLElement {
    const el = this.opts.renderer.create();
    el.classList.add('vl-row');
    el.setAttribute('role', 'row');
    this.sizer.append(el);
    return el;
  }

  private onKeyDown(e: KeyboardEvent): void {
    if (e.target !== this.scroller) return;
    const page = Math.max(1, Math.floor(this.scroller.clientHeight / this.opts.rowHeight) - 1);
    const at = this.active < 0 ? -1 : this.active;
    if (this.opts.onKey?.(e, at)) {
      e.preventDefault();
      return;
    }
    switch (e.key) {
      case 'ArrowDown':
        this.setActive(at + 1);
        break;
      case 'ArrowUp':
        this.setActive(Math.max(0, at - 1));
        break;
      case 'PageDown':
        this.setActive(at + page);
        break;
      case 'PageUp':
        this.setActive(Math.max(0, at - page));
        break;
      case 'Home':
        this.setActive(0);
        break;
      case 'End':
        this.setActive(this.count - 1);
        break;
      case 'Enter':
      case ' ':
        if (at >= 0) this.opts.onToggle?.(at);
        break;
      case 'Escape':
        if (this.expanded >= 0) this.opts.onToggle?.(this.expanded);
        else return;
        break;
      default:
        return;
    }
    e.preventDefault();
  }
}
