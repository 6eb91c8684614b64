/**
 * Compose: the pattern, its prompts (an editable, importable, savable set; or a template over
 * items; or one prompt), the endpoints and parameters, and the count and token estimate.
 */
import { html, nothing } from 'lit';
import { swarmHealth } from '../lib/swarm-health.ts';
import type { PanelApp as App } from '../panel-app.ts';
import { endpointTags, items, matchingEndpoints, PATTERNS, type ComposeSummary } from '../lib/compose.ts';
import { int, oneLine } from '../lib/format.ts';
import { COMPARE_ROUNDS, LIMITS } from '../../src/core/requests/generation-params.ts';
import type { PromptListActions } from '../table/prompt-list.ts';
import { portedFields, routeField } from './pattern-fields.ts';
import { STATUS_LABELS, type Pattern } from '../../src/panel/protocol.ts';

type Field = HTMLElement & { value: string };
type Check = HTMLElement & { checked: boolean };
const value = (e: Event) => (e.currentTarget as Field).value;
const checked = (e: Event) => (e.currentTarget as Check).checked;

let actionsFor: App | null = null;
let actions: PromptListActions | null = null;

function promptActions(app: App): PromptListActions {
  if (actionsFor !== app || !actions) {
    actionsFor = app;
    actions = {
      select: (pos) => app.dispatch({ type: 'selectPrompt', index: pos }),
      edit: (pos) => {
        app.dispatch({ type: 'selectPrompt', index: pos });
        app.renderNow();
        (document.getElementById('prompt-editor') as HTMLElement | null)?.focus();
      },
      remove: (pos) => removePrompt(app, pos),
    };
  }
  return actions;
}

function removePrompt(app: App, pos: number): void {
  const prompts = app.state.ui.compose.prompts.filter((_, i) => i !== pos);
  app.dispatch({ type: 'selectPrompt', index: prompts.length ? Math.min(pos, prompts.length - 1) : -1 });
  app.setCompose({ prompts });
}

function addPrompt(app: App): void {
  const prompts = [...app.state.ui.compose.prompts, { prompt: '' }];
  app.dispatch({ type: 'selectPrompt', index: prompts.length - 1 });
  app.setCompose({ prompts });
  app.renderNow();
  (document.getElementById('prompt-editor') as HTMLElement | null)?.focus();
}

function editPrompt(app: App, text: string): void {
  const i = app.state.selectedPrompt;
  const prompts = app.state.ui.compose.prompts.slice();
  const old = prompts[i];
  if (!old) return;
  prompts[i] = { ...old, prompt: text };
  app.setCompose({ prompts });
}

function inputValue(v: unknown): string {
  return typeof v === 'string' ? v : JSON.stringify(v);
}

function promptSet(app: App) {
  const c = app.state.ui.compose;
  const sel = app.state.selectedPrompt >= 0 && app.state.selectedPrompt < c.prompts.length ? app.state.selectedPrompt : -1;
  const current = sel >= 0 ? c.prompts[sel] : undefined;
  return html`
    <div class="toolbar">
      <vscode-button id="add-prompt" icon="add" secondary @click=${() => addPrompt(app)}>Add prompt</vscode-button>
      <vscode-button id="import" icon="folder-opened" secondary @click=${() => void app.importFile()}>Import JSONL / TXT / CSV…</vscode-button>
      <vscode-button id="save-set" icon="save" secondary ?disabled=${!c.prompts.length} @click=${() => void app.savePromptSet()}>Save set…</vscode-button>
      <vscode-button
        id="clear-prompts"
        icon="clear-all"
        secondary
        ?disabled=${!c.prompts.length}
        @click=${() => {
          app.dispatch({ type: 'selectPrompt', index: -1 });
          app.setCompose({ prompts: [] });
        }}
        >Clear</vscode-button
      >
    </div>
    ${c.prompts.length
      ? html`<swarm-prompt-list
          id="prompt-list"
          .actions=${promptActions(app)}
          .listData=${{ prompts: c.prompts, selected: sel, version: app.state.composeVersion }}
        ></swarm-prompt-list>`
      : html`<p class="empty" id="prompt-list-empty">No prompts yet: add some, or import a JSONL, TXT or CSV file.</p>`}
    ${current
      ? html`<div class="editor">
          <vscode-label for="prompt-editor">Prompt ${sel + 1} of ${int(c.prompts.length)}</vscode-label>
          <vscode-textarea id="prompt-editor" rows="4" resize="vertical" .value=${current.prompt} @input=${(e: Event) => editPrompt(app, value(e))}></vscode-textarea>
          ${current.input && Object.keys(current.input).length
            ? html`<div class="kvs" aria-label="Input fields carried to the result">
                ${Object.entries(current.input).map(([k, v]) => html`<span class="kv"><span class="k">${k}</span> <span class="v">${oneLine(inputValue(v), 120)}</span></span>`)}
              </div>`
            : nothing}
        </div>`
      : nothing}
  `;
}

