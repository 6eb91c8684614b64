/**
 * `<swarm-chart>`: one uPlot chart that follows its box's width. Its `spec` makes the options and
 * data for a width; a new `key` (other data, another theme) rebuilds it.
 */
import uPlot from 'uplot';

export interface ChartSpec {
  key: string;
  /** Accessible name of the chart (canvas has no text for screen readers). */
  label: string;
  make(width: number): { opts: Omit<uPlot.Options, 'width'>; data: uPlot.AlignedData };
}

export class SwarmChart extends HTMLElement {
  private plot: uPlot | null = null;
  private current: ChartSpec | null = null;
  private builtKey = '';
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
    this.plot?.destroy();
    const { opts, data } = spec.make(width);
    this.plot = new uPlot({ ...opts, width } as uPlot.Options, data, this);
    this.builtKey = spec.key;
    this.width = width;
  }
}

customElements.define('swarm-chart', SwarmChart);

declare global {
  interface HTMLElementTagNameMap {
    'swarm-chart': SwarmChart;
  }
}
