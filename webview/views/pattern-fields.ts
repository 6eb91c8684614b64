/**
 * Compose's fields for the ported patterns (broadcast's aggregator, fan-out/fan-in, pipeline stages,
 * blackboard sections and rounds) and the routing choice every pattern takes.
 */
import { html, nothing } from 'lit';
import type { PanelApp as App } from '../panel-app.ts';
import { NOT_ANSWERING } from '../lib/compose.ts';
import { AGGREGATORS, ROUTES, sections, type PatternsCompose } from '../lib/patterns-compose.ts';
import { int } from '../lib/format.ts';
import type { AggregateName, RouteStrategy, StageParams } from '../../src/panel/protocol.ts';

type Field = HTMLElement & { value: string };
type Check = HTMLElement & { checked: boolean };
const value = (e: Event) => (e.currentTarget as Field).value;
const checked = (e: Event) => (e.currentTarget as Check).checked;

function set(app: App, patch: Partial<PatternsCompose>): void {
  app.setCompose({ patterns: { ...app.state.ui.compose.patterns, ...patch } });
}

function setStage(app: App, i: number, patch: Partial<StageParams>): void {
  const stages = app.state.ui.compose.patterns.stages.map((s, j) => (j === i ? { ...s, ...patch } : s));
  set(app, { stages });
}

/** The fields of the chosen pattern, when it is one of the ported ones (or a broadcast, for its aggregator). */
export function portedFields(app: App) {
  switch (app.state.ui.compose.pattern) {
    case 'broadcast':
      return aggregatorField(app);
    case 'fan-out-fan-in':
      return fanOutFields(app);
    case 'pipeline':
      return pipelineFields(app);
    case 'blackboard':
      return blackboardFields(app);
    default:
      return nothing;
  }
}

/** Where prompts go: the core's routing strategies. */
export function routeField(app: App) {
  const route = app.state.ui.compose.patterns.route;
  return html`<div class="params">
    <vscode-label for="route">Routing</vscode-label>
    <vscode-single-select id="route" .value=${route} @change=${(e: Event) => set(app, { route: value(e) as RouteStrategy })}>
      ${ROUTES.map((r) => html`<vscode-option value=${r.id} ?selected=${route === r.id}>${r.label}</vscode-option>`)}
    </vscode-single-select>
  </div>`;
}

function aggregatorField(app: App) {
  const p = app.state.ui.compose.patterns;
  return html`<div class="params">
    <vscode-label for="aggregate">Aggregate the answers</vscode-label>
    <vscode-single-select id="aggregate" .value=${p.aggregate} @change=${(e: Event) => set(app, { aggregate: value(e) as AggregateName | '' })}>
      ${AGGREGATORS.map((a) => html`<vscode-option value=${a.id} ?selected=${p.aggregate === a.id}>${a.label}</vscode-option>`)}
    </vscode-single-select>
    ${p.aggregate === 'top-k'
      ? html`<vscode-label for="top-k">k</vscode-label>
          <vscode-textfield id="top-k" type="number" min="1" .value=${String(p.k)} @input=${(e: Event) => set(app, { k: Number(value(e)) })}></vscode-textfield>`
      : nothing}
  </div>`;
}

function fanOutFields(app: App) {
  const p = app.state.ui.compose.patterns;
  const ok = p.collectPrompt.includes('{responses}');
  return html`
    <vscode-form-group variant="vertical">
      <vscode-label for="collect-prompt">Collect prompt (<code>{responses}</code> takes the workers' answers)</vscode-label>
      <vscode-textarea id="collect-prompt" rows="3" resize="vertical" monospace .value=${p.collectPrompt} ?invalid=${!ok} @input=${(e: Event) => set(app, { collectPrompt: value(e) })}></vscode-textarea>
    </vscode-form-group>
    <div class="params">
      <vscode-label for="workers">Workers</vscode-label>
      <vscode-textfield id="workers" type="number" min="1" placeholder="every endpoint" .value=${p.workers} @input=${(e: Event) => set(app, { workers: value(e) })}></vscode-textfield>
    </div>
  `;
}