function templateFields(app: App, leaf: boolean) {
  const c = app.state.ui.compose;
  const n = items(c).length;
  return html`
    <vscode-form-group variant="vertical">
      <vscode-label for="template">${leaf ? 'Leaf template' : 'Template'} (<code>{item}</code> takes each item)</vscode-label>
      <vscode-textarea id="template" rows="3" resize="vertical" monospace .value=${c.template} ?invalid=${!c.template.includes('{item}') && n > 0}
        @input=${(e: Event) => app.setCompose({ template: value(e) })}></vscode-textarea>
    </vscode-form-group>
    <vscode-form-group variant="vertical">
      <vscode-label for="items">Items, one per line (${int(n)})</vscode-label>
      <vscode-textarea id="items" rows="6" resize="vertical" .value=${c.itemsText} @input=${(e: Event) => app.setCompose({ itemsText: value(e) })}></vscode-textarea>
      ${c.prompts.length
        ? html`<vscode-button
            id="items-from-prompts"
            secondary
            icon="list-flat"
            title="The prompt set (imported, typed or from a palette run) becomes the items, one per line"
            @click=${() => app.setCompose({ itemsText: c.prompts.map((p) => p.prompt.replace(/\s*\n\s*/g, ' ')).join('\n') })}
            >Use the ${int(c.prompts.length)} prompts as items</vscode-button
          >`
        : nothing}
    </vscode-form-group>
  `;
}

function onePrompt(app: App, id: string, label: string) {
  return html`<vscode-form-group variant="vertical">
    <vscode-label for=${id}>${label}</vscode-label>
    <vscode-textarea id=${id} rows="4" resize="vertical" .value=${app.state.ui.compose.prompt} @input=${(e: Event) => app.setCompose({ prompt: value(e) })}></vscode-textarea>
  </vscode-form-group>`;
}

function reduceFields(app: App) {
  const c = app.state.ui.compose;
  const ok = c.reducePrompt.includes('{responses}');
  return html`
    <p class="help">Leaves: with items, the template once per item; without items, the leaf prompt on every chosen endpoint.</p>
    ${templateFields(app, true)} ${onePrompt(app, 'leaf-prompt', 'Leaf prompt (used when there are no items)')}
    <vscode-form-group variant="vertical">
      <vscode-label for="reduce-prompt">Reduce prompt (<code>{responses}</code> takes the answers to merge; <code>{level}</code> the round)</vscode-label>
      <vscode-textarea id="reduce-prompt" rows="3" resize="vertical" monospace .value=${c.reducePrompt} ?invalid=${!ok}
        @input=${(e: Event) => app.setCompose({ reducePrompt: value(e) })}></vscode-textarea>
      ${ok
        ? html`<vscode-form-helper><span class="ok" id="reduce-check">✓ contains {responses}</span></vscode-form-helper>`
        : html`<vscode-form-helper><span class="error" id="reduce-check" role="alert">The reduce prompt must contain {responses}.</span></vscode-form-helper>`}
    </vscode-form-group>
    <vscode-form-group variant="vertical">
      <vscode-label for="fanin">Fan-in (answers merged per reduce prompt)</vscode-label>
      <vscode-textfield id="fanin" type="number" min="2" .value=${String(c.fanin)} @input=${(e: Event) => app.setCompose({ fanin: Number(value(e)) })}></vscode-textfield>
    </vscode-form-group>
  `;
}

