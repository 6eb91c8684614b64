/**
 * `<swarm-chart>`: one uPlot chart that follows its box's width. Its `spec` makes the options and
 * data for a width; a new `key` (other data, another theme) rebuilds it, unless the spec's `layout`
 * is the built one's: then only its data is set (a live chart's new reading keeps its cursor and tooltip).
 */
import uPlot from 'uplot';

export interface ChartSpec {
  key: string;
  /** Identity of the options (series, axes, colours) apart from the data; unset: every new key rebuilds. */
  layout?: string;
  /** Accessible name of the chart (canvas has no text for screen readers). */
  label: string;
  make(width: number): { opts: Omit<uPlot.Options, 'width'>; data: uPlot.AlignedData };
  /** What the point under the cursor is (css px in the plot area), as text; null: no tooltip. */
  tip?(u: uPlot, left: number, top: number): string | null;
}

export class SwarmChart extends HTMLElement {
  private plot: uPlot | null = null;
  private current: ChartSpec | null = null;
  private builtKey = '';
  private builtLayout: string | undefined;
  private resize: ResizeObserver | null = null;
  private width = 0;

  set spec(spec: ChartSpec) {
    this.current = spec;
    this.setAttribute('role', 'img');
    this.setAttribute('aria-label', spec.label);
    if (this.isConnected) this.build();
  }

  connectedCallback(): void {
    this.resize ??= new ResizeObserver(() => {
      const w = Math.floor(this.clientWidth);
      if (w > 0 && w !== this.width) {
        this.width = w;
        if (!this.plot) this.build();
        else this.plot.setSize({ width: w, height: this.plot.height });
      }
    });
    this.resize.observe(this);
    this.build();
  }

  disconnectedCallback(): void {
    this.resize?.disconnect();
    this.plot?.destroy();
    this.plot = null;
    this.builtKey = '';
  }

  private build(): void {
    const spec = this.current;
    if (!spec) return;
    const width = Math.floor(this.clientWidth) || this.width;
    if (width <= 0) return;
    if (this.plot && this.builtKey === spec.key) return;
    if (this.plot && spec.layout !== undefined && spec.layout === this.builtLayout) {
      this.plot.setData(spec.make(width).data);
      this.builtKey = spec.key;
      return;
    }
    this.plot?.destroy();
    const { opts, data } = spec.make(width);
    const hooks = spec.tip ? { ...opts.hooks, setCursor: [...(opts.hooks?.setCursor ?? []), (u: uPlot) => this.showTip(u, this.current ?? spec)] } : opts.hooks;
    this.plot = new uPlot({ ...opts, ...(hooks ? { hooks } : {}), width } as uPlot.Options, data, this);
    this.builtKey = spec.key;
    this.builtLayout = spec.layout;
    this.width = width;
  }

  /** The tooltip beside the cursor: text only (it may quote a server's error message). */
  private showTip(u: uPlot, spec: ChartSpec): void {
    let tip = this.querySelector<HTMLElement>(':scope > .chart-tip');
    const { left, top } = u.cursor;
    const text = left !== undefined && top !== undefined && left >= 0 && top >= 0 ? (spec.tip?.(u, left, top) ?? null) : null;
    if (!text) {
      tip?.setAttribute('hidden', '');
      return;
    }
    if (!tip) {
      tip = document.createElement('div');
      tip.className = 'chart-tip';
      tip.setAttribute('role', 'tooltip');
      this.append(tip);
    }
    tip.textContent = text;
    tip.removeAttribute('hidden');
    const over = u.over.getBoundingClientRect();
    const box = this.getBoundingClientRect();
    // Left of the cursor in the chart's right half, so it stays inside the panel.
    const x = over.left - box.left + left!;
    tip.style.left = x > box.width / 2 ? '' : `${x + 12}px`;
    tip.style.right = x > box.width / 2 ? `${box.width - x + 12}px` : '';
    tip.style.top = `${over.top - box.top + top! + 14}px`;
  }
}

customElements.define('swarm-chart', SwarmChart);

declare global {
  interface HTMLElementTagNameMap {
    'swarm-chart': SwarmChart;
  }
}
