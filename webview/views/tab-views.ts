/**
 * The tabs' views kept between frames: the tab on show is drawn every frame, a hidden one only when
 * it is out of date, and then off the frame (see tabView).
 */
import type { PanelApp as App } from '../panel-app.ts';
import type { RunView, Tab } from '../state.ts';
import type { ViewState } from '../view-state.ts';

/** What a run's progress changes in its view (the counts and the clock); everything else changes only when the run does. */
const PROGRESS: ReadonlySet<string> = new Set(['done', 'ok', 'failed', 'total', 'elapsedMs', 'servers'] satisfies Array<keyof RunView>);

/** `b` differs from `a` only by a run's progress (its counts, clock and the rows its store took in). */
function onlyProgressSince(a: ViewState, b: ViewState): boolean {
  for (const k of Object.keys(b) as Array<keyof ViewState>) if (k !== 'run' && a[k] !== b[k]) return false;
  if (a.run === b.run) return true;
  if (!a.run || !b.run) return false;
  for (const k of Object.keys(b.run) as Array<keyof RunView>) if (!PROGRESS.has(k) && a.run[k] !== b.run[k]) return false;
  return Object.keys(a.run).length === Object.keys(b.run).length;
}

/**
 * Each tab's view as last drawn, and the state it was drawn from. A hidden tab is not drawn again
 * for a run's progress (the same template values: nothing of it is made or written). When something
 * else changed, it is drawn again off the frame: one hidden tab per idle moment, after the tab on show
 * (a run's start changes every tab; drawing them all in its first frame cost that frame the most).
 * At 1,000 endpoints and 10,000 prompts, making every tab's view on every frame of a run (Compose's
 * endpoint figures, History, the comparison) cost the frame more than the tab on show did.
 */
const drawn = new WeakMap<App, Map<Tab, { state: ViewState; view: unknown }>>();
/** The hidden tab an idle moment draws now. */
let catchingUp: Tab | null = null;
const waiting = new WeakSet<App>();

export function tabView(app: App, tab: Tab, view: () => unknown): unknown {
  let views = drawn.get(app);
  if (!views) drawn.set(app, (views = new Map()));
  const last = views.get(tab);
  const stale = !last || !onlyProgressSince(last.state, app.state);
  if (app.state.ui.tab === tab || !last || (stale && catchingUp === tab)) views.set(tab, { state: app.state, view: view() });
  else if (stale) catchUpLater(app, tab);
  return views.get(tab)!.view;
}

/** Draws `tab` (and then any other hidden tab still out of date) when the page is idle. */
function catchUpLater(app: App, tab: Tab): void {
  if (waiting.has(app)) return;
  waiting.add(app);
  requestIdleCallback(
    () => {
      waiting.delete(app);
      catchingUp = tab;
      try {
        app.renderNow();
      } finally {
        catchingUp = null;
      }
    },
    { timeout: 250 },
  );
}