function importDialog(app: App) {
  const d = app.state.importDialog;
  if (!d) return nothing;
  const rows = app.importRows();
  const table = d.result.kind === 'table' ? d.result : null;
  const current = app.state.ui.compose.prompts.length;
  return html`<section class="dialog" id="import-dialog" role="dialog" aria-label=${`Import ${d.result.name}`}>
    <h3>Import ${d.result.name}</h3>
    ${d.result.warnings.map((w) => html`<p class="warning">${w}</p>`)}
    ${table
      ? html`<vscode-form-group variant="vertical">
            <vscode-label for="import-column">Prompt column</vscode-label>
            <vscode-single-select
              id="import-column"
              .value=${d.column}
              @change=${(e: Event) => app.dispatch({ type: 'importDialog', dialog: { ...d, column: value(e) } })}
            >
              ${table.columns.map((col) => html`<vscode-option value=${col} ?selected=${col === d.column}>${col}</vscode-option>`)}
            </vscode-single-select>
          </vscode-form-group>
          <p class="help">
            Other columns go to each prompt's <code>input</code>: ${table.columns.filter((col) => col !== d.column).join(', ') || '(none)'}
          </p>`
      : nothing}
    <ol class="preview" aria-label="First prompts">
      ${rows.slice(0, 3).map((r) => html`<li>${oneLine(r.prompt, 160)}</li>`)}
    </ol>
    <div class="toolbar">
      <vscode-button id="import-replace" icon="check" ?disabled=${!rows.length} @click=${() => app.finishImport(false)}
        >${current ? 'Replace' : 'Import'} ${int(rows.length)} prompts</vscode-button
      >
      ${current
        ? html`<vscode-button id="import-append" secondary ?disabled=${!rows.length} @click=${() => app.finishImport(true)}>Append to the ${int(current)}</vscode-button>`
        : nothing}
      <vscode-button
        id="import-cancel"
        secondary
        @click=${() => app.dispatch({ type: 'importDialog', dialog: null })}
        >Cancel</vscode-button
      >
    </div>
  </section>`;
}

const ENDPOINT_ROWS = 100;

