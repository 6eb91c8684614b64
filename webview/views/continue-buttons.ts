/** "Rerun failed" and "Run remaining" for a finished run (Results and History), when it has such prompts. */
import { html, nothing } from 'lit';
import { CONTINUE_HELP, type ContinueWhat } from '../lib/continue.ts';
import { int } from '../lib/format.ts';
import type { PanelApp as App } from '../panel-app.ts';

const LABEL: Record<ContinueWhat, string> = { failed: 'Rerun failed', remaining: 'Run remaining' };

export function continueButtons(app: App, id: string, counts: Record<ContinueWhat, number>) {
  return (['failed', 'remaining'] as const).map((what) =>
    counts[what]
      ? html`<vscode-button secondary icon=${what === 'failed' ? 'refresh' : 'debug-continue'} data-action=${`continue-${what}`} title=${CONTINUE_HELP[what]} ?disabled=${app.running}
          @click=${() => app.continueRun(id, what)}>${LABEL[what]} (${int(counts[what])})</vscode-button
        >`
      : nothing,
  );
}
