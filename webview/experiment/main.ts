/**
 * The experiment view's entry (bundled to dist/webview/experiment.js), under the panel's CSP. It says
 * `ready`, then draws every `experiment` message the host sends (protocol.ts, Experiments).
 */
import './experiment.css';
import '../charts/chart.ts';
import type { ExperimentHostMessage, ExperimentViewMessage } from '../../src/panel/experiment-protocol.ts';
import { ExperimentViewer } from './view.ts';

const vscode = acquireVsCodeApi();
const post = (m: ExperimentViewMessage) => vscode.postMessage(m);
const viewer = new ExperimentViewer(document.getElementById('app')!, () => post({ type: 'stop' }));
window.addEventListener('message', (e: MessageEvent<ExperimentHostMessage>) => {
  if (e.data?.type === 'experiment') viewer.show(e.data.view);
});
// A theme change swaps the body's class and the --vscode-* colours: the charts are drawn again in the new ones.
new MutationObserver(() => viewer.render()).observe(document.body, { attributes: true, attributeFilter: ['class'] });
post({ type: 'ready' });