function endpointsPanel(app: App) {
  const c = app.state.ui.compose;
  const tags = endpointTags(app.state.endpoints);
  const chosen = matchingEndpoints(app.state.endpoints, c.tags);
  const health = swarmHealth(app.state.endpoints, c.tags);
  const chosenSet = new Set(chosen);
  // At most this many rows (the ones not up first): 1,000 rows redrawn with every frame of a run held it.
  const listed = app.state.endpoints.length <= ENDPOINT_ROWS ? app.state.endpoints : [...app.state.endpoints.filter((e) => e.status !== 'up'), ...app.state.endpoints.filter((e) => e.status === 'up')].slice(0, ENDPOINT_ROWS);
  const models = [...new Set(app.state.endpoints.map((e) => e.model).filter((m): m is string => !!m))].sort();
  const batchable = app.batchAllowed;
  // Help below the toggles names the pattern on show (a pipeline's is not "broadcast and tree-reduce").
  const patternName = PATTERNS.find((p) => p.id === c.pattern)?.label ?? c.pattern;
  return html`
    <h3>Endpoints</h3>
    <p id="endpoint-count">
      ${app.state.endpoints.length
        ? c.tags.length
          ? `${chosen.length} of ${app.state.endpoints.length} endpoints carry ${c.tags.join(' and ')}`
          : `All ${app.state.endpoints.length} endpoints`
        : app.state.initialized
          ? 'No endpoints.'
          : 'Waiting for the extension…'}${health.down.length ? html` · <span class="warning" id="endpoints-down">${health.down.length === health.chosen ? 'all down' : `${health.down.length} down`}</span>` : nothing}
    </p>
    ${tags.length
      ? html`<div class="tags" role="group" aria-label="Only endpoints with these tags">
          ${tags.map(
            (t) => html`<vscode-checkbox
              class="tag"
              data-tag=${t}
              .checked=${c.tags.includes(t)}
              @change=${(e: Event) => app.setCompose({ tags: checked(e) ? [...c.tags.filter((x) => x !== t), t] : c.tags.filter((x) => x !== t) })}
              >${t} (${matchingEndpoints(app.state.endpoints, [t]).length})</vscode-checkbox
            >`,
          )}
        </div>`
      : nothing}
    ${app.state.endpoints.length
      ? html`<vscode-collapsible title="Endpoint list" class="endpoint-list">
          <ul class="endpoints" id="endpoints">
            ${listed.map(
              (e) => html`<li data-status=${e.status} class=${chosenSet.has(e) ? '' : 'dim'}>
                <span class="dot" aria-hidden="true"></span><span class="ep-id">${e.id}</span> <span class="muted">${STATUS_LABELS[e.status]}${e.model ? ` · ${e.model}` : ''}</span>
                ${Object.entries(e.tags).map(([k, v]) => html` <span class="tag-chip">${k}=${v}</span>`)}
              </li>`,
            )}
          </ul>
          ${listed.length < app.state.endpoints.length
            ? html`<p class="muted" id="endpoints-more">… and ${int(app.state.endpoints.length - listed.length)} more (the Endpoints view lists every one).</p>`
            : nothing}
        </vscode-collapsible>`
      : nothing}
    <h3>Parameters</h3>
    <div class="params">
      <vscode-label for="model">Model</vscode-label>
      <vscode-single-select id="model" .value=${c.model} @change=${(e: Event) => app.setCompose({ model: value(e) })}>
        <vscode-option value="" ?selected=${c.model === ''}>${app.state.defaults.model ? `default (${app.state.defaults.model})` : 'default (first served)'}</vscode-option>
        ${models.map((m) => html`<vscode-option value=${m} ?selected=${c.model === m}>${m}</vscode-option>`)}
      </vscode-single-select>
      <vscode-label for="max-tokens">Max tokens</vscode-label>
      <vscode-textfield id="max-tokens" type="number" min=${LIMITS.maxTokens.min} placeholder=${app.state.defaults.maxTokens === null ? 'auto' : String(app.state.defaults.maxTokens)} .value=${c.maxTokens}
        @input=${(e: Event) => app.setCompose({ maxTokens: value(e) })}></vscode-textfield>
      <vscode-label for="temperature">Temperature</vscode-label>
      <vscode-textfield id="temperature" type="number" min=${LIMITS.temperature.min} max=${LIMITS.temperature.max} step="0.1" placeholder="server default" .value=${c.temperature}
        @input=${(e: Event) => app.setCompose({ temperature: value(e) })}></vscode-textfield>
    </div>
    <vscode-collapsible id="more-params" title="More parameters" description="system prompt, top_p, seed, stop, n, extra fields" ?open=${Boolean(c.system || c.topP || c.seed || c.stopText || c.n || c.extraText)}>
      <div class="params">
        <vscode-label for="system">System prompt</vscode-label>
        <vscode-textarea id="system" rows="2" placeholder="none (chat path only; batching sends raw prompts)" .value=${c.system} @input=${(e: Event) => app.setCompose({ system: value(e) })}></vscode-textarea>
        <vscode-label for="top-p">top_p</vscode-label>
        <vscode-textfield id="top-p" type="number" min=${LIMITS.topP.min} max=${LIMITS.topP.max} step="0.05" placeholder="server default" .value=${c.topP} @input=${(e: Event) => app.setCompose({ topP: value(e) })}></vscode-textfield>
        <vscode-label for="seed">Seed</vscode-label>
        <vscode-textfield id="seed" type="number" placeholder="none" .value=${c.seed} @input=${(e: Event) => app.setCompose({ seed: value(e) })}></vscode-textfield>
        <vscode-label for="stop">Stop sequences</vscode-label>
        <vscode-textarea id="stop" rows="2" placeholder="one per line" .value=${c.stopText} @input=${(e: Event) => app.setCompose({ stopText: value(e) })}></vscode-textarea>
        <vscode-label for="n">n</vscode-label>
        <vscode-textfield id="n" type="number" min=${LIMITS.n.min} max=${LIMITS.n.max} placeholder="1" .value=${c.n} @input=${(e: Event) => app.setCompose({ n: value(e) })}></vscode-textfield>
        <vscode-label for="extra">Extra fields</vscode-label>
        <vscode-textarea id="extra" rows="2" placeholder='JSON, e.g. {"reasoning_effort": "low"}' .value=${c.extraText} @input=${(e: Event) => app.setCompose({ extraText: value(e) })}></vscode-textarea>
      </div>
    </vscode-collapsible>
    <vscode-checkbox id="batch" .checked=${batchable && c.batch} ?disabled=${!batchable || c.compare} @change=${(e: Event) => app.setCompose({ batch: checked(e) })}
      >Batch prompting</vscode-checkbox
    >
    <p class="help">
      ${batchable
        ? 'On: one /v1/completions request per endpoint carrying its list of prompts. Off: one /v1/chat/completions request per prompt.'
        : `${patternName} runs on the chat path, one request per prompt.`}
    </p>
    <vscode-checkbox id="stream" .checked=${batchable && c.stream} ?disabled=${!batchable} @change=${(e: Event) => app.setCompose({ stream: checked(e) })}>Stream answers</vscode-checkbox>
    <p class="help">
      ${batchable
        ? "Each answer arrives as it finishes, batched too: progress moves per prompt and Cancel keeps every finished answer. Measures time to first token (TTFT), time per output token (TPOT) and inter-token latency (ITL)."
        : `${patternName} is not streamed.`}
    </p>
    <vscode-checkbox id="compare-toggle" .checked=${batchable && c.compare} ?disabled=${!batchable} @change=${(e: Event) => app.setCompose({ compare: checked(e) })}
      >Run both and compare (batched vs individual)</vscode-checkbox
    >
    ${batchable && c.compare
      ? html`<div class="params">
            <vscode-label for="rounds">Rounds (ABBA…)</vscode-label>
            <vscode-textfield id="rounds" type="number" min=${COMPARE_ROUNDS.min} max=${COMPARE_ROUNDS.max} .value=${String(c.rounds)} @input=${(e: Event) => app.setCompose({ rounds: Number(value(e)) })}></vscode-textfield>
          </div>
          <vscode-checkbox id="cache-salt" .checked=${c.cacheSalt} @change=${(e: Event) => app.setCompose({ cacheSalt: checked(e) })}
            >Salt vLLM's prefix cache per arm (<code>cache_salt</code>)</vscode-checkbox
          >`
      : nothing}
  `;
}

