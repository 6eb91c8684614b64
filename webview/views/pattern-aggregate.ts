/**
 * One aggregate of a step's answers (a broadcast's, a pipeline stage's): the vote with its
 * confidence and distribution, merged items with each answer that was not JSON, statistics with
 * each answer that was not a number, the best and top answers. Model output is shown as text.
 */
import { html, nothing } from 'lit';
import type { Aggregate } from '../../src/panel/protocol.ts';
import { int } from '../lib/format.ts';

type AnswerProblem = Extract<Aggregate, { name: 'merge' }>['errors'][number];

const pct = (x: number) => `${(100 * x).toFixed(x === 1 || x === 0 ? 0 : 1)}%`;
const num = (x: number) => (Number.isInteger(x) ? int(x) : x.toPrecision(4));

export function aggregateView(a: Aggregate) {
  return html`<section class="aggregate" data-aggregate=${a.name} aria-label=${`Aggregate: ${a.name}`}>${body(a)}</section>`;
}

function body(a: Aggregate) {
  switch (a.name) {
    case 'vote':
      return html`<dl class="figures">
          <div><dt>winner</dt><dd class="vote-winner">${a.winner || '—'}</dd></div>
          <div><dt>confidence</dt><dd class="vote-confidence">${pct(a.confidence)}</dd></div>
          <div><dt>votes</dt><dd class="vote-votes">${int(a.votes)} of ${int(a.votes + a.failed)}${a.failed ? ` (${int(a.failed)} failed)` : ''}</dd></div>
          <div><dt>distinct answers</dt><dd>${int(a.distribution.length)}</dd></div>
        </dl>
        <table class="figures-table vote-distribution" aria-label="Votes per answer">
          <thead><tr><th scope="col">answer</th><th scope="col">votes</th><th scope="col">share</th></tr></thead>
          <tbody>
            ${a.distribution.map((d) => {
              const share = a.distribution.reduce((n, x) => n + x.votes, 0);
              return html`<tr>
                <td>${d.answer}</td>
                <td>${int(d.votes)}</td>
                <td><meter min="0" max="1" .value=${d.votes / share}></meter> ${pct(d.votes / share)}</td>
              </tr>`;
            })}
          </tbody>
        </table>`;
    case 'concat':
      return html`<pre class="vl-text">${a.text}</pre>`;
    case 'best-of':
      return a.best ? html`<p class="muted">The longest answer, from ${a.best.endpoint ?? `#${a.best.index}`}:</p><pre class="vl-text">${a.best.text}</pre>` : html`<p class="empty">No answer.</p>`;
    case 'top-k':
      return html`<p class="muted">The ${int(a.k)} longest answers:</p>
        <ol class="top-k">
          ${a.top.map((t) => html`<li><span class="node-id">${t.endpoint ?? `#${t.index}`}</span><pre class="vl-text">${t.text}</pre></li>`)}
        </ol>`;
    case 'merge':
      return html`<dl class="figures">
          <div><dt>items</dt><dd class="merge-items">${int(a.items.length)}</dd></div>
          <div><dt>answers not JSON</dt><dd class=${a.errors.length ? 'failed' : ''}>${int(a.errors.length)}</dd></div>
        </dl>
        <pre class="vl-text merged">${JSON.stringify(a.items, null, 2)}</pre>
        ${problems(a.errors, 'Answers that are not JSON')}`;
    case 'stats':
      return html`<dl class="figures stats">
          ${(['count', 'mean', 'std', 'median', 'min', 'max'] as const).map((k) => html`<div><dt>${k}</dt><dd data-stat=${k}>${num(a[k])}</dd></div>`)}
        </dl>
        ${problems(a.errors, 'Answers that are not a number')}`;
  }
}

function problems(list: readonly AnswerProblem[], title: string) {
  if (!list.length) return nothing;
  return html`<table class="figures-table aggregate-errors" aria-label=${title}>
    <caption>${title}</caption>
    <thead><tr><th scope="col">#</th><th scope="col">endpoint</th><th scope="col">why</th></tr></thead>
    <tbody>
      ${list.map((p) => html`<tr><td>${int(p.index)}</td><td>${p.endpoint ?? '—'}</td><td class="error">${p.error}</td></tr>`)}
    </tbody>
  </table>`;
}
