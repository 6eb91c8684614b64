/**
 * "Rerun failed" and "Run remaining" for a finished run, when it has such prompts: labelled in
 * Results, icons (named by their title and aria-label) in History's narrow actions cell.
 */
import { html, nothing } from 'lit';
import { CONTINUE_HELP, type ContinueWhat } from '../lib/continue.ts';
import { int } from '../lib/format.ts';
import type { PanelApp as App } from '../panel-app.ts';

const LABEL: Record<ContinueWhat, string> = { failed: 'Rerun failed', remaining: 'Run remaining' };
const ICON: Record<ContinueWhat, string> = { failed: 'refresh', remaining: 'debug-continue' };

export function continueButtons(app: App, id: string, counts: Record<ContinueWhat, number>, compact = false) {
  return (['failed', 'remaining'] as const).map((what) => {
    if (!counts[what]) return nothing;
    const label = `${LABEL[what]} (${int(counts[what])})`;
    const run = () => app.continueRun(id, what);
    return compact
      ? html`<vscode-button secondary icon=${ICON[what]} data-action=${`continue-${what}`} title=${`${label}: ${CONTINUE_HELP[what]}`} aria-label=${label} ?disabled=${app.running} @click=${run}></vscode-button>`
      : html`<vscode-button secondary icon=${ICON[what]} data-action=${`continue-${what}`} title=${CONTINUE_HELP[what]} ?disabled=${app.running} @click=${run}>${label}</vscode-button>`;
  });
}
