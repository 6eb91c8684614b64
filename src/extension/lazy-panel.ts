import type * as vscode from 'vscode';
import type { PanelHost } from './panel/panel-host.ts';
import type { Services } from './services.ts';

/** The panel's host, loaded and made on first use: the panel, its runs and its history are no part of activation. */
export class LazyPanel implements vscode.Disposable {
  private loading: Promise<PanelHost> | undefined;
  private made: PanelHost | undefined;

  constructor(private readonly services: Services) {}

  get(): Promise<PanelHost> {
    this.loading ??= import('./on-demand.ts').then(({ PanelHost }) => (this.made = new PanelHost(this.services)));
    return this.loading;
  }

  /** The host, if something needed it already. */
  get loaded(): PanelHost | undefined {
    return this.made;
  }

  dispose(): void {
    this.made?.dispose();
  }
}