function pipelineFields(app: App) {
  const p = app.state.ui.compose.patterns;
  return html`
    <vscode-form-group variant="vertical">
      <vscode-label for="pipeline-input">Input (the first stage's <code>{input}</code>)</vscode-label>
      <vscode-textarea id="pipeline-input" rows="2" resize="vertical" .value=${p.input} @input=${(e: Event) => set(app, { input: value(e) })}></vscode-textarea>
    </vscode-form-group>
    <ol class="stages" id="stages" aria-label="Stages">
      ${p.stages.map(
        (s, i) => html`<li class="stage" data-stage=${i}>
          <div class="params">
            <vscode-label for=${`stage-name-${i}`}>Stage ${i + 1}</vscode-label>
            <vscode-textfield id=${`stage-name-${i}`} .value=${s.name} @input=${(e: Event) => setStage(app, i, { name: value(e) })}></vscode-textfield>
            <vscode-label for=${`stage-agents-${i}`}>Agents</vscode-label>
            <vscode-textfield id=${`stage-agents-${i}`} type="number" min="1" .value=${String(s.agents)} @input=${(e: Event) => setStage(app, i, { agents: Number(value(e)) })}></vscode-textfield>
          </div>
          <vscode-form-group variant="vertical">
            <vscode-label for=${`stage-template-${i}`}>Template</vscode-label>
            <vscode-textarea id=${`stage-template-${i}`} rows="2" resize="vertical" monospace .value=${s.template} ?invalid=${!s.template.includes('{input}')}
              @input=${(e: Event) => setStage(app, i, { template: value(e) })}></vscode-textarea>
          </vscode-form-group>
          <div class="params">
            <vscode-label for=${`stage-keep-${i}`}>Keep</vscode-label>
            <vscode-textfield id=${`stage-keep-${i}`} placeholder="every answer, or a regex" .value=${s.keep ?? ''} @input=${(e: Event) => setStage(app, i, { keep: value(e) || undefined })}></vscode-textfield>
            <vscode-label for=${`stage-transform-${i}`}>Output</vscode-label>
            <vscode-single-select id=${`stage-transform-${i}`} .value=${s.transform ?? ''}
              @change=${(e: Event) => setStage(app, i, { transform: (value(e) || undefined) as AggregateName | undefined })}>
              ${AGGREGATORS.map((a) => html`<vscode-option value=${a.id} ?selected=${(s.transform ?? '') === a.id}>${a.id ? a.label : 'the answers, one per line'}</vscode-option>`)}
            </vscode-single-select>
          </div>
          <vscode-button secondary icon="trash" class="remove-stage" @click=${() => set(app, { stages: p.stages.filter((_, j) => j !== i) })}>Remove stage ${i + 1}</vscode-button>
        </li>`,
      )}
    </ol>
    <div class="toolbar">
      <vscode-button id="add-stage" secondary icon="add" @click=${() => set(app, { stages: [...p.stages, { name: `stage ${p.stages.length + 1}`, template: '{input}', agents: 1 }] })}>Add stage</vscode-button>
      <vscode-checkbox id="consecutive" .checked=${p.consecutive} @change=${(e: Event) => set(app, { consecutive: checked(e) })}>Each stage takes the next endpoints</vscode-checkbox>
    </div>
  `;
}

function blackboardFields(app: App) {
  const p = app.state.ui.compose.patterns;
  const names = sections(p);
  return html`
    <vscode-form-group variant="vertical">
      <vscode-label for="sections">Sections, one per line (${int(names.length)}): endpoints tagged <code>role=</code>section write to it</vscode-label>
      <vscode-textarea id="sections" rows="3" resize="vertical" .value=${p.sectionsText} @input=${(e: Event) => set(app, { sectionsText: value(e) })}></vscode-textarea>
      ${names.length
        ? html`<vscode-form-helper
            >${names.map((s, i) => {
              // Writers that can answer: excluded, down or tunnel-down endpoints write nothing.
              const writers = app.state.endpoints.filter((e) => e.tags.role === s && !NOT_ANSWERING.has(e.status)).length;
              return html`${i ? ' · ' : ''}<span class=${writers ? 'ok' : 'warning'} data-section=${s}>${s}: ${int(writers)} endpoint${writers === 1 ? '' : 's'}</span>`;
            })}</vscode-form-helper
          >`
        : nothing}
    </vscode-form-group>
    <vscode-form-group variant="vertical">
      <vscode-label for="board-prompt">Prompt (<code>{section}</code> its section, <code>{board}</code> every entry so far)</vscode-label>
      <vscode-textarea id="board-prompt" rows="3" resize="vertical" monospace .value=${p.boardPrompt} ?invalid=${!p.boardPrompt.includes('{board}')}
        @input=${(e: Event) => set(app, { boardPrompt: value(e) })}></vscode-textarea>
    </vscode-form-group>
    <div class="params">
      <vscode-label for="max-rounds">Rounds (at most)</vscode-label>
      <vscode-textfield id="max-rounds" type="number" min="1" max="1000" .value=${String(p.maxRounds)} @input=${(e: Event) => set(app, { maxRounds: Number(value(e)) })}></vscode-textfield>
      <vscode-label for="until">Until an entry matches</vscode-label>
      <vscode-textfield id="until" placeholder="run every round (a regular expression)" .value=${p.until} @input=${(e: Event) => set(app, { until: value(e) })}></vscode-textfield>
    </div>
  `;
}
