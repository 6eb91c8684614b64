/** Tree-reduce: the final answer, then the reduction level by level with the text at each node. */
import { html, nothing } from 'lit';
import type { PanelApp as App } from '../panel-app.ts';
import { int, oneLine } from '../lib/format.ts';
import { aggregateView } from './pattern-aggregate.ts';

const SHOW = 200;
const expandedLevels = new Set<number>();

export function treeView(app: App) {
  const r = app.state.reduce;
  if (!r) return html`<p class="empty" id="tree-empty">No reduction yet: a tree-reduce run shows its levels here.</p>`;
  const levels = [...r.levels].sort((a, b) => b.level - a.level);
  return html`<div class="tree" id="tree">
    <section class="final">
      <h3>Final answer</h3>
      <pre class="vl-text" id="tree-final" tabindex="0">${r.text}</pre>
      <div class="toolbar">
        <vscode-button secondary icon="copy" @click=${() => app.copy(r.text)}>Copy</vscode-button>
        <vscode-button secondary icon="go-to-file" @click=${() => app.openInEditor(r.text, 'markdown')}>Open in editor</vscode-button>
      </div>
    </section>
    ${levels.map((l) => {
      const all = expandedLevels.has(l.level);
      const nodes = all ? l.texts : l.texts.slice(0, SHOW);
      return html`<section class="level" data-level=${l.level} aria-label=${`Level ${l.level}`}>
        <h3>
          ${l.label ?? (l.level === 0 ? 'Level 0 · leaves' : `Level ${l.level} · reduce round ${l.level}`)}
          <span class="muted">${int(l.texts.length)} node${l.texts.length === 1 ? '' : 's'}</span>
        </h3>
        ${l.aggregate ? aggregateView(l.aggregate) : nothing}
        <div class="nodes">
          ${nodes.map(
            (t, i) => html`<details class="node">
              <summary><span class="node-id">${l.label ? `#${i + 1}` : l.level === 0 ? `leaf ${i + 1}` : `group ${i + 1}`}</span> ${oneLine(t, 140)}</summary>
              <pre class="vl-text">${t}</pre>
            </details>`,
          )}
        </div>
        ${!all && l.texts.length > SHOW
          ? html`<vscode-button
              secondary
              @click=${() => {
                expandedLevels.add(l.level);
                app.invalidate();
              }}
              >Show all ${int(l.texts.length)}</vscode-button
            >`
          : nothing}
      </section>`;
    })}
  </div>`;
}