export function composeView(app: App, s: ComposeSummary) {
  const c = app.state.ui.compose;
  const pattern = PATTERNS.find((p) => p.id === c.pattern)!;
  return html`<div class="compose" id="compose">
    <section class="col main" aria-label="Prompts">
      ${importDialog(app)}
      <!-- Native radios: a screen reader announces them as radios in a group named Pattern (vscode-radio is a checkbox inside). -->
      <fieldset class="radios pattern-radios" id="pattern" @change=${(e: Event) => app.setCompose({ pattern: (e.target as Field).value as Pattern })}>
        <legend class="h3">Pattern</legend>
        ${PATTERNS.map((p) => html`<label><input type="radio" name="pattern" value=${p.id} .checked=${c.pattern === p.id} />${p.label}</label>`)}
      </fieldset>
      <p class="help">${pattern.help}</p>
      ${routeField(app)}
      ${c.pattern === 'scatter' ? promptSet(app) : nothing} ${c.pattern === 'map' ? templateFields(app, false) : nothing}
      ${c.pattern === 'broadcast' ? onePrompt(app, 'broadcast-prompt', 'Prompt (every chosen endpoint answers it)') : nothing}
      ${c.pattern === 'tree-reduce' ? reduceFields(app) : nothing}
      ${c.pattern === 'fan-out-fan-in' ? onePrompt(app, 'fanout-prompt', 'Prompt (every worker answers it)') : nothing} ${portedFields(app)}
    </section>
    <section class="col side" aria-label="Endpoints and parameters">
      ${endpointsPanel(app)}
      <div class="summary" id="compose-summary" role="status">
        <div><b id="prompt-count">${int(s.count)}</b> prompt${s.count === 1 ? '' : 's'}${c.pattern === 'tree-reduce' ? ' (leaves)' : ''} · ~<b id="token-estimate">${int(s.tokens)}</b> tokens in (chars / 4)</div>
        ${s.problem ? html`<div class="error" id="compose-problem">${s.problem}</div>` : nothing}
        ${s.warnings.map((w) => html`<div class="warning">${w}</div>`)}
      </div>
    </section>
  </div>`;
}
