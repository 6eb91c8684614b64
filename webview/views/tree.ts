/**
 * A pattern's steps: the final answer with every answer that did not reach it, then the steps (a
 * tree-reduce's levels from the root down; a pipeline's stages, a blackboard's rounds in order),
 * each answer named by its item, group or endpoint.
 */
import { html, nothing } from 'lit';
import type { MissingAnswer, Pattern } from '../../src/panel/protocol.ts';
import type { PanelApp as App } from '../panel-app.ts';
import { int, oneLine } from '../lib/format.ts';
import { aggregateView } from './pattern-aggregate.ts';

const SHOW = 200;
const expandedLevels = new Set<number>();

/** What a pattern's steps are called, as its tab and its heading say. */
export const STEPS_TAB: Record<Pattern, string> = {
  scatter: 'Steps',
  map: 'Steps',
  broadcast: 'Broadcast',
  'tree-reduce': 'Reduce tree',
  'fan-out-fan-in': 'Fan-out',
  pipeline: 'Pipeline',
  blackboard: 'Blackboard',
};

/** Missing answers as the final answer lists them: each one's name, its step past the first (as the steps are headed), why, and a failed group's items. */
function missingList(missing: readonly MissingAnswer[], leaves: number | null, stepName: (level: number) => string) {
  if (!missing.length) return html`<p class="muted" id="tree-complete">Every answer reached the final one.</p>`;
  const lostItems = new Set<string>();
  for (const m of missing) {
    if (m.items) for (const i of m.items) lostItems.add(`item ${i + 1}`);
    else if (m.level === 0) lostItems.add(m.name);
  }
  return html`<div class="missing" id="tree-missing" role="note">
    <p class="failed">
      ${leaves !== null ? `Built from ${int(Math.max(0, leaves - lostItems.size))} of ${int(leaves)} leaves: ` : ''}${int(missing.length)} answer${missing.length === 1 ? '' : 's'} did not reach
      it.
    </p>
    <ul>
      ${missing.map(
        (m) => html`<li data-level=${m.level}>
          <b>${m.name}</b>${m.level > 0 ? html` <span class="muted">(${stepName(m.level)})</span>` : nothing}: <span class="error">${m.reason}</span>${m.items?.length
            ? html` — took ${m.items.length === 1 ? 'item' : 'items'} ${m.items.map((i) => i + 1).join(', ')} with it`
            : nothing}
        </li>`,
      )}
    </ul>
  </div>`;
}

export function treeView(app: App) {
  const r = app.state.reduce;
  const pattern = app.state.run?.pattern ?? 'tree-reduce';
  if (!r) return html`<p class="empty" id="tree-empty">No steps yet: a tree-reduce, pipeline, fan-out, blackboard or broadcast run shows its steps here.</p>`;
  // A tree reads from its root down; a pipeline, a blackboard and a fan-out in the order they ran.
  const levels = pattern === 'tree-reduce' ? [...r.levels].sort((a, b) => b.level - a.level) : [...r.levels].sort((a, b) => a.level - b.level);
  // A broadcast's answer is its aggregate, and so is a pipeline's whose last stage aggregates (a vote):
  // drawn as a table at the top (its text is the aggregate as JSON), not in its step again.
  const last = r.levels.reduce<(typeof r.levels)[number] | undefined>((a, l) => (!a || l.level > a.level ? l : a), undefined);
  const final = pattern === 'broadcast' || pattern === 'pipeline' ? last?.aggregate : undefined;
  const leaves = pattern === 'tree-reduce' && r.missing ? (r.levels.find((l) => l.level === 0)?.texts.length ?? 0) + r.missing.filter((m) => m.level === 0).length : null;
  return html`<div class="tree" id="tree" data-pattern=${pattern}>
    <section class="final">
      <h3>Final answer</h3>
      ${final
        ? html`${aggregateView(final)}
            <details class="as-text"><summary>As text</summary><pre class="vl-text" id="tree-final" tabindex="0">${r.text}</pre></details>`
        : html`<pre class="vl-text" id="tree-final" tabindex="0">${r.text}</pre>`}
      ${r.missing ? missingList(r.missing, leaves, (level) => (pattern === 'tree-reduce' ? `level ${level}` : (r.levels.find((l) => l.level === level)?.label ?? `step ${level + 1}`))) : nothing}
      <div class="toolbar">
        <vscode-button secondary icon="copy" @click=${() => app.copy(r.text)}>Copy</vscode-button>
        <vscode-button secondary icon="go-to-file" @click=${() => app.openInEditor(r.text, 'markdown')}>Open in editor</vscode-button>
      </div>
    </section>
    ${levels.map((l) => {
      const all = expandedLevels.has(l.level);
      const nodes = all ? l.texts : l.texts.slice(0, SHOW);
      const fallback = (i: number) => (l.label ? `#${i + 1}` : l.level === 0 ? `leaf ${i + 1}` : `group ${i + 1}`);
      return html`<section class="level" data-level=${l.level} aria-label=${l.label ?? `Level ${l.level}`}>
        <h3>
          ${l.label ?? (l.level === 0 ? 'Level 0 · leaves' : `Level ${l.level} · reduce round ${l.level}`)}
          <span class="muted">${int(l.texts.length)} answer${l.texts.length === 1 ? '' : 's'}</span>
        </h3>
        ${l.aggregate && l.aggregate !== final ? aggregateView(l.aggregate) : nothing}
        <div class="nodes">
          ${nodes.map(
            (t, i) => html`<details class="node">
              <summary><span class="node-id">${l.names?.[i] ?? fallback(i)}</span> ${oneLine(t, 140)}</summary>
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
